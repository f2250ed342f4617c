"""The host key check of every SSH connection racfg opens itself: the verdict of
``racfg.ssh.known_hosts`` applied to the key a host or switch presents, and the refusal a person can
act on (who, the key's type and fingerprint, the files read, and the command that records it).

paramiko (racfg.ssh.host_sessions: validate, smoke, the site lock) asks ``CheckPolicy``, its documented
hook for a key it does not know: racfg loads no keys into paramiko, so every key reaches the
policy, which judges it by OpenSSH's rules over all the files (paramiko's own check keeps one key
per type and host, and would call a second, valid one "changed").

netmiko (racfg.switches.session, also inside the switch role's module) takes host keys only
through ``ssh_strict``/``alt_key_file``. So a switch's key is read and judged here first
(``checked_key``: a key exchange, no login), and netmiko then connects with ``ssh_strict=True``
and a file that lists that key alone (``pinned``): a switch that presents anything else on the
login connection is refused by netmiko itself, so nothing can slip in between the two.
"""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import paramiko

from racfg.errors import CannotRunError, UsageError
from racfg.ssh.known_hosts import FINGERPRINT, KnownHosts, Verdict, host_label, key_line, offering

# The SSH protocol's own failures (a refused key exchange, a channel that could not open), which
# read_key and checked_key raise beside OSError and netmiko's switch sessions raise too: named here
# so that paramiko is imported in racfg.ssh alone.
SshProtocolError = paramiko.SSHException


@dataclass(frozen=True)
class Peer:
    """A machine racfg connects to: a host or switch of the inventory, at an address and port."""

    kind: Literal["host", "switch"]
    name: str
    host: str
    port: int = 22

    @property
    def label(self) -> str:
        """The name its key is listed under (``[address]:port`` off port 22)."""
        return host_label(self.host, self.port)

    @property
    def who(self) -> str:
        return f"switch {self.name}" if self.kind == "switch" else self.name


class HostKeyError(CannotRunError):
    """A presented host key racfg will not trust (not known, changed, revoked), or known_hosts
    files it could not read: the connection is refused (exit 3)."""

    def __init__(self, message: str, *, hint: str | None = None, verdict: Verdict | None = None) -> None:
        super().__init__(message, hint=hint)
        self.verdict = verdict


def accept_command(peer: Peer, fp: str) -> str:
    return f"racfg hostkey accept INVENTORY {peer.name} --fingerprint {fp}"


def refusal(peer: Peer, known: KnownHosts, verdict: Verdict) -> HostKeyError | None:
    """The error that refuses ``verdict``'s key, worded for the operator; None for a known key."""
    fp, status = verdict.fingerprint, verdict.status
    if status == "known":
        return None
    if status == "revoked":
        where = verdict.entry.where if verdict.entry else "?"
        return HostKeyError(f"{peer.who}: host key of {peer.label} is revoked: {verdict.keytype} {fp} "
                            f"(@revoked in {where}); refused", verdict=verdict)
    # The first line of a message is what a deploy shows of a failed switch task (300 characters):
    # who, the key and what to do come first; the files read follow in the hint.
    if status == "changed":
        old = ", ".join(f"{e.keytype} {e.fingerprint} ({e.where})" for e in verdict.listed)
        return HostKeyError(
            f"{peer.who}: host key of {peer.label} does not match the known one: presented {verdict.keytype} "
            f"{fp}, known {old}; refused (a replaced or re-keyed {peer.kind}, or something posing as it)",
            hint=f"if the {peer.kind} was re-keyed on purpose, delete the old line (ssh-keygen -R '{peer.label}' "
                 f"-f FILE) and accept the new key: `{accept_command(peer, fp)}`", verdict=verdict)
    others = ("; they list other key types for it: "
              + ", ".join(f"{e.keytype} {e.fingerprint} ({e.where})" for e in verdict.listed)) if verdict.listed else ""
    return HostKeyError(
        f"{peer.who}: host key of {peer.label} is not known: {verdict.keytype} {fp}; if the {peer.kind} shows "
        f"this fingerprint on its own console, record it: `{accept_command(peer, fp)}`",
        hint=f"known_hosts read: {known.describe()}{others}; accept appends to {known.accept_file}", verdict=verdict)


def judge(peer: Peer, known: KnownHosts, key: paramiko.PKey) -> Verdict:
    """The files' verdict on ``key``; an unreadable file refuses (HostKeyError)."""
    try:
        return known.verdict(peer.label, key.get_name(), key.asbytes())
    except OSError as exc:
        raise HostKeyError(f"{peer.who}: cannot check its host key: cannot read {exc.filename} "
                           f"({exc.strerror or exc}); refused") from None


def check_key(peer: Peer, known: KnownHosts, key: paramiko.PKey) -> None:
    """Raise HostKeyError unless the files know ``key`` for ``peer``."""
    error = refusal(peer, known, judge(peer, known, key))
    if error is not None:
        raise error


def disabled_algorithms(peer: Peer, known: KnownHosts) -> dict[str, list[str]] | None:
    """What to leave out of a connection to ``peer`` so that it presents a key of a type known for it."""
    try:
        return known.disabled_algorithms(peer.label)
    except OSError:
        return None  # the check itself says which file it cannot read


class CheckPolicy(paramiko.MissingHostKeyPolicy):
    """paramiko's hook for a key it does not know, which (with no keys loaded) is every key: the
    known_hosts verdict, raising HostKeyError for anything but a known key."""

    def __init__(self, peer: Peer, known: KnownHosts) -> None:
        self.peer = peer
        self.known = known

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        check_key(self.peer, self.known, key)


def _scan(peer: Peer, timeout: float, disabled: dict[str, list[str]] | None) -> paramiko.PKey:
    sock = socket.create_connection((peer.host, peer.port), timeout=timeout)
    transport = paramiko.Transport(sock, disabled_algorithms=disabled)
    try:
        transport.banner_timeout = timeout
        transport.start_client(timeout=timeout)
        return transport.get_remote_server_key()
    finally:
        transport.close()
        sock.close()


def read_key(peer: Peer, known: KnownHosts, timeout: float) -> paramiko.PKey:
    """The key ``peer`` presents (a key exchange; no login), offering the key types the files know
    for it first, as OpenSSH does; a peer that has none of those any more shows the key it has.
    Raises OSError or paramiko.SSHException when it cannot be reached."""
    disabled = disabled_algorithms(peer, known)
    try:
        return _scan(peer, timeout, disabled)
    except paramiko.IncompatiblePeer:
        if disabled is None:
            raise
        return _scan(peer, timeout, None)


def checked_key(peer: Peer, known: KnownHosts, timeout: float) -> paramiko.PKey:
    """The key ``peer`` presents, once the files know it (else HostKeyError)."""
    key = read_key(peer, known, timeout)
    check_key(peer, known, key)
    return key


def switched_key(peer: Peer, known: KnownHosts, error: BaseException) -> HostKeyError | None:
    """The refusal behind a failed login whose cause (netmiko wraps it) is a key other than the one
    checked a moment before; None when the failure was something else."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, paramiko.BadHostKeyException):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        return None
    return refusal(peer, known, judge(peer, known, cause.key)) or HostKeyError(
        f"{peer.who}: {peer.label} presented host key {cause.expected_key.fingerprint} and then "
        f"{cause.key.fingerprint} on the next connection; refused")


@contextmanager
def pinned(peer: Peer, key: paramiko.PKey) -> Iterator[tuple[Path, dict[str, list[str]] | None]]:
    """A known_hosts file that lists ``key`` alone for ``peer`` (netmiko's ``alt_key_file``, with
    ``ssh_strict=True``), and the ``disabled_algorithms`` under which the peer presents that key.
    The file holds a public key only; it is removed when the block ends."""
    with tempfile.TemporaryDirectory(prefix="racfg-hostkey-") as tmp:
        path = Path(tmp) / "known_hosts"
        path.write_text(key_line(peer.host, peer.port, key.get_name(), key.asbytes()))
        yield path, offering({key.get_name()})


def _reach(peer: Peer, known: KnownHosts, timeout: float) -> paramiko.PKey:
    try:
        return read_key(peer, known, timeout)
    except (OSError, paramiko.SSHException) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise HostKeyError(f"{peer.who}: cannot read its host key: cannot reach {peer.label} over SSH "
                           f"({reason})") from None


def accept(peer: Peer, known: KnownHosts, expected: str, timeout: float = 10.0) -> str:
    """``racfg hostkey accept``: record the key ``peer`` presents now if its fingerprint is
    ``expected`` (read on the machine itself, out of band) and no other key of its type is known
    for it; says what was done. Never replaces a key: a changed or revoked one is refused."""
    if not FINGERPRINT.match(expected):
        raise UsageError(f"--fingerprint {expected!r}: give the key's SHA256 fingerprint as OpenSSH prints it "
                         "(SHA256: and 43 characters, e.g. from `ssh-keygen -lf KEY.pub` on the machine)")
    key = _reach(peer, known, timeout)
    verdict = judge(peer, known, key)
    if verdict.status == "known":
        where = verdict.entry.where if verdict.entry else "?"
        return (f"{peer.who}: its {verdict.keytype} key {verdict.fingerprint} is already known ({where}); "
                "nothing recorded")
    error = refusal(peer, known, verdict)
    if verdict.status != "unknown" and error is not None:
        raise error
    if verdict.fingerprint != expected:
        raise HostKeyError(
            f"{peer.who}: {peer.label} presents {verdict.keytype} {verdict.fingerprint}, not {expected}: not recorded",
            hint=f"the key at {peer.label} is not the one you read: check the fingerprint on the {peer.kind}'s "
                 "console, and that nothing else answers at its address", verdict=verdict)
    try:
        path = known.record(peer.host, peer.port, verdict.keytype, verdict.blob)
    except OSError as exc:
        raise HostKeyError(f"{peer.who}: cannot record its key in {exc.filename} ({exc.strerror or exc})") from None
    return f"{peer.who}: recorded {verdict.keytype} {verdict.fingerprint} for {peer.label} in {path}"


def survey(peer: Peer, known: KnownHosts, timeout: float = 10.0) -> tuple[Verdict | None, str]:
    """``racfg hostkey show``: the verdict on the key ``peer`` presents, and one line saying it."""
    try:
        key = _reach(peer, known, timeout)
        verdict = judge(peer, known, key)
    except HostKeyError as exc:
        return None, exc.message
    error = refusal(peer, known, verdict)
    if error is None:
        where = verdict.entry.where if verdict.entry else "?"
        return verdict, f"{peer.who} ({peer.label}): {verdict.keytype} {verdict.fingerprint} known ({where})"
    return verdict, str(error)
