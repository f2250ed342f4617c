"""The site lock held on the site itself, so it binds every checkout and every controller.

A lock file in a checkout's ``.racfg/`` only stops a second run from that checkout; two
checkouts, or two machines, deploying one site at once would interleave their changes. So the
lock lives on the site's lock host (``site.lock_host``, else its first host in inventory order:
every controller finds the same one): a live SSH session runs ``flock`` (exclusive, or shared for
readers) on ``/run/lock/racfg/SITE.lock`` there and writes a holder file beside it saying who holds
it (controller, user, pid, start, command, state directory). The kernel drops the flock when the
session's shell ends, which happens when racfg closes the session, when racfg dies (its socket
closes), or when the controller stops sending its heartbeat for ``LEASE_S`` (a controller that
froze or lost its network): a lock never outlives its holder for long. ``racfg lock show`` lists
the holders, marking a stale one; ``racfg lock break`` ends a holder's shell on the lock host.

The directory is root's alone (0700, owned by root; racfg logs in as root, as deploy does): in the
world-writable ``/run/lock`` anyone on the host could plant the lock file or a holder file, or a
symbolic link in their place. One that exists with another owner, a wider mode or as a link is
refused, named; a holder file racfg did not write (a link, not a regular file, another owner, a
name that is not ``SITE.PID.json``) or cannot read (torn, not JSON) is reported as such.

A lock lost while held (its shell on the lock host ended, the session dropped) is said at once to
``held_on_site``'s caller (``on_lost``): racfg.lock.local stops the run.

Cost: one more SSH connection per run, to one host, open for the run's duration.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import re
import shlex
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.inventory import Cluster
from racfg.inventory.cluster import ClusterHost
from racfg.lock.scripts import ACQUIRE, BREAK, BUSY, SHELL_NAME, SHOW, UNSAFE
from racfg.ssh.channels import ChannelError, Stream
from racfg.ssh.host_sessions import HostSession, HostSshError, SshEndpoint

LOCK_DIR = "/run/lock/racfg"  # root's alone (0700): see the module's docstring
HEARTBEAT_S = 5.0  # the controller touches its holder file this often
WATCH_S = 0.5  # how often the controller looks whether its holding shell still runs
STALE_S = 3 * HEARTBEAT_S  # a holder silent for longer is reported stale (its controller froze or lost the network)
LEASE_S = 45  # the lock host ends a holder silent for this long: the lock expires
# The controller counts its lock as lost when the lock host has not answered a heartbeat for this
# long: before the lock host could have let it go, not after (a lease is the holder's to give up first).
ANSWER_S = LEASE_S - 2 * HEARTBEAT_S
CONNECT_TIMEOUT = 10.0
# paramiko's transport thread logs a failed handshake with a traceback; the error racfg raises says it
logging.getLogger("paramiko").setLevel(logging.CRITICAL)


def lock_host(cluster: Cluster) -> ClusterHost:
    """The host that holds the site's lock: ``site.lock_host`` (a host of the inventory, checked when
    it is loaded), else the first in inventory order; the same for every controller."""
    named = cluster.inventory.site.lock_host
    for host in cluster.hosts:
        if named is None or host.name == named:
            return host
    if named is not None:
        raise CannotRunError(f"site.lock_host {named} is not a host of site {cluster.name}")
    raise CannotRunError(f"site {cluster.name} has no host to hold its lock on")


def _stem(site: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", site)


def lock_path(site: str) -> str:
    """The lock file on the lock host."""
    return f"{LOCK_DIR}/{_stem(site)}.lock"


@dataclass(frozen=True)
class Holder:
    """One holder of a site's lock as its lock host reports it, or a file that claims to be one."""

    host: str  # the lock host
    shell_pid: int  # the shell holding the flock on the lock host (0: a file racfg did not write)
    alive: bool  # that shell still runs
    silent_s: int  # seconds since its controller's last heartbeat
    info: dict[str, Any] = field(default_factory=dict)  # what the holder wrote: controller, user, pid, ...
    path: str = ""  # its holder file on the lock host
    problem: str | None = None  # why its holder file cannot be read (torn, not JSON, a link, ...)

    @property
    def planted(self) -> bool:
        """A file racfg did not write (a link, another owner, a stray name): no shell of ours holds it."""
        return self.problem is not None and self.shell_pid == 0

    @property
    def stale_reason(self) -> str | None:
        """Why this holder no longer holds the lock for a live run, or None if it does."""
        if self.planted:
            return "not a holder file racfg wrote"
        if not self.alive:
            return f"its shell on {self.host} is gone (a leftover holder file)"
        if self.silent_s > STALE_S:
            return f"no heartbeat from its controller for {self.silent_s} s (the lock expires after {LEASE_S} s)"
        pid = self.info.get("pid")
        if self.info.get("controller") == socket.gethostname() and isinstance(pid, int) and not _pid_alive(pid):
            return f"its racfg (pid {pid}) on this controller is dead"
        return None

    def describe(self) -> str:
        if self.planted:
            return (f"unreadable holder file {self.path} on {self.host}: {self.problem} (racfg did not write it: "
                    "remove it by hand once you know who put it there)")
        i = self.info
        if self.problem is not None:
            text = (f"unreadable holder file {self.path}: {self.problem}; held on {self.host} "
                    f"by shell pid {self.shell_pid}")
        else:
            who = f"{i.get('user', '?')}@{i.get('controller', '?')} pid {i.get('pid', '?')}"
            text = (f"{i.get('command', 'racfg')} ({i.get('mode', '?')}) by {who}, started {i.get('started', '?')}, "
                    f"state {i.get('state_dir', '?')}; held on {self.host} by shell pid {self.shell_pid}")
        stale = self.stale_reason
        return text + (f" [stale: {stale}]" if stale else "")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def parse_holders(host: str, text: str) -> list[Holder]:
    """The listing the lock host printed (see _LIST): each holder, and each file racfg did not
    write or cannot read, as such; a line that is neither is skipped, never an error."""
    holders = []
    for line in text.splitlines():
        kind, _, rest = line.partition("\t")
        if kind == "bad":
            path, _, why = rest.partition("\t")
            holders.append(Holder(host, 0, False, 0, path=path, problem=why or "unreadable"))
            continue
        parts = rest.split("\t", 4)
        if kind != "holder" or len(parts) < 4:
            continue
        try:
            pid, alive, silent = int(parts[0]), parts[1] == "1", int(parts[2])
        except ValueError:
            continue
        info, problem = _holder_json(parts[4] if len(parts) == 5 else "")
        holders.append(Holder(host, pid, alive, silent, info, path=parts[3], problem=problem))
    return holders


def _holder_json(text: str) -> tuple[dict[str, Any], str | None]:
    """A holder file's content, or why it cannot be read (a torn write, a file cut short, not ours)."""
    if not text.strip():
        return {}, "empty"
    try:
        info = json.loads(text)
    except ValueError as exc:
        where = f" at character {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
        return {}, f"not JSON ({getattr(exc, 'msg', exc)}{where}: torn or cut short)"
    if not isinstance(info, dict):
        return {}, f"not a JSON object (a {type(info).__name__})"
    return info, None


def holder_info(command: str, shared: bool, state_dir: Path) -> dict[str, Any]:
    """What this run writes beside the lock: enough for another user to find it and its owner."""
    return {"command": command, "mode": "shared" if shared else "exclusive", "controller": socket.gethostname(),
            "user": getpass.getuser(), "pid": os.getpid(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "state_dir": str(state_dir)}


def refusal(site: str, what: str, host: str, holders: list[Holder]) -> CannotRunError:
    """The error a refused run reports: every holder, by controller, user, pid and start."""
    named = "; ".join(h.describe() for h in holders) or f"a holder on {host} that left no holder file"
    return CannotRunError(
        f"another racfg run holds site {site}, so this {what} is refused: {named}",
        hint="wait for it to finish; if it is stale, `racfg lock break INVENTORY` ends it "
             f"(the lock is {lock_path(site)} on {host})")


def _connect(host: ClusterHost, overrides: ConnectionOverrides) -> HostSession:
    """One connection to the lock host, opened by the SSH layer every host command uses (racfg.ssh.host_sessions):
    the same host-key checking and keepalives as validate's and smoke's."""
    session = HostSession(SshEndpoint.of(host, overrides))
    try:
        session.connect()
    except HostSshError as exc:
        raise CannotRunError(f"{exc.message}; {host.name} holds the site lock",
                             hint="the site lock lives on site.lock_host, else the first host of the inventory; "
                                  "it must be reachable") from None
    return session


def _command(script: str, site: str, *args: str) -> str:
    return "bash -c " + shlex.join([script, SHELL_NAME, LOCK_DIR, _stem(site), *args])


def _unsafe(host: str, error: str) -> CannotRunError:
    return CannotRunError(f"the site lock on {host} is refused: {error}",
                          hint=f"racfg keeps the lock in {LOCK_DIR}, root's alone (owned by root, mode 0700) and "
                               "logs in there as root; find out who made it otherwise, then remove it (racfg makes it)")


def _run(session: HostSession, host: str, script: str, site: str, *args: str) -> tuple[int, str, str]:
    try:
        done = session.execute(_command(script, site, *args), timeout=CONNECT_TIMEOUT * 3)
    except ChannelError as exc:
        raise CannotRunError(f"cannot read the site lock on {host}: {exc}") from None
    if done.rc == UNSAFE:
        raise _unsafe(host, done.stderr.strip())
    return done.rc, done.stdout, done.stderr


class _Watch:
    """The controller's side of a held lock: the heartbeat out, the holding shell's answers in."""

    def __init__(self, shell: Stream, host: str) -> None:
        self.shell, self.host = shell, host
        self.answered = self.beat = time.monotonic()
        self.ended = ""  # the shell's last "ended: why" line

    def read(self) -> None:
        """Take what the shell said: an answer to a heartbeat ("beat"), or why it let go ("ended: ...")."""
        for line in self.shell.said().splitlines():
            if line == "beat":
                self.answered = time.monotonic()
            elif line.startswith("ended: "):
                self.ended = line[len("ended: "):]

    def why_gone(self) -> str | None:
        """Why the holding shell no longer holds the lock (or may not by now), or None while it does."""
        self.read()
        status = self.shell.exit_status()
        if status is not None:
            self.read()
            if self.ended:
                return f"the holding shell on {self.host} ended: {self.ended}"
            how = "was killed" if status == -1 else f"ended with exit status {status}"
            return f"the holding shell on {self.host} {how} (racfg lock break --force, or someone on {self.host})"
        if self.shell.dropped():
            return f"the SSH session to {self.host} that held it dropped"
        silent = time.monotonic() - self.answered
        if silent > ANSWER_S:  # a network that lost packets, or a controller that froze: assume the worst
            return (f"no answer from {self.host} for {silent:.0f} s (it ends a holder it has not heard from for "
                    f"{LEASE_S} s)")
        return None

    def heartbeat(self) -> str | None:
        """Send the heartbeat when it is due; why it could not be sent, or None."""
        if time.monotonic() < self.beat + HEARTBEAT_S:
            return None
        self.beat = time.monotonic()
        try:
            self.shell.send(b"\n")
        except ChannelError as exc:
            return f"the heartbeat to {self.host} failed ({exc})"
        return None


def _watch(shell: Stream, host: str, stop: threading.Event, on_lost: Callable[[str], None]) -> None:
    """Send the heartbeat, and say at once (``on_lost``) if the holding shell or its session ends, or
    the lock host stops answering for longer than its lease allows."""
    watch = _Watch(shell, host)
    while not stop.wait(WATCH_S):
        why = watch.why_gone() or watch.heartbeat()
        if why is not None:
            if not stop.is_set():  # a release racfg asked for is not a loss
                on_lost(why)
            return


def _acquire(session: HostSession, host: str, site: str, what: str, shared: bool, info: dict[str, Any]) -> Stream:
    """Start the holding shell on the lock host; the shell once it holds the lock."""
    command = _command(ACQUIRE, site, "-s" if shared else "-x", json.dumps(info), str(LEASE_S))
    try:
        shell = session.stream(command, timeout=CONNECT_TIMEOUT * 3, keepalive_s=int(HEARTBEAT_S))
        if shell.readline().startswith(b"locked "):  # what follows stays in the channel for _Watch
            shell.untimed()
            return shell
        done = shell.rest()
    except ChannelError as exc:
        raise CannotRunError(f"cannot take the site lock on {host}: {exc}") from None
    rest, status, error = done.stdout, done.rc, done.stderr.strip()
    if status == BUSY:
        raise refusal(site, what, host, parse_holders(host, rest))
    if status == UNSAFE:
        raise _unsafe(host, error)
    raise CannotRunError(f"cannot take the site lock on {host}: {error or f'exit status {status}'}",
                         hint="the lock host needs bash, flock (util-linux) and a writable /run/lock")


@contextmanager
def held_on_site(cluster: Cluster, overrides: ConnectionOverrides, what: str, *, shared: bool,
                 state_dir: Path, on_lost: Callable[[str], None]) -> Iterator[str]:
    """Hold the site's lock on its lock host for the block; refuse (CannotRunError, exit 3) naming
    the holders if another run holds it. Yields the lock host's name; ``on_lost(why)`` is called
    (from another thread) as soon as the lock is lost."""
    host = lock_host(cluster)
    session = _connect(host, overrides)
    try:
        shell = _acquire(session, host.name, cluster.name, what, shared, holder_info(what, shared, state_dir))
        stop = threading.Event()
        watch = threading.Thread(target=_watch, args=(shell, host.name, stop, on_lost), daemon=True,
                                 name="site-lock")
        watch.start()
        try:
            yield host.name
        finally:
            stop.set()
            watch.join(timeout=HEARTBEAT_S)
            # end of input: the holding shell leaves its loop and the flock, released when this
            # returns (a next run finds it free); a lost session has nothing left to release
            shell.end_input(HEARTBEAT_S)
            shell.close()
    finally:
        session.close()


def show(cluster: Cluster, overrides: ConnectionOverrides) -> tuple[str, list[Holder]]:
    """The lock host and every holder it lists (stale ones, and files racfg did not write, too)."""
    host = lock_host(cluster)
    session = _connect(host, overrides)
    try:
        status, out, err = _run(session, host.name, SHOW, cluster.name)
    finally:
        session.close()
    if status != 0:
        raise CannotRunError(f"cannot read the site lock on {host.name}: {err.strip() or f'exit status {status}'}")
    return host.name, parse_holders(host.name, out)


def break_holders(cluster: Cluster, overrides: ConnectionOverrides, holders: list[Holder]) -> list[int]:
    """End these holders' shells on the lock host (which drops their flock) and remove their holder
    files; returns the shell pids that were still running. Files racfg did not write are left."""
    host = lock_host(cluster)
    session = _connect(host, overrides)
    try:
        pids = [str(h.shell_pid) for h in holders if not h.planted]
        _status, out, _err = _run(session, host.name, BREAK, cluster.name, *pids)
    finally:
        session.close()
    return [int(line.split()[1]) for line in out.splitlines() if line.startswith("ended ")]
