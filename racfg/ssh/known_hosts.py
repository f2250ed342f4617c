"""Host keys: which keys racfg trusts for a site's hosts and switches, and the one verdict every SSH
connection it makes is held to (paramiko for hosts and the site lock, netmiko for switches, also
inside the switch role's module, and OpenSSH under Ansible, whose options name the same files).

A machine on the management path that answers in a switch's place would get its admin password;
one in a host's place, root's commands. So a key is checked as OpenSSH checks it with
``StrictHostKeyChecking=yes``, against the files OpenSSH reads:

- the user's ``~/.ssh/known_hosts`` and ``~/.ssh/known_hosts2`` (``~`` is ``$HOME``; racfg hands
  OpenSSH the expanded paths, so both read the same files), or, when the inventory names one,
  the site's file (``site.known_hosts``) in their place, as OpenSSH's ``UserKnownHostsFile``;
- ``/etc/ssh/ssh_known_hosts`` and ``/etc/ssh/ssh_known_hosts2``;
- a provider's file (the lab's, ``ConnectionOverrides.known_hosts``) besides them.

The verdict is OpenSSH's: a key listed for the host in any of them is known; a key that is not,
where a key of the same type is listed, has changed; otherwise it is unknown; a key listed under
``@revoked`` is refused. Entries may be hashed (``|1|salt|hash``, ``HashKnownHosts``), name
``[host]:port`` for a port other than 22, and use OpenSSH's ``*``/``?``/``!`` patterns.
``@cert-authority`` lines are not used: racfg does not accept host certificates.

Nothing here ever adds or replaces a key by itself: ``record`` appends one only for ``racfg
hostkey accept``, after the operator confirmed its fingerprint, and never over a different one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from racfg.errors import UsageError

USER_FILES = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")  # OpenSSH's default UserKnownHostsFile
GLOBAL_FILES = (Path("/etc/ssh/ssh_known_hosts"), Path("/etc/ssh/ssh_known_hosts2"))  # ... GlobalKnownHostsFile
# The host key algorithms that make a server present a key of each type (what a connection offers,
# so that a host known by one type presents that one, as OpenSSH orders HostKeyAlgorithms).
ALGORITHMS = {
    "ssh-ed25519": ("ssh-ed25519",),
    "ecdsa-sha2-nistp256": ("ecdsa-sha2-nistp256",),
    "ecdsa-sha2-nistp384": ("ecdsa-sha2-nistp384",),
    "ecdsa-sha2-nistp521": ("ecdsa-sha2-nistp521",),
    "ssh-rsa": ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"),
}
FINGERPRINT = re.compile(r"^SHA256:[A-Za-z0-9+/]{43}$")

Status = Literal["known", "unknown", "changed", "revoked"]


def fingerprint(blob: bytes) -> str:
    """OpenSSH's fingerprint of a public key blob: ``SHA256:`` and the unpadded base64 digest."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def host_label(host: str, port: int) -> str:
    """The name a key is listed under: the address, or ``[address]:port`` for a port other than 22."""
    return host if port == 22 else f"[{host}]:{port}"


def key_line(host: str, port: int, keytype: str, blob: bytes) -> str:
    return f"{host_label(host, port)} {keytype} {base64.b64encode(blob).decode()}\n"


def offering(keytypes: set[str]) -> dict[str, list[str]] | None:
    """paramiko's ``disabled_algorithms`` under which a server can present only keys of ``keytypes``
    (None: no limit, for no type or none paramiko speaks)."""
    wanted = {a for t in keytypes for a in ALGORITHMS.get(t, ())}
    if not wanted:
        return None
    return {"keys": sorted({a for algs in ALGORITHMS.values() for a in algs} - wanted)}


def _pattern(text: str) -> re.Pattern[str]:
    """OpenSSH's wildcard pattern (``*``, ``?``; nothing else is special, brackets included)."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in text) + r"\Z")


@dataclass(frozen=True)
class Entry:
    """One key line of a known_hosts file."""

    file: Path
    line: int
    marker: str  # "", "@revoked" or "@cert-authority"
    names: str  # the hostnames field as written (patterns, or one hashed name)
    keytype: str
    blob: bytes

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.blob)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def matches(self, label: str) -> bool:
        """Whether the line lists ``label`` (OpenSSH's match_hostname: a negated pattern that
        matches excludes the line, whatever else matches)."""
        label = label.lower()
        if self.names.startswith("|1|"):
            parts = self.names.split("|")
            try:
                salt, digest = base64.b64decode(parts[2], validate=True), base64.b64decode(parts[3], validate=True)
            except (IndexError, ValueError):
                return False
            return hmac.compare_digest(hmac.new(salt, label.encode(), hashlib.sha1).digest(), digest)
        found = False
        for pattern in self.names.lower().split(","):
            negated = pattern.startswith("!")
            if _pattern(pattern.removeprefix("!")).match(label):
                if negated:
                    return False
                found = True
        return found


def parse_line(text: str, file: Path, number: int) -> Entry | None:
    """A key line, or None for a comment, a blank line or one OpenSSH would skip as malformed."""
    fields = text.split()
    if not fields or fields[0].startswith("#"):
        return None
    marker = fields.pop(0) if fields[0].startswith("@") else ""
    if len(fields) < 3 or marker not in ("", "@revoked", "@cert-authority"):
        return None
    names, keytype, data = fields[:3]
    try:
        blob = base64.b64decode(data, validate=True)
    except ValueError:
        return None
    size = int.from_bytes(blob[:4], "big")
    if blob[4:4 + size] != keytype.encode():  # the key's own type must be the one the line names
        return None
    return Entry(file, number, marker, names, keytype, blob)


_cache: dict[Path, tuple[tuple[int, int], list[Entry]]] = {}
_cache_lock = threading.Lock()


def read_entries(path: Path) -> list[Entry]:
    """A file's key lines; a missing file has none (as for OpenSSH). Re-read when it changes.

    Raises OSError when the file exists but cannot be read: the caller refuses the connection
    rather than judge a key on part of what it should trust (a guard that cannot read fails closed).
    """
    try:
        stat = path.stat()
    except FileNotFoundError:
        return []
    stamp = (stat.st_mtime_ns, stat.st_size)
    with _cache_lock:
        cached = _cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
    lines = path.read_text(errors="replace").splitlines()
    entries = [e for n, text in enumerate(lines, 1) if (e := parse_line(text, path, n)) is not None]
    with _cache_lock:
        _cache[path] = (stamp, entries)
    return entries


@dataclass(frozen=True)
class Verdict:
    """What the known_hosts files say of a presented key."""

    status: Status
    keytype: str
    blob: bytes
    entry: Entry | None = None  # the line that knows (or revokes) it
    listed: tuple[Entry, ...] = ()  # the host's other lines: of the same type when changed, any when unknown

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.blob)


@dataclass(frozen=True)
class KnownHosts:
    """The known_hosts files of one run: the site's (``site.known_hosts``, read instead of the
    user's, as ``UserKnownHostsFile``) or the user's, the system's, and a provider's besides."""

    site: Path | None = None
    provider: Path | None = None
    system_files: tuple[Path, ...] = GLOBAL_FILES  # OpenSSH's GlobalKnownHostsFile (tests point it elsewhere)

    def user_files(self) -> list[Path]:
        if self.site is not None:
            return [Path(os.path.expanduser(self.site)).absolute()]
        return [Path(os.path.expanduser(f)) for f in USER_FILES]

    def _provider_files(self) -> list[Path]:
        return [Path(os.path.expanduser(self.provider)).absolute()] if self.provider is not None else []

    def files(self) -> list[Path]:
        """Every file read, in order: the provider's, the site's or the user's, the system's."""
        return [*self._provider_files(), *self.user_files(), *self.system_files]

    @property
    def accept_file(self) -> Path:
        """Where ``racfg hostkey accept`` records a key: the site's file, else the user's."""
        return self.user_files()[0]

    def describe(self) -> str:
        return ", ".join(str(f) for f in self.files())

    def entries(self, label: str) -> list[Entry]:
        """Every line of every file that lists ``label`` (host certificates' authorities left out)."""
        return [e for path in self.files() for e in read_entries(path)
                if e.marker != "@cert-authority" and e.matches(label)]

    def known_types(self, label: str) -> set[str]:
        return {e.keytype for e in self.entries(label) if not e.marker}

    def verdict(self, label: str, keytype: str, blob: bytes) -> Verdict:
        """OpenSSH's verdict on the key ``label`` presents (sshconnect.c check_host_key)."""
        entries = self.entries(label)
        for entry in entries:
            if entry.marker == "@revoked" and entry.blob == blob:
                return Verdict("revoked", keytype, blob, entry)
        for entry in entries:
            if not entry.marker and entry.blob == blob:
                return Verdict("known", keytype, blob, entry)
        same = tuple(e for e in entries if not e.marker and e.keytype == keytype)
        if same:
            return Verdict("changed", keytype, blob, None, same)
        return Verdict("unknown", keytype, blob, None, tuple(e for e in entries if not e.marker))

    def disabled_algorithms(self, label: str) -> dict[str, list[str]] | None:
        """paramiko's ``disabled_algorithms`` that make a host known by some key types present one
        of those (OpenSSH puts known types first in HostKeyAlgorithms); None for an unknown host."""
        return offering(self.known_types(label))

    def openssh_options(self) -> list[str]:
        """``ssh`` options that make OpenSSH read these files and refuse what they do not list."""
        user = [*self._provider_files(), *self.user_files()]
        for path in [*user, *self.system_files]:
            if re.search(r"[\s\"'\\]", str(path)):
                raise UsageError(f"known_hosts path {str(path)!r}: OpenSSH takes a list of files split at "
                                 "spaces, so a path with spaces or quotes cannot be given to it")
        return ["-o", "UserKnownHostsFile=" + " ".join(map(str, user)),
                "-o", "GlobalKnownHostsFile=" + (" ".join(map(str, self.system_files)) or "/dev/null"),
                "-o", "StrictHostKeyChecking=yes"]

    def record(self, host: str, port: int, keytype: str, blob: bytes) -> Path:
        """Append one key line to ``accept_file`` (made 0600, its directory 0700, when new);
        refuses (ValueError) a host that the files list with another key of this type."""
        verdict = self.verdict(host_label(host, port), keytype, blob)
        if verdict.status == "known":
            return verdict.entry.file if verdict.entry else self.accept_file
        if verdict.status != "unknown":
            raise ValueError(f"the files list {host_label(host, port)} with a {verdict.status} key")
        path = self.accept_file
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a") as handle:
            if handle.tell() and not path.read_bytes().endswith(b"\n"):
                handle.write("\n")
            handle.write(key_line(host, port, keytype, blob))
        return path
