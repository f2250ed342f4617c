"""Switch host keys checked as hosts' are, on real SSH: an emulated switch (racfg_lab.switchcli on
127.0.0.1) reached by racfg's switch session (netmiko), by racfg's host session (paramiko) and by
OpenSSH, each reading the same known_hosts files and coming to the same verdict.

The lab-level promises (an unknown lab switch is exit 3 of ``racfg validate`` and ``racfg hostkey
accept`` then lets it through; a re-keyed one is refused) are in tests/switches/test_switch_lab.py."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from racfg.ssh.host_sessions import HostSession, HostSshError, SshEndpoint
from racfg.ssh.hostkeys import HostKeyError, Peer, accept, read_key
from racfg.ssh.known_hosts import KnownHosts, host_label
from racfg.switches import SwitchAuthError, SwitchTarget, read_facts
from racfg_lab.switches import ensure_host_key
from tests.switches.conftest import PASSWORD


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """A HOME of the test's own: the user's known_hosts racfg reads (and accept writes) is in it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def files(tmp_path: Path, text: str) -> KnownHosts:
    """A site known_hosts holding ``text``; no system file, so the machine's own cannot interfere."""
    path = tmp_path / "site_known_hosts"
    path.write_text(text)
    return KnownHosts(site=path, system_files=())


def other_key(tmp_path: Path) -> str:
    """Another switch's ed25519 public key: ``type base64``."""
    return ensure_host_key(tmp_path / "elsewhere")


def target(sw, known: KnownHosts, password: str = PASSWORD) -> SwitchTarget:
    return SwitchTarget(sw.name, sw.platform, "127.0.0.1", sw.port, "admin", password, timeout=5, known_hosts=known)


def test_a_known_key_logs_in_and_an_unknown_one_is_refused_before_the_password(switch_factory, tmp_path):
    sw = switch_factory("onyx")
    assert read_facts(target(sw, sw.known_hosts)).interfaces  # the switch's own key: in
    label = host_label("127.0.0.1", sw.port)
    presented = read_key(Peer("switch", sw.name, "127.0.0.1", sw.port), sw.known_hosts, 5)
    # a wrong password too: the refusal comes before any login is tried (else: an authentication error)
    with pytest.raises(HostKeyError) as err:
        read_facts(target(sw, files(tmp_path, ""), password="wrong"))
    message = str(err.value)
    assert message.startswith(f"switch sw1: host key of {label} is not known: ssh-ed25519 {presented.fingerprint}")
    assert f"racfg hostkey accept INVENTORY sw1 --fingerprint {presented.fingerprint}" in message
    assert str(tmp_path / "site_known_hosts") in message and err.value.exit_code == 3
    with pytest.raises(SwitchAuthError):  # the same switch, known: the password is what fails
        read_facts(target(sw, sw.known_hosts, password="wrong"))


def test_a_changed_key_is_refused_naming_both_fingerprints(switch_factory, tmp_path):
    sw = switch_factory("eos")
    label = host_label("127.0.0.1", sw.port)
    known = files(tmp_path, f"{label} {other_key(tmp_path)}\n")
    presented = read_key(Peer("switch", sw.name, "127.0.0.1", sw.port), sw.known_hosts, 5)
    with pytest.raises(HostKeyError) as err:
        read_facts(target(sw, known))
    [old] = known.entries(label)
    assert (f"host key of {label} does not match the known one: presented ssh-ed25519 {presented.fingerprint}, "
            f"known ssh-ed25519 {old.fingerprint} ({tmp_path / 'site_known_hosts'}:1)") in str(err.value)
    assert old.fingerprint != presented.fingerprint


def test_a_switch_without_a_key_of_the_known_type_shows_the_key_it_has(switch_factory, tmp_path):
    """The files know an ECDSA key for it; the switch has only ed25519: the connection offers the known
    type only (as OpenSSH prefers it), fails, and the refusal names the key the switch does have."""
    sw = switch_factory("onyx")
    directory = tmp_path / "ecdsa"
    directory.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-N", "", "-f", str(directory / "key")], check=True)
    ecdsa = " ".join((directory / "key.pub").read_text().split()[:2])
    known = files(tmp_path, f"{host_label('127.0.0.1', sw.port)} {ecdsa}\n")
    with pytest.raises(HostKeyError, match=r"is not known: ssh-ed25519 SHA256:\S+ .*other key types for it: "
                                           r"ecdsa-sha2-nistp256"):
        read_facts(target(sw, known))


def test_accept_records_only_the_fingerprint_read_out_of_band(switch_factory, tmp_path, home):
    sw = switch_factory("onyx")
    peer = Peer("switch", sw.name, "127.0.0.1", sw.port)
    users = KnownHosts(system_files=())  # the user's files, in the test's HOME
    real = read_key(peer, sw.known_hosts, 5).fingerprint
    wrong = real[:-1] + ("A" if real[-1] != "A" else "B")  # one character off
    with pytest.raises(HostKeyError, match=re.escape(f"presents ssh-ed25519 {real}, not {wrong}: not recorded")):
        accept(peer, users, wrong, timeout=5)
    assert not (home / ".ssh" / "known_hosts").exists()
    said = accept(peer, users, real, timeout=5)
    assert said == f"switch sw1: recorded ssh-ed25519 {real} for [127.0.0.1]:{sw.port} in {home}/.ssh/known_hosts"
    assert read_facts(target(sw, users)).interfaces
    assert "already known" in accept(peer, users, real, timeout=5)
    changed = files(tmp_path, f"{host_label('127.0.0.1', sw.port)} {other_key(tmp_path)}\n")
    with pytest.raises(HostKeyError, match="does not match the known one"):
        accept(peer, changed, real, timeout=5)
    assert "ssh-ed25519" not in (tmp_path / "site_known_hosts").read_text().split("\n", 1)[1]


def ssh_verdict(port: int, known: KnownHosts) -> str:
    """What OpenSSH makes of the switch's key with the options racfg gives deploy's ssh."""
    proc = subprocess.run(["ssh", "-p", str(port), "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
                           *known.openssh_options(), "admin@127.0.0.1", "true"],
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    if "Host key verification failed" in proc.stderr:
        return "refused"
    assert "Permission denied" in proc.stderr, proc.stderr  # past the host key, no password in batch mode
    return "known"


def host_verdict(port: int, known: KnownHosts) -> str:
    """What racfg's host session (paramiko: validate, smoke, the site lock) makes of it."""
    session = HostSession(SshEndpoint("sw1", "127.0.0.1", "admin", port, known_hosts=known))
    with pytest.raises(HostSshError) as err:
        session.connect()  # the switch takes no key: past the host key, the login fails
    return "refused" if "host key" in str(err.value) else "known"


def switch_verdict(sw, known: KnownHosts) -> str:
    try:
        read_facts(target(sw, known))
    except HostKeyError:
        return "refused"
    return "known"


@pytest.mark.parametrize("case", ["known", "unknown", "changed", "hashed", "known to the provider"])
def test_openssh_paramiko_and_netmiko_read_the_same_files_alike(switch_factory, tmp_path, case):
    sw = switch_factory("onyx")
    label = host_label("127.0.0.1", sw.port)
    own = sw.known_hosts_file.read_text()
    text = {"known": own, "unknown": "", "changed": f"{label} {other_key(tmp_path)}\n", "hashed": own,
            "known to the provider": ""}[case]
    known = files(tmp_path, text)
    if case == "hashed":
        subprocess.run(["ssh-keygen", "-H", "-f", str(known.site)], check=True, capture_output=True)
        assert label not in known.site.read_text()
    if case == "known to the provider":
        known = KnownHosts(site=known.site, provider=sw.known_hosts_file, system_files=())
    expected = "refused" if case in ("unknown", "changed") else "known"
    assert {"openssh": ssh_verdict(sw.port, known), "paramiko": host_verdict(sw.port, known),
            "netmiko": switch_verdict(sw, known)} == dict.fromkeys(["openssh", "paramiko", "netmiko"], expected)


def test_deploys_openssh_refuses_an_unknown_key_in_the_words_racfg_adds_its_hint_to(switch_factory, tmp_path):
    """ansible-playbook with the options deploy gives it (racfg.render.connection_options): a machine
    whose key the files do not list is unreachable with OpenSSH's "Host key verification failed",
    which the deploy's tracker completes with the racfg hostkey commands (racfg.playbook.events)."""
    import sys

    from labsupport import operator_env

    from racfg.connection import NO_OVERRIDES
    from racfg.playbook.events import HOST_KEY_REFUSED
    from racfg.render import connection_options

    sw = switch_factory("onyx")
    (tmp_path / "hosts.yml").write_text(f"all:\n  hosts:\n    sw1:\n      ansible_host: 127.0.0.1\n"
                                        f"      ansible_port: {sw.port}\n      ansible_user: admin\n")
    (tmp_path / "play.yml").write_text("- hosts: all\n  gather_facts: false\n  tasks:\n"
                                       "    - name: Reach\n      ansible.builtin.ping:\n")
    env = operator_env(ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_SSH_CONTROL_PATH_DIR=str(tmp_path / "cp"),
                       HOME=str(tmp_path / "home"))
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(tmp_path / "hosts.yml"),
                           *connection_options(NO_OVERRIDES), str(tmp_path / "play.yml")],
                          capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert "UNREACHABLE" in proc.stdout and HOST_KEY_REFUSED[0] in proc.stdout, proc.stdout[-2000:]
