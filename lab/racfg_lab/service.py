"""A lab service: a small server process the lab runs on this machine for its hosts.

The lab's time server and its HTTP file server are run the same way: ``python -m <module> ARGS``
started by ``lab up`` in its own session (it outlives the command), bound to the management
gateway address on the site's bridge, its pid in ``<site dir>/<pidfile>``, its output in
``<site dir>/logs/<name>.log``; ``lab down`` stops it. A pid is only trusted when that process's
command line still names the module (pids are reused), and a process left without its pid file
(a lab directory removed by hand) is still found by its command line, which carries the site.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from racfg_lab.machines import is_running


@dataclass(frozen=True)
class LabService:
    name: str  # its log and pid file names: logs/<name>.log, <name>.pid
    module: str  # run as python -m <module>; also how its processes are recognised
    label: str  # what lab down and leftovers call it

    def pidfile(self, site_dir: Path) -> Path:
        return site_dir / f"{self.name}.pid"

    def start(self, site_dir: Path, *args: str) -> int:
        """Start it with ``args`` (the site directory's name is appended: it labels the process),
        idempotently: a running one is kept."""
        pid = self.running_pid(site_dir)
        if pid is not None:
            return pid
        (site_dir / "logs").mkdir(parents=True, exist_ok=True)
        log = open(site_dir / "logs" / f"{self.name}.log", "ab")  # noqa: SIM115 (the child keeps it)
        proc = subprocess.Popen([sys.executable, "-m", self.module, *args, site_dir.name], stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        log.close()
        self.pidfile(site_dir).write_text(f"{proc.pid}\n")
        return proc.pid

    def running_pid(self, site_dir: Path) -> int | None:
        try:
            pid = int(self.pidfile(site_dir).read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return None
        return pid if self.module.encode() in cmdline else None

    def stray_pids(self, site: str | None = None) -> list[int]:
        """Its processes still running (of one site, or of any lab): for ``lab down --all`` and leftovers."""
        return find_pids(lambda argv: self.module in argv and (
            site is None or site in argv[argv.index(self.module) + 1:]))

    def stop(self, site_dir: Path) -> bool:
        """Stop it (SIGTERM, then SIGKILL after a second); True when one was running."""
        pid = self.running_pid(site_dir)
        self.pidfile(site_dir).unlink(missing_ok=True)
        if pid is None:
            return False
        try:
            os.kill(pid, signal.SIGTERM)
            for _ in range(50):
                if not is_running(pid, self.module):  # gone, or a zombie of the process that started it
                    break
                time.sleep(0.02)
            else:
                os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        with contextlib.suppress(ChildProcessError):  # started by this process (a test's lab up): reap it
            os.waitpid(pid, os.WNOHANG)
        return True


def find_pids(match: Callable[[list[str]], bool]) -> list[int]:
    """Processes whose argument vector ``match`` accepts (how strays of a lab are found by name)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if match(argv):
            found.append(int(entry.name))
    return found


def kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
