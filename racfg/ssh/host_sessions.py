"""SSH to the cluster's hosts, one layer for every command that runs things on them (validate's
probes, smoke's measurements): host keys checked, one connection per host reused for every
command of a run, long-running processes that can be killed, output read to its end.

Host keys: checked by racfg.ssh.hostkeys against the files of racfg.ssh.known_hosts (the site's or
the user's, the system's, and the provider's, e.g. the lab's); a host whose key is unknown or
different is refused with its fingerprint, as deploy's OpenSSH refuses it on the same files
(racfg.render.connection_options).

Every long-running process is started as ``sh -c 'echo $$; exec timeout ... TOOL'`` in its own
SSH channel. sshd makes each channel's command a session leader, so ``$$`` is the pid and the
process group of the tool (``timeout`` keeps its child in that group): killing the group stops
the tool and anything it forked. ``timeout`` bounds every process on the host itself, so even a
racfg killed with SIGKILL, or a host whose SSH connection died, leaves nothing running for long.
``HostConnections.stop_all`` (called in a ``finally``) kills every group still registered.
"""

from __future__ import annotations

import contextlib
import shlex
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

import paramiko

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.inventory.cluster import ClusterHost
from racfg.ssh import channels
from racfg.ssh.channels import ChannelError, Completed, Stream
from racfg.ssh.hostkeys import CheckPolicy, HostKeyError, Peer, checked_key, disabled_algorithms
from racfg.ssh.known_hosts import KnownHosts
from racfg.ssh.reach import reach_fix


class HostSshError(CannotRunError):
    """A host could not be reached, or a command could not be run or ended on it."""


ErrorType = type[CannotRunError]

CONNECT_TIMEOUT = 10.0
KILL_GRACE = 0.5
EOF_GRACE = 5.0  # after a process's exit status, how long the rest of its output may take to arrive
# sshd runs at most MaxSessions (10 by default) channels on one connection and refuses the next
# ("Connect failed"); a measurement may need more at once on one host (ra-arista: 2 links x 8
# iperf3 clients on a dgx, 18 servers on a storage host at 9 clients), so a host gets another
# connection when these are in use, leaving 2 for probes and kills.
CHANNELS_PER_CONNECTION = 8


@dataclass
class RemoteProcess:
    """A bounded tool running on a host; ``wait`` collects its output."""

    host: HostSession
    command: str
    channel: paramiko.Channel
    deadline: float
    pid: int | None = None
    bound_s: float = 0.0  # the tool's own time bound on the host (a release restarts the deadline)
    _out: list[bytes] = field(default_factory=list)
    _err: list[bytes] = field(default_factory=list)
    _pid_buffer: bytes = b""

    def _pump(self) -> None:
        while self.channel.recv_ready():
            chunk = self.channel.recv(65536)
            if self.pid is None:
                self._pid_buffer += chunk
                if b"\n" in self._pid_buffer:
                    first, rest = self._pid_buffer.split(b"\n", 1)
                    self.pid = int(first.strip() or 0) or None
                    self.host.register(self.pid)
                    self._out.append(rest)
            else:
                self._out.append(chunk)
        while self.channel.recv_stderr_ready():
            self._err.append(self.channel.recv_stderr(65536))

    def started(self, timeout: float = 5.0) -> int | None:
        """Wait until the remote shell printed its pid (the process group to kill later)."""
        limit = time.monotonic() + timeout
        while self.pid is None and time.monotonic() < limit and not self.channel.exit_status_ready():
            self._pump()
            time.sleep(0.01)
        self._pump()
        return self.pid

    def release(self) -> None:
        """Let a process started ``held`` run its tool now; its deadline counts from here."""
        try:
            self.channel.sendall(b"\n")
        except (OSError, paramiko.SSHException) as exc:
            raise self.host.error(f"{self.host.name}: cannot start {self.command.split()[0]} ({exc})") from None
        self.deadline = time.monotonic() + self.bound_s + 10

    def wait(self) -> Completed:
        """Collect output until the process ends and its output has all arrived; past its deadline
        it is killed and reported.

        The exit status alone does not end the output: sshd sends it when it reaps the process,
        which can be before it has read what the process wrote last (iperf3 -J writes its whole
        report just before it exits), so the output counts as complete at the channel's end of file.
        """
        while not self.channel.exit_status_ready():
            self._pump()
            if time.monotonic() > self.deadline:
                self.host.kill([self.pid] if self.pid else [])
                raise self.host.error(f"{self.host.name}: {self.command.split()[0]} did not end in time; stopped")
            if self.host.lost():
                raise self.host.error(f"{self.host.name}: SSH connection lost while {self.command.split()[0]} ran")
            time.sleep(0.02)
        # a child the tool left behind may hold its output open: wait for the end only so long
        eof_limit = time.monotonic() + EOF_GRACE
        while not (self.channel.eof_received or self.channel.closed) and time.monotonic() < eof_limit:
            self._pump()
            time.sleep(0.02)
        rc = self.channel.recv_exit_status()
        self._pump()
        self.channel.close()
        if self.pid is not None:
            self.host.unregister(self.pid)
        out = b"".join(self._out) if self.pid is not None else self._pid_buffer
        return Completed(rc, out.decode(errors="replace"), b"".join(self._err).decode(errors="replace"))


@dataclass(frozen=True)
class SshEndpoint:
    """Where and as whom to reach one host, and the provider's host keys to check it against."""

    name: str
    address: str
    user: str = "root"
    port: int = 22
    key_file: str | None = None
    known_hosts: KnownHosts = field(default_factory=KnownHosts)

    @classmethod
    def of(cls, host: ClusterHost, overrides: ConnectionOverrides) -> SshEndpoint:
        """A host of the loaded inventory, with the provider's key where the inventory gives none,
        checked against the site's (or the user's) known_hosts and the provider's."""
        return cls(host.name, str(host.mgmt), host.ssh_user, host.ssh_port, overrides.ssh_key_for(host.ssh_key),
                   KnownHosts(host.known_hosts, overrides.known_hosts))


class HostSession:
    """SSH to one host, opened once and reused for every command of a run: one connection, and one
    more each time the ones open carry ``CHANNELS_PER_CONNECTION`` running commands.

    ``error``: the exception its failures raise (smoke's are measurement errors)."""

    def __init__(self, endpoint: SshEndpoint, error: ErrorType = HostSshError) -> None:
        self.name = endpoint.name
        self.address = endpoint.address
        self.port = endpoint.port
        self.user = endpoint.user
        self.key = endpoint.key_file
        self.known_hosts = endpoint.known_hosts
        self.error = error
        self.opened = 0  # connections opened so far (what "one connection per host" is checked by)
        self.client: paramiko.SSHClient | None = None
        self.more: list[paramiko.SSHClient] = []  # further connections, when one carries too many channels
        self.groups: set[int] = set()
        self._lock = threading.Lock()
        self._pool_lock = threading.Lock()
        self._channels: dict[int, list[paramiko.Channel]] = {}  # id(client) -> its channels not yet closed

    def connect(self) -> None:
        self.client = self._open()

    def ensure_connected(self) -> None:
        """Connect unless connected (a caller that reaches its hosts one at a time, as validate does)."""
        with self._pool_lock:
            if self.client is None:
                self.client = self._open()

    def _open(self) -> paramiko.SSHClient:
        """Connect and log in; the host's key is judged by racfg.ssh.hostkeys (no key is loaded
        into paramiko, so every key reaches the policy) before any credential is offered."""
        client = paramiko.SSHClient()
        peer = Peer("host", self.name, self.address, self.port)
        client.set_missing_host_key_policy(CheckPolicy(peer, self.known_hosts))
        self.opened += 1
        key = str(Path(self.key).expanduser()) if self.key else None
        unreachable = f"{self.name}: cannot reach {self.user}@{self.address}:{self.port} over SSH"
        try:
            try:
                client.connect(self.address, port=self.port, username=self.user, key_filename=key,
                               timeout=CONNECT_TIMEOUT, banner_timeout=CONNECT_TIMEOUT, auth_timeout=CONNECT_TIMEOUT,
                               allow_agent=key is None, look_for_keys=key is None,
                               disabled_algorithms=disabled_algorithms(peer, self.known_hosts))
            except paramiko.IncompatiblePeer:  # none of the key types known for it: say which key it has
                checked_key(peer, self.known_hosts, CONNECT_TIMEOUT)
                raise
        except HostKeyError as exc:
            client.close()
            raise self.error(f"{unreachable} ({exc.message.removeprefix(f'{self.name}: ')})", hint=exc.hint) from None
        except (TimeoutError, paramiko.SSHException, OSError) as exc:
            client.close()
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            fix = reach_fix(self.name, self.address, self.port, exc,
                            credentials=f"racfg's SSH key for {self.user} on {self.name} (its authorized_keys)")
            raise self.error(f"{unreachable} ({reason})", hint=fix) from None
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(5)
        return client

    def lost(self) -> bool:
        transport = self.client.get_transport() if self.client else None
        return transport is None or not transport.is_active()

    def _connection(self) -> paramiko.SSHClient:
        """A connection with a channel to spare, opening one more when every one is full."""
        assert self.client is not None
        for client in [self.client, *self.more]:
            live = [c for c in self._channels.get(id(client), []) if not c.closed]
            self._channels[id(client)] = live
            if len(live) < CHANNELS_PER_CONNECTION:
                return client
        client = self._open()
        self.more.append(client)
        return client

    def _channel(self, command: str) -> paramiko.Channel:
        if self.client is None or self.lost():
            raise self.error(f"{self.name}: no SSH connection")
        with self._pool_lock:
            client = self._connection()
            transport = client.get_transport()
            if transport is None or not transport.is_active():
                raise self.error(f"{self.name}: SSH connection lost")
            try:
                channel = transport.open_session(timeout=CONNECT_TIMEOUT)
                channel.exec_command(command)
            except (paramiko.SSHException, OSError) as exc:
                raise self.error(f"{self.name}: cannot start a command over SSH ({exc})") from None
            self._channels.setdefault(id(client), []).append(channel)
        return channel

    def run(self, command: str, timeout: float = 30.0) -> Completed:
        """A short command (probes, kills): output and exit status, bounded by ``timeout``."""
        proc = RemoteProcess(self, command, self._channel(command), time.monotonic() + timeout, pid=-1)
        result = proc.wait()
        return result

    def start(self, argv: Iterable[str], bound_s: float, *, held: bool = False) -> RemoteProcess:
        """Start a tool bounded to ``bound_s`` seconds on the host itself; its group is registered.

        ``held``: the remote shell waits for ``RemoteProcess.release`` before it runs the tool, so
        that many processes, started one SSH channel at a time, begin together (a channel costs
        round trips; a release is one write). A shell still held when its channel closes (racfg
        ended) reads end-of-file and exits without running the tool.
        """
        tool = shlex.join(list(argv))
        bound = max(1, int(bound_s + 0.999))
        hold = "read go || exit 0; " if held else ""
        command = f"sh -c {shlex.quote(f'echo $$; {hold}exec timeout -k 2 {bound} {tool}')}"
        return RemoteProcess(self, tool, self._channel(command), time.monotonic() + bound + 10, bound_s=bound)

    def execute(self, command: str, timeout: float) -> Completed:
        """A command on a channel of its own, read to its end, each read waiting at most ``timeout``
        (the site lock's listings); its failures raise ChannelError, not ``error``."""
        return channels.read_to_end(self._opened(), command, timeout)

    def stream(self, command: str, timeout: float, keepalive_s: int) -> Stream:
        """A command racfg talks with while it runs (the site lock's holding shell): see channels.Stream."""
        return channels.open_stream(self._opened(), command, timeout, keepalive_s)

    def _opened(self) -> paramiko.SSHClient:
        if self.client is None:
            raise ChannelError("no SSH connection")
        return self.client

    def register(self, pid: int | None) -> None:
        if pid:
            with self._lock:
                self.groups.add(pid)

    def unregister(self, pid: int) -> None:
        with self._lock:
            self.groups.discard(pid)

    def kill(self, pids: Iterable[int]) -> None:
        """TERM then KILL each process group; a lost host is left to the tools' own time bound."""
        groups = sorted({p for p in pids if p and p > 1})
        if not groups or self.client is None or self.lost():
            return
        targets = " ".join(f"-{p}" for p in groups)
        script = f"kill -TERM -- {targets} 2>/dev/null; sleep {KILL_GRACE}; kill -KILL -- {targets} 2>/dev/null; true"
        with contextlib.suppress(self.error):
            self.run(script, timeout=10)
        with self._lock:
            self.groups.difference_update(groups)

    def stop_all(self) -> None:
        with self._lock:
            groups = list(self.groups)
        self.kill(groups)

    def close(self) -> None:
        for client in self.more:
            client.close()
        self.more.clear()
        self._channels.clear()
        if self.client is not None:
            self.client.close()
            self.client = None


class HostConnections:
    """The run's SSH sessions by host name: opened in parallel, every remote process stopped on exit.

    ``error``: the exception its failures raise (a subclass sets its own, as smoke's Fleet does)."""

    error: ErrorType = HostSshError

    def __init__(self, hosts: Iterable[ClusterHost], overrides: ConnectionOverrides) -> None:
        self.sessions = {h.name: HostSession(SshEndpoint.of(h, overrides), self.error) for h in hosts}

    def __enter__(self) -> Self:
        errors: list[str] = []
        threads = [threading.Thread(target=self._connect, args=(s, errors), daemon=True)
                   for s in self.sessions.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            self.close()
            raise self.error("; ".join(sorted(errors)))
        return self

    @staticmethod
    def _connect(session: HostSession, errors: list[str]) -> None:
        try:
            session.connect()
        except CannotRunError as exc:
            errors.append(exc.message)

    def __getitem__(self, name: str) -> HostSession:
        return self.sessions[name]

    def stop_all(self) -> None:
        threads = [threading.Thread(target=s.stop_all, daemon=True) for s in self.sessions.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=15)

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop_all()
        finally:
            self.close()
