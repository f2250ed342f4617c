"""A routing daemon per routed lab switch: FRR's zebra and bgpd inside the switch's namespace.

Why FRR: BGP sessions, best paths and ECMP in the lab are then a real routing stack's (Debian's
``frr`` package), and the routes it computes are the kernel's multipath routes that forward the
hosts' packets. Each routed switch gets its own zebra and bgpd, started in its namespace with
every file (configs, pid files, vty and zserv sockets, logs) in ``<switch dir>/frr``, so
instances never share anything with each other nor with a system-wide ``frr.service`` in the
root namespace (Debian's package starts one with no routing config; it is left alone: it binds
its vty to 127.0.0.1 of the root namespace and its sockets under /run/frr, none of which a lab
instance uses). The daemons drop privileges to the ``frr`` user as packaged, so their directory
belongs to it.

The switch CLI configures bgpd (racfg_lab.switchcli.frrctl); this module only runs the daemons:
``lab up`` starts them before the switch CLI, ``lab down`` stops them and removes their
directory, and processes left behind are found by their command line, which names that directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
import zlib
from pathlib import Path

from racfg.errors import CannotRunError
from racfg_lab import service
from racfg_lab.sh import run
from racfg_lab.switchcli import frrctl
from racfg_lab.switchcli.routing import RoutingConfig, frr_config

USER = "frr"
# Kernel settings of a routed switch's namespace: ECMP by a hash of the 5-tuple (source and destination
# address, protocol, ports: fields 0x37), so that the flows between two hosts spread over the spines as a
# switch ASIC's hash spreads them. The custom policy (3), not the L4 one (1): policy 1 takes the hash a
# TCP sender's stack already put on the packet (random per connection, the same at every hop), so each
# spine would choose among its links to a leaf by the number that chose the spine, and use half of them.
SYSCTLS = {"net.ipv4.fib_multipath_hash_fields": "0x0037", "net.ipv4.fib_multipath_hash_policy": "3"}
# Every namespace hashes with the kernel's one default seed, which polarizes the same way; a switch ASIC
# seeds its hash per switch, and the lab seeds each namespace from the switch's name (kernel 6.11+).
HASH_SEED = "net.ipv4.fib_multipath_hash_seed"


def sysctls(hostname: str) -> dict[str, str]:
    """The kernel settings of ``hostname``'s namespace: SYSCTLS and its own ECMP hash seed (never 0,
    which means the shared default), where the kernel has the setting."""
    settings = dict(SYSCTLS)
    if Path("/proc/sys", *HASH_SEED.split(".")).exists():
        settings[HASH_SEED] = str(zlib.crc32(hostname.encode()) or 1)
    return settings


def frr_dir(switch_dir: Path) -> Path:
    return switch_dir / "frr"


def available() -> bool:
    """zebra, bgpd and vtysh (package frr), and frr-reload.py (frr-pythontools), which applies a config
    change as a difference."""
    return (Path(frrctl.FRR_BIN, "bgpd").exists() and shutil.which(frrctl.VTYSH) is not None
            and Path(frrctl.RELOAD).exists())


def _prepare(directory: Path, hostname: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    frrctl.conf_path(directory, "zebra").write_text(f"hostname {hostname}\n")
    bgpd = frrctl.conf_path(directory, "bgpd")
    if not bgpd.exists():  # the switch CLI writes it from its running config
        bgpd.write_text(frr_config(hostname, RoutingConfig()))
    (directory / "vtysh.conf").write_text("")
    shutil.chown(directory, USER, USER)
    for path in directory.iterdir():
        shutil.chown(path, USER, USER)


# File descriptors a daemon is built for: FRR sizes its event loops' tables by the process's open-file
# limit (20000 under the lab's), a few MiB per daemon; a lab switch's sessions and sockets need under 200.
LIMIT_FDS = 1024


def _argv(netns: str, directory: Path, daemon: str) -> list[str]:
    return ["ip", "netns", "exec", netns, f"{frrctl.FRR_BIN}/{daemon}", "-d", "--limit-fds", str(LIMIT_FDS),
            "-f", str(frrctl.conf_path(directory, daemon)), "-i", str(frrctl.pid_path(directory, daemon)),
            "-z", str(directory / "zserv.api"), "--vty_socket", str(directory), "-P", "0",
            "--log", f"file:{directory / (daemon + '.log')}"]


def start(netns: str, switch_dir: Path, hostname: str, timeout: float = 15.0) -> list[int]:
    """Start zebra then bgpd in ``netns`` (idempotent: running daemons are kept); their pids."""
    if not available():
        raise CannotRunError("FRR is not installed: a routed lab switch needs zebra, bgpd and frr-reload.py",
                             hint="apt-get install frr frr-pythontools (scripts/setup.sh installs them)")
    directory = frr_dir(switch_dir)
    if len(running_pids(switch_dir)) == len(frrctl.DAEMONS):
        return running_pids(switch_dir)
    stop(switch_dir, remove=False)  # one daemon left of two: start both afresh, with the config they had
    _prepare(directory, hostname)
    for key, value in sysctls(hostname).items():
        run(["ip", "netns", "exec", netns, "sysctl", "-q", "-w", f"{key}={value}"])
    for daemon in frrctl.DAEMONS:
        proc = subprocess.run(_argv(netns, directory, daemon), capture_output=True, text=True, check=False)
        if proc.returncode:
            raise CannotRunError(f"FRR {daemon} in {netns} did not start: {(proc.stderr or proc.stdout).strip()}",
                                 hint=f"see {directory / (daemon + '.log')}")
        deadline = time.monotonic() + timeout
        while not frrctl.vty_path(directory, daemon).exists():
            if time.monotonic() > deadline:
                raise CannotRunError(f"FRR {daemon} in {netns} opened no vty socket in {timeout:.0f} s",
                                     hint=f"see {directory / (daemon + '.log')}")
            time.sleep(0.05)
    return running_pids(switch_dir)


def _pid(directory: Path, daemon: str) -> int | None:
    """The daemon's pid from its pid file, trusted only while that process still runs from the
    directory (pids are reused)."""
    try:
        pid = int(frrctl.pid_path(directory, daemon).read_text().strip())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except (OSError, ValueError):
        return None
    return pid if argv.startswith(f"{frrctl.FRR_BIN}/{daemon}") and str(directory) in argv else None


def running_pids(switch_dir: Path) -> list[int]:
    directory = frr_dir(switch_dir)
    return [pid for daemon in frrctl.DAEMONS if (pid := _pid(directory, daemon)) is not None]


def stop(switch_dir: Path, timeout: float = 5.0, *, remove: bool = True) -> bool:
    """Stop the switch's daemons (bgpd first: it withdraws its routes through zebra, then zebra
    removes them from the kernel) and, with ``remove``, their directory. True when one was running."""
    directory = frr_dir(switch_dir)
    pids = [pid for daemon in reversed(frrctl.DAEMONS) if (pid := _pid(directory, daemon)) is not None]
    pids += [p for p in stray_pids(directory) if p not in pids]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while (alive := [p for p in pids if Path(f"/proc/{p}").exists()]) and time.monotonic() < deadline:
        time.sleep(0.05)
    service.kill(alive)
    if remove:
        shutil.rmtree(directory, ignore_errors=True)
    return bool(pids)


def stray_pids(under: Path) -> list[int]:
    """FRR daemons running from a directory under ``under`` (a site's directory, or the lab root):
    for ``lab down`` and the leftovers check when pid files are gone."""
    prefix = str(under).rstrip("/") + "/"
    return service.find_pids(lambda argv: argv[0].startswith(f"{frrctl.FRR_BIN}/")
                             and any(arg.startswith(prefix) for arg in argv[1:]))
