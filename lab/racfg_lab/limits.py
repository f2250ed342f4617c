"""The kernel and process limits a lab depends on, checked (and raised) before a host boots.

Every lab host is a systemd-nspawn machine whose processes run as the machine's root, so they
all count against root's per-user limits. The first to run out on a stock machine is
``fs.inotify.max_user_instances`` (128): each booted host's systemd, journald, logind and dbus
hold about six inotify instances, so around the 25th host a machine's systemd cannot start and
the host dies with nspawn's confusing last words ("Exiting PID 1 ... Attempted to remove disk
file system ..."). Rather than a half-built lab, ``lab up`` checks beforehand what the new hosts
need on top of what is in use now: inotify instances and watches, PIDs (kernel and cgroup),
open files, memory, and the kernel's ARP table. That table is one for the whole machine, shared by
every network namespace, and only the machine's own ``net.ipv4.neigh.default.gc_thresh3`` (1024)
bounds it: a 64-host lab whose GPU servers all ping the 16 storage nodes at once (validate's
jumbo matrix) needs about 2000 fresh entries, and past the limit the kernel drops the ARP
requests ("neighbor table overflow!" in dmesg), so the later hosts' pings fail on a healthy fabric.
A sysctl short of what is needed is raised with a printed note, the original is recorded under
the lab root and put back when the last lab goes down; where it may not be raised
(``RACFG_LAB_RAISE_LIMITS=0``, a read-only /proc/sys, a cgroup limit, memory) ``lab up``
refuses with the exact command that would fix it.

The per-node costs below were measured on this machine kind (bookworm image, booted host,
then after a deploy) and carry a margin; they are estimates, the check is a floor.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import resource
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from racfg.errors import CannotRunError

RAISE_ENV = "RACFG_LAB_RAISE_LIMITS"  # "0"/"no"/"false": never change a sysctl, refuse instead
RECORD_NAME = "raised-sysctls.json"  # under the lab root: {sysctl: {"original": n, "set": n}}
LOCK_NAME = "limits.lock"
MIB = 1024 * 1024


@dataclass(frozen=True)
class NodeCost:
    """What one lab node takes from the machine (measured, with a margin)."""

    inotify_instances: int
    inotify_watches: int
    tasks: int
    open_files: int
    memory_mib: int


# A booted host: 6 inotify instances and 25-31 watches, 8-17 tasks, about 10 MiB after boot and
# 30 MiB after a deploy (64 hosts: 0.6 GiB up, +1.9 GiB after the first deploy). During a deploy
# each host adds an sshd session and Ansible's module processes (tasks, files).
HOST_COST = NodeCost(inotify_instances=8, inotify_watches=64, tasks=48, open_files=256, memory_mib=32)
# A switch: its CLI (a Python process) and lldpd; no systemd inside.
SWITCH_COST = NodeCost(inotify_instances=0, inotify_watches=0, tasks=8, open_files=64, memory_mib=48)
# What the controller itself needs on top (racfg, ansible-playbook and its forks, ssh masters).
CONTROLLER_TASKS = 512
CONTROLLER_FILES_PER_HOST = 16  # ssh ControlMaster sockets, pipes to forks
# ARP entries: any two nodes (the controller counts: it is every host's management peer) may
# resolve each other on each network they share, the management network and up to two data
# subnets, and both ends keep an entry.
NEIGHBOUR_NETWORKS = 3
NEIGHBOUR_LIMIT = "net.ipv4.neigh.default.gc_thresh3"
MIN_RAISE = {"fs.inotify.max_user_instances": 1024}  # raise once to a generous value, not per lab


@dataclass
class Usage:
    """What is in use on the machine now (root's inotify, tasks, files) and what memory is free."""

    inotify_instances: int
    inotify_watches: int
    tasks: int
    open_files: int
    mem_available_mib: int
    cgroup_pids: tuple[Path, int, int] | None = None  # (pids.max file, max, current) when limited
    neighbours: int = 0  # IPv4 ARP entries of all namespaces together


@dataclass
class Shortfall:
    """One limit a lab of this size would exceed."""

    name: str  # a sysctl name, "RLIMIT_NOFILE", "memory" or a cgroup file
    have: int
    need: int
    why: str
    raise_to: int | None = None  # a sysctl or rlimit racfg may raise, to this value
    fix: str = ""  # the exact command that fixes it by hand

    def describe(self) -> str:
        return f"{self.name} is {self.have}, a lab this size needs at least {self.need} ({self.why})"


class Sysctls:
    """Reads and writes ``/proc/sys`` (or a stand-in directory, for tests) by dotted name."""

    def __init__(self, root: Path = Path("/proc/sys")) -> None:
        self.root = root

    def path(self, name: str) -> Path:
        return self.root / name.replace(".", "/")

    def read(self, name: str) -> int:
        return int(self.path(name).read_text().split()[0])

    def write(self, name: str, value: int) -> None:
        """Raises OSError when the kernel (or a read-only /proc/sys) refuses."""
        self.path(name).write_text(f"{value}\n")


def measure_usage(proc: Path = Path("/proc")) -> Usage:
    """Root's inotify instances and watches, all tasks, allocated files, MemAvailable and the ARP
    table's entries, now."""
    instances = watches = tasks = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            tasks += len(os.listdir(entry / "task"))
            if entry.stat().st_uid != 0:
                continue
            for fd in os.listdir(entry / "fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(entry / "fd" / fd) == "anon_inode:inotify":
                        instances += 1
                        watches += (entry / "fdinfo" / fd).read_text().count("inotify wd:")
    open_files = int((proc / "sys/fs/file-nr").read_text().split()[0])
    return Usage(instances, watches, tasks, open_files, _mem_available_mib(proc), _cgroup_pids(proc),
                 _arp_entries(proc))


def _arp_entries(proc: Path) -> int:
    """Entries of the machine's ARP table, all namespaces together: the first (hex) column of
    ``/proc/net/stat/arp_cache``, the same on every CPU's line."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int((proc / "net/stat/arp_cache").read_text().splitlines()[1].split()[0], 16)
    return 0


def _mem_available_mib(proc: Path) -> int:
    for line in (proc / "meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) // 1024
    return 0


def _cgroup_pids(proc: Path) -> tuple[Path, int, int] | None:
    """The pids controller limit of this process's cgroup (v2 or v1), when there is one."""
    with contextlib.suppress(OSError):
        for line in (proc / "self/cgroup").read_text().splitlines():
            number, controllers, path = line.split(":", 2)
            if number == "0" and not controllers:
                base = Path("/sys/fs/cgroup") / path.lstrip("/")
            elif "pids" in controllers.split(","):
                base = Path("/sys/fs/cgroup/pids") / path.lstrip("/")
            else:
                continue
            limit_file = base / "pids.max"
            with contextlib.suppress(OSError, ValueError):
                limit = limit_file.read_text().strip()
                if limit != "max":
                    return limit_file, int(limit), int((base / "pids.current").read_text())
    return None


def _next_power_of_two(value: int) -> int:
    return 1 << max(value - 1, 1).bit_length()


def shortfalls(hosts: int, switches: int, usage: Usage, sysctls: Sysctls,
               nofile: tuple[int, int] | None = None) -> list[Shortfall]:
    """Every limit that ``hosts`` more lab hosts and ``switches`` more switches would exceed."""
    def need(per: Callable[[NodeCost], int]) -> int:
        return hosts * per(HOST_COST) + switches * per(SWITCH_COST)

    found: list[Shortfall] = []

    def sysctl(name: str, in_use: int, needed: int, why: str, ceiling: int | None = None) -> None:
        have = sysctls.read(name)
        if have >= needed:
            return
        target = max(_next_power_of_two(needed), MIN_RAISE.get(name, 0))
        if ceiling is not None:
            target = min(target, ceiling)
        found.append(Shortfall(name, have, needed, f"{in_use} in use, {why}", target,
                               f"sysctl -w {name}={target}"))

    sysctl("fs.inotify.max_user_instances", usage.inotify_instances,
           usage.inotify_instances + need(lambda c: c.inotify_instances) + 16,
           f"each host's systemd takes about {HOST_COST.inotify_instances} of root's")
    sysctl("fs.inotify.max_user_watches", usage.inotify_watches,
           usage.inotify_watches + need(lambda c: c.inotify_watches) + 1024,
           f"about {HOST_COST.inotify_watches} per host")
    tasks = usage.tasks + need(lambda c: c.tasks) + CONTROLLER_TASKS
    task_why = f"about {HOST_COST.tasks} per host during a deploy"
    sysctl("kernel.pid_max", usage.tasks, tasks, task_why, ceiling=4 * 1024 * 1024)
    sysctl("kernel.threads-max", usage.tasks, tasks, task_why)
    sysctl("fs.file-max", usage.open_files, usage.open_files + need(lambda c: c.open_files) + 4096,
           f"about {HOST_COST.open_files} per host")
    nodes = hosts + switches + 1
    sysctl(NEIGHBOUR_LIMIT, usage.neighbours, usage.neighbours + NEIGHBOUR_NETWORKS * nodes * nodes,
           "ARP entries, one table for all namespaces: each pair of nodes may resolve each other "
           f"on each of up to {NEIGHBOUR_NETWORKS} networks")
    if usage.cgroup_pids is not None:
        limit_file, limit, current = usage.cgroup_pids
        wanted = current + need(lambda c: c.tasks) + CONTROLLER_TASKS
        if limit < wanted:
            found.append(Shortfall(str(limit_file), limit, wanted,
                                   f"the PID limit of racfg's cgroup, {current} in use, {task_why}",
                                   fix=f"echo {wanted} > {limit_file}"))
    if nofile is not None:
        soft, hard = nofile
        wanted = 1024 + hosts * CONTROLLER_FILES_PER_HOST
        if soft < wanted:
            # Root may raise its own hard limit up to fs.nr_open; the change is this process's only.
            found.append(Shortfall("RLIMIT_NOFILE", soft, wanted, "open files of racfg and the processes it starts "
                                   f"(hard limit {hard})", raise_to=wanted, fix=f"ulimit -n {wanted}"))
    memory = need(lambda c: c.memory_mib)
    if usage.mem_available_mib < memory:
        found.append(Shortfall("memory", usage.mem_available_mib, memory,
                               f"MiB available; about {HOST_COST.memory_mib} MiB per host, "
                               f"{SWITCH_COST.memory_mib} MiB per switch",
                               fix="free memory (stop other labs: `racfg lab status`) or use an inventory with "
                                   "fewer hosts"))
    return found


def raising_allowed() -> bool:
    return os.environ.get(RAISE_ENV, "1").strip().lower() not in ("0", "no", "false", "off")


@contextlib.contextmanager
def _locked(record_dir: Path) -> Iterator[None]:
    """One process at a time reads, raises, records or restores the sysctls."""
    record_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(record_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _load_record(record_dir: Path) -> dict[str, dict[str, int]]:
    try:
        return json.loads((record_dir / RECORD_NAME).read_text())
    except (FileNotFoundError, ValueError):
        return {}


def _save_record(record_dir: Path, record: dict[str, dict[str, int]]) -> None:
    path = record_dir / RECORD_NAME
    if not record:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def ensure(hosts: int, switches: int, record_dir: Path, say: Callable[[str], None], *,
           sysctls: Sysctls | None = None, usage: Usage | None = None,
           nofile: tuple[int, int] | None = None, allow_raise: bool | None = None) -> list[str]:
    """Make sure the machine can hold ``hosts`` and ``switches`` more lab nodes, or refuse.

    Raises what may be raised (each with a note through ``say``; sysctls' originals are recorded
    in ``record_dir`` for :func:`restore`), and raises CannotRunError naming every limit that
    stays short, with the commands that fix them. Returns the notes.
    """
    sysctls = sysctls or Sysctls()
    allow = raising_allowed() if allow_raise is None else allow_raise
    real_nofile = nofile is None  # a stand-in limit (tests) is checked, never applied to this process
    limits = resource.getrlimit(resource.RLIMIT_NOFILE) if nofile is None else nofile
    notes: list[str] = []
    with _locked(record_dir):
        found = shortfalls(hosts, switches, usage or measure_usage(), sysctls, limits)
        refused: list[tuple[Shortfall, str]] = []
        record = _load_record(record_dir)
        for short in found:
            if short.raise_to is None:
                refused.append((short, ""))
                continue
            if not allow:
                refused.append((short, f"{RAISE_ENV}=0 forbids racfg to raise it"))
                continue
            try:
                if short.name == "RLIMIT_NOFILE":
                    if real_nofile:
                        resource.setrlimit(resource.RLIMIT_NOFILE, (short.raise_to, max(limits[1], short.raise_to)))
                    notes.append(f"raised racfg's open files limit from {short.have} to {short.raise_to}")
                    continue
                sysctls.write(short.name, short.raise_to)
            except (OSError, ValueError) as exc:
                refused.append((short, f"racfg could not raise it: {getattr(exc, 'strerror', None) or exc}"))
                continue
            record.setdefault(short.name, {"original": short.have, "set": short.raise_to})["set"] = short.raise_to
            notes.append(f"raised {short.name} from {short.have} to {short.raise_to} ({short.why}); "
                         "restored when the last lab goes down")
        _save_record(record_dir, record)
    for note in notes:
        say(note)
    if refused:
        raise CannotRunError(
            f"this machine's limits are too low for a lab of {hosts} hosts: "
            + "; ".join(s.describe() + (f", and {reason}" if reason else "") for s, reason in refused),
            hint="; ".join(s.fix for s, _ in refused if s.fix)
            + ("" if all(s.raise_to is None for s, _ in refused) else
               " (as root; put sysctls in /etc/sysctl.d/ to keep them)"),
        )
    return notes


def restore(record_dir: Path, idle: Callable[[], bool], *, sysctls: Sysctls | None = None) -> list[str]:
    """Put back the sysctls racfg raised, once no lab is up or being built (``idle()``).

    A value someone changed since racfg set it is left alone (it is theirs now). Returns notes.
    """
    sysctls = sysctls or Sysctls()
    notes: list[str] = []
    with _locked(record_dir):
        record = _load_record(record_dir)
        if not record or not idle():
            return notes
        for name, values in sorted(record.items()):
            with contextlib.suppress(OSError, ValueError):
                if sysctls.read(name) == values["set"]:
                    sysctls.write(name, values["original"])
                    notes.append(f"restored {name} to {values['original']}")
        _save_record(record_dir, {})
    return notes
