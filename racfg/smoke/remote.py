"""SSH to the cluster's hosts: one reused connection per host, and remote processes that end.

Every measurement process is started as ``sh -c 'echo $$; exec timeout ... TOOL'`` in its own
SSH channel. sshd makes each channel's command a session leader, so ``$$`` is the pid and the
process group of the tool (``timeout`` keeps its child in that group): killing the group stops
the tool and anything it forked. ``timeout`` bounds every process on the host itself, so even a
racfg killed with SIGKILL, or a host whose SSH connection died, leaves nothing running for long.
``Fleet.stop_all`` (called in a ``finally``) kills every group still registered.
"""

from __future__ import annotations

import contextlib
import shlex
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from racfg.connection import ConnectionOverrides
from racfg.inventory.cluster import ClusterHost
from racfg.smoke.errors import MeasurementError

CONNECT_TIMEOUT = 10.0
KILL_GRACE = 0.5


@dataclass
class Completed:
    rc: int
    stdout: str
    stderr: str


@dataclass
class RemoteProcess:
    """A bounded tool running on a host; ``wait`` collects its output."""

    host: HostSession
    command: str
    channel: paramiko.Channel
    deadline: float
    pid: int | None = None
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

    def wait(self) -> Completed:
        """Collect output until the process ends; past its deadline it is killed and reported."""
        while not self.channel.exit_status_ready():
            self._pump()
            if time.monotonic() > self.deadline:
                self.host.kill([self.pid] if self.pid else [])
                raise MeasurementError(f"{self.host.name}: {self.command.split()[0]} did not end in time; stopped")
            if self.host.lost():
                raise MeasurementError(f"{self.host.name}: SSH connection lost while {self.command.split()[0]} ran")
            time.sleep(0.02)
        rc = self.channel.recv_exit_status()
        self._pump()
        self.channel.close()
        if self.pid is not None:
            self.host.unregister(self.pid)
        out = b"".join(self._out) if self.pid is not None else self._pid_buffer
        return Completed(rc, out.decode(errors="replace"), b"".join(self._err).decode(errors="replace"))


class HostSession:
    """One SSH connection to one host, opened once and reused for every command of a run."""

    def __init__(self, host: ClusterHost, overrides: ConnectionOverrides) -> None:
        self.name = host.name
        self.address = str(host.mgmt)
        self.port = host.ssh_port
        self.user = host.ssh_user
        self.key = overrides.ssh_key_for(host.ssh_key)
        self.known_hosts = overrides.known_hosts
        self.client: paramiko.SSHClient | None = None
        self.groups: set[int] = set()
        self._lock = threading.Lock()

    def connect(self) -> None:
        client = paramiko.SSHClient()
        if self.known_hosts is not None:
            client.load_host_keys(str(self.known_hosts))
        else:
            client.load_system_host_keys()
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        key = str(Path(self.key).expanduser()) if self.key else None
        try:
            client.connect(self.address, port=self.port, username=self.user, key_filename=key,
                           timeout=CONNECT_TIMEOUT, banner_timeout=CONNECT_TIMEOUT, auth_timeout=CONNECT_TIMEOUT,
                           allow_agent=key is None, look_for_keys=key is None)
        except (TimeoutError, paramiko.SSHException, OSError) as exc:
            client.close()
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise MeasurementError(f"{self.name}: cannot reach {self.user}@{self.address}:{self.port} over SSH "
                                   f"({reason})") from None
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(5)
        self.client = client

    def lost(self) -> bool:
        transport = self.client.get_transport() if self.client else None
        return transport is None or not transport.is_active()

    def _channel(self, command: str) -> paramiko.Channel:
        if self.client is None or self.lost():
            raise MeasurementError(f"{self.name}: no SSH connection")
        transport = self.client.get_transport()
        assert transport is not None
        try:
            channel = transport.open_session(timeout=CONNECT_TIMEOUT)
            channel.exec_command(command)
        except (paramiko.SSHException, OSError) as exc:
            raise MeasurementError(f"{self.name}: cannot start a command over SSH ({exc})") from None
        return channel

    def run(self, command: str, timeout: float = 30.0) -> Completed:
        """A short command (probes, kills): output and exit status, bounded by ``timeout``."""
        proc = RemoteProcess(self, command, self._channel(command), time.monotonic() + timeout, pid=-1)
        result = proc.wait()
        return result

    def start(self, argv: Iterable[str], bound_s: float) -> RemoteProcess:
        """Start a tool bounded to ``bound_s`` seconds on the host itself; its group is registered."""
        tool = shlex.join(list(argv))
        bound = max(1, int(bound_s + 0.999))
        command = f"sh -c {shlex.quote(f'echo $$; exec timeout -k 2 {bound} {tool}')}"
        proc = RemoteProcess(self, tool, self._channel(command), time.monotonic() + bound + 10)
        return proc

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
        with contextlib.suppress(MeasurementError):
            self.run(script, timeout=10)
        with self._lock:
            self.groups.difference_update(groups)

    def stop_all(self) -> None:
        with self._lock:
            groups = list(self.groups)
        self.kill(groups)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


class Fleet:
    """The run's SSH sessions by host name: opened in parallel, every remote process stopped on exit."""

    def __init__(self, hosts: Iterable[ClusterHost], overrides: ConnectionOverrides) -> None:
        self.sessions = {h.name: HostSession(h, overrides) for h in hosts}

    def __enter__(self) -> Fleet:
        errors: list[str] = []
        threads = [threading.Thread(target=self._connect, args=(s, errors), daemon=True)
                   for s in self.sessions.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            self.close()
            raise MeasurementError("; ".join(sorted(errors)))
        return self

    @staticmethod
    def _connect(session: HostSession, errors: list[str]) -> None:
        try:
            session.connect()
        except MeasurementError as exc:
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
