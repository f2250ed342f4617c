"""The site lock held on the site itself, so it binds every checkout and every controller.

A lock file in a checkout's ``.racfg/`` only stops a second run from that checkout; two
checkouts, or two machines, deploying one site at once would interleave their changes. So the
lock lives on the site's lock host (its first host in inventory order: every controller finds
the same one): a live SSH session runs ``flock`` (exclusive, or shared for readers) on
``/run/lock/racfg-SITE.lock`` there and writes a holder file beside it saying who holds it
(controller, user, pid, start, command, state directory). The kernel drops the flock when the
session's shell ends, which happens when racfg closes the session, when racfg dies (its socket
closes), or when the controller stops sending its heartbeat for ``LEASE_S`` (a controller that
froze or lost its network): a lock never outlives its holder for long. ``racfg lock show`` lists
the holders, marking a stale one; ``racfg lock break`` ends a holder's shell on the lock host.

Cost: one more SSH connection per run, to one host, open for the run's duration.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import logging
import os
import re
import shlex
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paramiko

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.hostssh import HostSession, HostSshError, SshEndpoint
from racfg.inventory import Cluster
from racfg.inventory.cluster import ClusterHost

LOCK_DIR = "/run/lock"
HEARTBEAT_S = 5.0  # the controller touches its holder file this often
STALE_S = 3 * HEARTBEAT_S  # a holder silent for longer is reported stale (its controller froze or lost the network)
LEASE_S = 45  # the lock host ends a holder silent for this long: the lock expires
CONNECT_TIMEOUT = 10.0
# paramiko's transport thread logs a failed handshake with a traceback; the error racfg raises says it
logging.getLogger("paramiko").setLevel(logging.CRITICAL)
BUSY = 75  # the acquiring shell's exit status when another holds the lock
SHELL_NAME = "racfg-lock"  # $0 of the holding shell: how the lock host tells our shells from a reused pid

# $1 site file stem, $2 flock mode (-x/-s), $3 holder JSON, $4 lease in seconds.
_LIST = r"""
now=$(date +%s)
for f in "$d"/racfg-"$1".*.json; do
  [ -e "$f" ] || continue
  p=${f%.json}; p=${p##*.}
  if grep -qa racfg-lock "/proc/$p/cmdline" 2>/dev/null; then a=1; else a=0; fi
  printf 'holder %s %s %s %s\n' "$p" "$a" "$((now - $(stat -c %Y "$f")))" "$(head -c 4000 "$f" | tr -d '\n')"
done
"""
ACQUIRE = r"""
d=/run/lock; mkdir -p "$d"; L="$d/racfg-$1.lock"; H="$d/racfg-$1.$$.json"
if [ -e "$L" ]; then exec 9<"$L"; else exec 9>"$L"; fi || exit 3
if ! flock -n "$2" 9; then
  echo busy
  LIST
  exit 75
fi
printf '%s\n' "$3" > "$H"
trap 'rm -f "$H"' EXIT
trap 'exit 0' HUP TERM INT
echo "locked $$"
while IFS= read -r -t "$4" _; do touch -c "$H"; done
""".replace("LIST", _LIST)
SHOW = 'd=/run/lock\n' + _LIST
# $1 site file stem, $2... pids to end: only our own shells (by $0), then their holder files.
BREAK = r"""
d=/run/lock; s=$1; shift
for p in "$@"; do
  if grep -qa racfg-lock "/proc/$p/cmdline" 2>/dev/null; then
    kill -TERM "$p"; sleep 0.5; kill -KILL "$p" 2>/dev/null; echo "ended $p"
  fi
  rm -f "$d/racfg-$s.$p.json"
done
"""


def lock_host(cluster: Cluster) -> ClusterHost:
    """The host that holds the site's lock: the first in inventory order, the same for every controller."""
    if not cluster.hosts:
        raise CannotRunError(f"site {cluster.name} has no host to hold its lock on")
    return cluster.hosts[0]


def _stem(site: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", site)


@dataclass(frozen=True)
class Holder:
    """One holder of a site's lock, as its lock host reports it."""

    host: str  # the lock host
    shell_pid: int  # the shell holding the flock on the lock host
    alive: bool  # that shell still runs
    silent_s: int  # seconds since its controller's last heartbeat
    info: dict[str, Any] = field(default_factory=dict)  # what the holder wrote: controller, user, pid, ...

    @property
    def stale_reason(self) -> str | None:
        """Why this holder no longer holds the lock for a live run, or None if it does."""
        if not self.alive:
            return f"its shell on {self.host} is gone (a leftover holder file)"
        if self.silent_s > STALE_S:
            return f"no heartbeat from its controller for {self.silent_s} s (the lock expires after {LEASE_S} s)"
        pid = self.info.get("pid")
        if self.info.get("controller") == socket.gethostname() and isinstance(pid, int) and not _pid_alive(pid):
            return f"its racfg (pid {pid}) on this controller is dead"
        return None

    def describe(self) -> str:
        i = self.info
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
    """The ``holder PID ALIVE SILENT JSON`` lines the lock host printed."""
    holders = []
    for line in text.splitlines():
        parts = line.split(" ", 4)
        if len(parts) < 4 or parts[0] != "holder":
            continue
        try:
            info = json.loads(parts[4]) if len(parts) == 5 else {}
        except ValueError:
            info = {}
        holders.append(Holder(host, int(parts[1]), parts[2] == "1", int(parts[3]),
                              info if isinstance(info, dict) else {}))
    return holders


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
             f"(the lock is {LOCK_DIR}/racfg-{_stem(site)}.lock on {host})")


def _connect(host: ClusterHost, overrides: ConnectionOverrides) -> paramiko.SSHClient:
    """One connection to the lock host, opened by the SSH layer every host command uses (racfg.hostssh):
    the same host-key checking and keepalives as validate's and smoke's."""
    session = HostSession(SshEndpoint.of(host, overrides))
    try:
        session.connect()
    except HostSshError as exc:
        raise CannotRunError(f"{exc.message}; {host.name} holds the site lock",
                             hint="the site lock lives on the first host of the inventory; it must be reachable"
                             ) from None
    assert session.client is not None
    return session.client


def _run(client: paramiko.SSHClient, host: str, script: str, *args: str) -> tuple[int, str, str]:
    command = "bash -c " + shlex.join([script, SHELL_NAME, *args])
    try:
        _stdin, stdout, stderr = client.exec_command(command, timeout=CONNECT_TIMEOUT * 3)
        out, err = stdout.read().decode(errors="replace"), stderr.read().decode(errors="replace")
        return stdout.channel.recv_exit_status(), out, err
    except (paramiko.SSHException, OSError) as exc:
        raise CannotRunError(f"cannot read the site lock on {host}: {str(exc) or type(exc).__name__}") from None


def _heartbeat(channel: paramiko.Channel, stop: threading.Event, lost: list[str]) -> None:
    while not stop.wait(HEARTBEAT_S):
        try:
            channel.sendall(b"\n")
        except (OSError, paramiko.SSHException) as exc:
            lost.append(str(exc) or type(exc).__name__)
            return


def _acquire(client: paramiko.SSHClient, host: str, site: str, what: str, shared: bool,
             info: dict[str, Any]) -> paramiko.Channel:
    """Start the holding shell on the lock host; its channel once it holds the lock."""
    transport = client.get_transport()
    assert transport is not None
    transport.set_keepalive(int(HEARTBEAT_S))
    try:
        channel = transport.open_session(timeout=CONNECT_TIMEOUT)
        channel.exec_command("bash -c " + shlex.join([ACQUIRE, SHELL_NAME, _stem(site), "-s" if shared else "-x",
                                                      json.dumps(info), str(LEASE_S)]))
        channel.settimeout(CONNECT_TIMEOUT * 3)
        output = channel.makefile("r")
        first = output.readline().strip()
        if first.startswith("locked "):
            channel.settimeout(None)
            return channel
        rest = output.read().decode(errors="replace")
        status = channel.recv_exit_status()
        error = channel.makefile_stderr("r").read().decode(errors="replace").strip()
    except (paramiko.SSHException, OSError) as exc:  # socket.timeout is an OSError
        raise CannotRunError(f"cannot take the site lock on {host}: {str(exc) or type(exc).__name__}") from None
    if status == BUSY:
        raise refusal(site, what, host, parse_holders(host, rest))
    raise CannotRunError(f"cannot take the site lock on {host}: {error or f'exit status {status}'}",
                         hint="the lock host needs bash, flock (util-linux) and a writable /run/lock")


@contextmanager
def held_on_site(cluster: Cluster, overrides: ConnectionOverrides, what: str, *, shared: bool,
                 state_dir: Path) -> Iterator[list[str]]:
    """Hold the site's lock on its lock host for the block; refuse (CannotRunError, exit 3) naming
    the holders if another run holds it. Yields a list that names why, if the lock was lost."""
    host = lock_host(cluster)
    client = _connect(host, overrides)
    try:
        channel = _acquire(client, host.name, cluster.name, what, shared, holder_info(what, shared, state_dir))
        stop, lost = threading.Event(), []
        beat = threading.Thread(target=_heartbeat, args=(channel, stop, lost), daemon=True, name="site-lock")
        beat.start()
        try:
            yield lost
        finally:
            stop.set()
            beat.join(timeout=HEARTBEAT_S)
            with contextlib.suppress(OSError, paramiko.SSHException):  # a lost session has nothing left to release
                channel.shutdown_write()  # end of input: the holding shell leaves its loop and the flock
                channel.status_event.wait(HEARTBEAT_S)  # released when this returns: a next run finds it free
            channel.close()
    finally:
        client.close()


def show(cluster: Cluster, overrides: ConnectionOverrides) -> tuple[str, list[Holder]]:
    """The lock host and every holder it lists (stale ones too)."""
    host = lock_host(cluster)
    client = _connect(host, overrides)
    try:
        status, out, err = _run(client, host.name, SHOW, _stem(cluster.name))
    finally:
        client.close()
    if status != 0:
        raise CannotRunError(f"cannot read the site lock on {host.name}: {err.strip() or f'exit status {status}'}")
    return host.name, parse_holders(host.name, out)


def break_holders(cluster: Cluster, overrides: ConnectionOverrides, holders: list[Holder]) -> list[int]:
    """End these holders' shells on the lock host (which drops their flock) and remove their holder
    files; returns the shell pids that were still running."""
    host = lock_host(cluster)
    client = _connect(host, overrides)
    try:
        _status, out, _err = _run(client, host.name, BREAK, _stem(cluster.name), *(str(h.shell_pid) for h in holders))
    finally:
        client.close()
    return [int(line.split()[1]) for line in out.splitlines() if line.startswith("ended ")]
