"""One SSH channel on a host connection, for what racfg.ssh.host_sessions' bounded processes do not cover:
a command read to its end under a socket timeout (``read_to_end``), and a command racfg keeps talking
with while it runs (``Stream``: the site lock's holding shell, its heartbeat in, its answers out).

Why here: racfg.lock.site_lock needs a channel it writes to and watches for the whole run, not a tool
it waits for; giving it paramiko's channel would spread paramiko beyond racfg.ssh. Every paramiko
or socket failure is raised as ``ChannelError`` (its text: the failure's own, else its type), so
no paramiko object or exception leaves this package.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import paramiko


@dataclass
class Completed:
    rc: int
    stdout: str
    stderr: str

    def failure(self, error: Exception) -> str:
        """Why the tool's output could not be read: its last line on stderr, else ``error`` and the exit status."""
        stderr = self.stderr.strip()
        return stderr.splitlines()[-1] if stderr else f"{error}, exit status {self.rc}"


class ChannelError(Exception):
    """A channel could not be opened, read or written: the SSH layer's or the socket's reason."""

    @classmethod
    def of(cls, exc: Exception) -> ChannelError:
        return cls(str(exc) or type(exc).__name__)


_FAILURES = (paramiko.SSHException, OSError)  # socket.timeout is an OSError


def _open(client: paramiko.SSHClient, command: str, timeout: float) -> paramiko.Channel:
    transport = client.get_transport()
    if transport is None:
        raise ChannelError("SSH connection closed")
    channel = transport.open_session(timeout=timeout)
    channel.exec_command(command)
    channel.settimeout(timeout)
    return channel


def read_to_end(client: paramiko.SSHClient, command: str, timeout: float) -> Completed:
    """Run ``command`` on its own channel and read it to its end: output and exit status; each read
    waits at most ``timeout`` (a socket timeout, not a deadline on the command)."""
    try:
        channel = _open(client, command, timeout)
        with channel:
            out = channel.makefile("r").read().decode(errors="replace")
            err = channel.makefile_stderr("r").read().decode(errors="replace")
            return Completed(channel.recv_exit_status(), out, err)
    except _FAILURES as exc:
        raise ChannelError.of(exc) from None


def open_stream(client: paramiko.SSHClient, command: str, timeout: float, keepalive_s: int) -> Stream:
    """Start ``command`` on its own channel, its input kept open; reads wait at most ``timeout`` until
    ``Stream.untimed``. The connection sends keepalives every ``keepalive_s``, so a dead peer is seen."""
    transport = client.get_transport()
    if transport is None:
        raise ChannelError("SSH connection closed")
    transport.set_keepalive(keepalive_s)
    try:
        return Stream(_open(client, command, timeout))
    except _FAILURES as exc:
        raise ChannelError.of(exc) from None


class Stream:
    """A command racfg talks with while it runs: lines to its input, what it says as it comes, its
    end (or its session's) seen at once."""

    def __init__(self, channel: paramiko.Channel) -> None:
        self._channel = channel

    def readline(self) -> bytes:
        """Its first line, read byte by byte so that what follows stays unread (for ``said``);
        empty or cut short when the command ended first."""
        line = b""
        try:
            while not line.endswith(b"\n"):
                byte = self._channel.recv(1)
                if not byte:
                    break
                line += byte
        except _FAILURES as exc:
            raise ChannelError.of(exc) from None
        return line

    def untimed(self) -> None:
        """Reads from now on wait as long as it takes (a holding shell says nothing until asked)."""
        self._channel.settimeout(None)

    def rest(self) -> Completed:
        """Wait for the command to end: the rest of its output, its exit status and its stderr."""
        try:
            out = self._channel.makefile("r").read().decode(errors="replace")
            rc = self._channel.recv_exit_status()
            err = self._channel.makefile_stderr("r").read().decode(errors="replace")
        except _FAILURES as exc:
            raise ChannelError.of(exc) from None
        return Completed(rc, out, err)

    def said(self) -> str:
        """What it wrote since the last look, without waiting; nothing when the channel cannot be read."""
        said = b""
        with contextlib.suppress(*_FAILURES):
            while self._channel.recv_ready():
                said += self._channel.recv(4096)
        return said.decode(errors="replace")

    def exit_status(self) -> int | None:
        """Its exit status once it ended (-1: killed, or ended without one), else None."""
        return self._channel.exit_status if self._channel.exit_status_ready() else None

    def dropped(self) -> bool:
        """Whether its channel or the connection under it has closed."""
        transport = self._channel.get_transport()
        return self._channel.closed or transport is None or not transport.is_active()

    def send(self, data: bytes) -> None:
        try:
            self._channel.sendall(data)
        except _FAILURES as exc:
            raise ChannelError.of(exc) from None

    def end_input(self, wait_s: float) -> None:
        """Close its input and wait up to ``wait_s`` for it to end; a lost session has nothing left to end."""
        with contextlib.suppress(*_FAILURES):
            self._channel.shutdown_write()
            self._channel.status_event.wait(wait_s)

    def close(self) -> None:
        self._channel.close()
