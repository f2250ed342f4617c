"""CPU-seconds of a command, split into the controller's share and the lab machines' share.

The controller's share is what racfg and everything it starts used (ansible-playbook, its forks,
ssh): the kernel adds a waited-for descendant's utime+stime to its parent's children rusage, so
the delta of ``getrusage(RUSAGE_CHILDREN)`` around the command counts the whole tree. Two kinds
of descendants escape that: ssh ControlMaster processes (they daemonise, outlive the command
and keep encrypting for the next one) and anything else orphaned. This process makes itself a
child subreaper, so orphans are re-parented to it: dead ones are reaped (and counted), live
ssh masters are counted by the growth of their /proc times.

The lab machines' share is read from /proc: every process in a host's network namespace,
its own times plus its reaped children's (cutime+cstime), so short-lived module runs count.
Linux only; needs root for other processes' /proc entries.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Orphans of the commands we run (daemonised ssh masters) become our children."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _reap() -> None:
    """Wait for every dead child (orphans adopted as subreaper): their times enter RUSAGE_CHILDREN."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _stat(pid: int | str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm_end = text.rindex(")")
    return [text[text.index("(") + 1:comm_end], *text[comm_end + 2:].split()]


def _times(fields: list[str], children: bool = True) -> float:
    """utime+stime (and cutime+cstime) in seconds; fields[0] is comm, fields[1] the state."""
    ticks = int(fields[12]) + int(fields[13])
    if children:
        ticks += int(fields[14]) + int(fields[15])
    return ticks / TICK


def _adopted_ssh() -> dict[int, float]:
    """Live ssh processes re-parented to us: pid -> CPU-seconds so far."""
    me = str(os.getpid())
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(entry)
            if fields and fields[0] == "ssh" and fields[2] == me:
                found[int(entry)] = _times(fields)
    return found


class ControllerClock:
    """The CPU-seconds this process's descendants used since the last reading."""

    def __init__(self) -> None:
        become_subreaper()
        self._ssh: dict[int, float] = {}
        self._children = 0.0
        self.read()

    def read(self) -> float:
        _reap()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        children = usage.ru_utime + usage.ru_stime
        ssh = _adopted_ssh()
        # a master that died was reaped above: its full time is in ``children`` now, so stop
        # counting its growth; a live one counts by what it added since the last reading
        grown = sum(cpu - self._ssh.get(pid, 0.0) for pid, cpu in ssh.items())
        gone = sum(cpu for pid, cpu in self._ssh.items() if pid not in ssh)
        spent = children - self._children + grown - gone
        self._children, self._ssh = children, ssh
        return spent


def netns_inodes(prefix: str) -> dict[int, str]:
    """Network namespaces named ``prefix*`` under /run/netns: inode -> name."""
    found = {}
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir("/run/netns"):
            if name.startswith(prefix):
                with contextlib.suppress(OSError):
                    found[os.stat(f"/run/netns/{name}").st_ino] = name
    return found


def lab_cpu(namespaces: dict[int, str]) -> float:
    """CPU-seconds used so far by every process in the given namespaces (with reaped children)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            inode = os.stat(f"/proc/{entry}/ns/net").st_ino
        except OSError:
            continue
        if inode in namespaces:
            fields = _stat(entry)
            if fields:
                total += _times(fields)
    return total


@dataclass
class Measured:
    rc: int
    wall: float
    controller_cpu: float
    lab_cpu: float
    stdout: str = ""
    stderr: str = ""


def measure(clock: ControllerClock, lab_namespaces: dict[int, str], action: Callable[[], tuple[int, str, str]]
            ) -> Measured:
    """Run ``action`` (which returns rc, stdout, stderr) and account its wall and CPU time."""
    clock.read()
    lab_before = lab_cpu(lab_namespaces)
    start = time.perf_counter()
    rc, out, err = action()
    wall = time.perf_counter() - start
    return Measured(rc, wall, clock.read(), lab_cpu(lab_namespaces) - lab_before, out, err)


def command(argv: list[str], env: dict[str, str], cwd: Path) -> Callable[[], tuple[int, str, str]]:
    """An action for :func:`measure`: run ``argv`` to its end, no stdin."""
    def action() -> tuple[int, str, str]:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=False,
                              stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout, proc.stderr
    return action


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])
