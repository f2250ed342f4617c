"""The host key policy (racfg.ssh.known_hosts) on real keys and real known_hosts files: OpenSSH's
verdict (known, unknown, changed, revoked) over several files, hashed entries, ``[host]:port``
entries and patterns; where a new key is recorded; the files OpenSSH is told to read.

Keys are made with ssh-keygen, hashed entries with ``ssh-keygen -H``, as an operator's are."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest

from racfg.ssh.known_hosts import KnownHosts, fingerprint, host_label, key_line

ADDR = "198.18.0.2"


def make_key(directory: Path, name: str, kind: str = "ed25519") -> tuple[str, bytes]:
    path = directory / name
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(path)], check=True, capture_output=True)
    keytype, data = Path(f"{path}.pub").read_text().split()[:2]
    return keytype, base64.b64decode(data)


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict[str, tuple[str, bytes]]:
    """name -> (key type, public key blob): the switch's key, another ed25519 key, an ECDSA key."""
    directory = tmp_path_factory.mktemp("keys")
    return {"switch": make_key(directory, "switch"), "other": make_key(directory, "other"),
            "ecdsa": make_key(directory, "ecdsa", "ecdsa")}


def line(keys: dict, key: str, names: str = ADDR, marker: str = "") -> str:
    keytype, blob = keys[key]
    return f"{marker + ' ' if marker else ''}{names} {keytype} {base64.b64encode(blob).decode()}\n"


def hashed(keys: dict, key: str, name: str, tmp: Path) -> str:
    """The line for ``name`` as ``ssh-keygen -H`` hashes it (HashKnownHosts)."""
    path = tmp / "to-hash"
    path.write_text(line(keys, key, name))
    subprocess.run(["ssh-keygen", "-H", "-f", str(path)], check=True, capture_output=True)
    text = path.read_text()
    assert text.startswith("|1|") and name not in text
    return text


# (case, {file: [(key, names, marker)...]}, port, presented key, status, lines that say so)
CASES = [
    ("known", {"user": [("switch", ADDR, "")]}, 22, "switch", "known", ["user:1"]),
    ("unknown: no file lists it", {}, 22, "switch", "unknown", []),
    ("unknown: another host's line", {"user": [("switch", "198.18.0.3", "")]}, 22, "switch", "unknown", []),
    ("changed: another key of its type", {"user": [("other", ADDR, "")]}, 22, "switch", "changed", ["user:1"]),
    ("unknown: only another type is known", {"user": [("ecdsa", ADDR, "")]}, 22, "switch", "unknown", ["user:1"]),
    ("known: one of several keys of its type", {"user": [("other", ADDR, ""), ("switch", ADDR, "")]}, 22, "switch",
     "known", ["user:2"]),
    ("[host]:port known on that port", {"user": [("switch", f"[{ADDR}]:2222", "")]}, 2222, "switch", "known",
     ["user:1"]),
    ("[host]:port is not port 22", {"user": [("switch", f"[{ADDR}]:2222", "")]}, 22, "switch", "unknown", []),
    ("a bare address is port 22 only", {"user": [("switch", ADDR, "")]}, 2222, "switch", "unknown", []),
    ("several names on a line", {"user": [("switch", f"sw1,{ADDR}", "")]}, 22, "switch", "known", ["user:1"]),
    ("a pattern", {"user": [("switch", "198.18.0.*", "")]}, 22, "switch", "known", ["user:1"]),
    ("a negated pattern excludes", {"user": [("switch", f"!{ADDR},198.18.0.*", "")]}, 22, "switch", "unknown", []),
    ("the provider's file knows it, a stale user line does not matter",
     {"provider": [("switch", ADDR, "")], "user": [("other", ADDR, "")]}, 22, "switch", "known", ["provider:1"]),
    ("the system's file is read", {"global": [("switch", ADDR, "")]}, 22, "switch", "known", ["global:1"]),
    ("the site's file replaces the user's", {"site": [("other", ADDR, "")], "user": [("switch", ADDR, "")]}, 22,
     "switch", "changed", ["site:1"]),
    ("revoked", {"global": [("switch", "*", "@revoked")], "user": [("switch", ADDR, "")]}, 22, "switch", "revoked",
     ["global:1"]),
    ("a certificate authority line is not a host key", {"user": [("switch", ADDR, "@cert-authority")]}, 22,
     "switch", "unknown", []),
]


@pytest.mark.parametrize(("files", "port", "presented", "status", "where"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_verdict(keys, tmp_path, monkeypatch, files, port, presented, status, where):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    paths = {"user": home / ".ssh" / "known_hosts", "site": tmp_path / "site_known_hosts",
             "provider": tmp_path / "lab_known_hosts", "global": tmp_path / "ssh_known_hosts"}
    for name, lines in files.items():
        paths[name].parent.mkdir(parents=True, exist_ok=True)
        paths[name].write_text("".join(line(keys, k, n, m) for k, n, m in lines))
    known = KnownHosts(site=paths["site"] if "site" in files else None, provider=paths["provider"],
                       system_files=(paths["global"],))
    keytype, blob = keys[presented]
    verdict = known.verdict(host_label(ADDR, port), keytype, blob)
    assert verdict.status == status
    said = [verdict.entry] if verdict.entry else list(verdict.listed)
    names = {v: k for k, v in paths.items()}
    assert [f"{names[e.file]}:{e.line}" for e in said] == where
    assert verdict.fingerprint == fingerprint(blob)


def test_hashed_entries_match_as_openssh_hashes_them(keys, tmp_path):
    known_file = tmp_path / "known_hosts"
    known_file.write_text(hashed(keys, "switch", ADDR, tmp_path) + hashed(keys, "ecdsa", f"[{ADDR}]:2222", tmp_path))
    known = KnownHosts(site=known_file, system_files=())
    assert known.verdict(ADDR, *keys["switch"]).status == "known"
    assert known.verdict(ADDR, *keys["other"]).status == "changed"
    assert known.verdict("198.18.0.3", *keys["switch"]).status == "unknown"
    assert known.verdict(f"[{ADDR}]:2222", *keys["ecdsa"]).status == "known"
    assert known.known_types(f"[{ADDR}]:2222") == {"ecdsa-sha2-nistp256"}
    # what OpenSSH itself finds for the address in the same file
    found = subprocess.run(["ssh-keygen", "-F", ADDR, "-f", str(known_file)], capture_output=True, text=True)
    assert found.returncode == 0 and "ssh-ed25519" in found.stdout


def test_malformed_lines_are_skipped_and_a_changed_file_is_read_again(keys, tmp_path):
    known_file = tmp_path / "known_hosts"
    keytype, blob = keys["switch"]
    known_file.write_text(f"# comment\n\n{ADDR} ssh-ed25519\n{ADDR} ssh-rsa {base64.b64encode(blob).decode()}\n"
                          f"{ADDR} {keytype} not-base64!\n")
    known = KnownHosts(site=known_file, system_files=())
    assert known.verdict(ADDR, keytype, blob).status == "unknown"  # the ssh-rsa line names the wrong type
    known_file.write_text(known_file.read_text() + line(keys, "switch") + "x" * 10 + "\n")
    assert known.verdict(ADDR, keytype, blob).status == "known"


def test_an_unreadable_file_raises_rather_than_reads_as_empty(keys, tmp_path):
    (tmp_path / "known_hosts").mkdir()  # a directory where the file should be: read fails, even as root
    with pytest.raises(OSError):
        KnownHosts(site=tmp_path / "known_hosts", system_files=()).verdict(ADDR, *keys["switch"])


def test_record_appends_to_the_site_file_or_the_users_and_never_over_a_known_key(keys, tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    users = KnownHosts(system_files=())
    assert users.accept_file == home / ".ssh" / "known_hosts"
    path = users.record(ADDR, 2222, *keys["switch"])
    assert path == users.accept_file and path.read_text() == key_line(ADDR, 2222, *keys["switch"])
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert users.verdict(f"[{ADDR}]:2222", *keys["switch"]).status == "known"
    with pytest.raises(ValueError, match="changed"):
        users.record(ADDR, 2222, *keys["other"])
    site_file = tmp_path / "site" / "known_hosts"
    site_file.parent.mkdir()
    site_file.write_text("# the site's keys, no newline at the end")
    site = KnownHosts(site=site_file, system_files=())
    assert site.accept_file == site_file
    site.record(ADDR, 22, *keys["switch"])
    assert site_file.read_text().splitlines()[1] == key_line(ADDR, 22, *keys["switch"]).strip()
    assert path.read_text().count("\n") == 1  # the user's file was left alone


def test_openssh_is_told_to_read_the_same_files(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home = tmp_path / "home" / ".ssh"
    known = KnownHosts(provider=Path("/lab/known"), system_files=(Path("/etc/ssh/ssh_known_hosts"),))
    options = known.openssh_options()
    assert options == ["-o", f"UserKnownHostsFile=/lab/known {home}/known_hosts {home}/known_hosts2",
                       "-o", "GlobalKnownHostsFile=/etc/ssh/ssh_known_hosts", "-o", "StrictHostKeyChecking=yes"]
    site = KnownHosts(site=Path("/site/known_hosts")).openssh_options()
    assert site[1] == "UserKnownHostsFile=/site/known_hosts"
    assert site[3] == "GlobalKnownHostsFile=/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2"
    from racfg.errors import UsageError

    with pytest.raises(UsageError, match="spaces"):
        KnownHosts(site=Path("/my sites/known_hosts")).openssh_options()
