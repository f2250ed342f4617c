"""One writer per site at a time: an flock'ed file that says who holds it.

A second ``racfg deploy`` on a site while one runs must be refused with the holder's pid and
start time, not queue silently or interleave changes. Readers (drift, ``deploy --check``) take
the same lock shared: any number of them run together, none runs beside a deploy. The kernel
drops an flock when its process dies, so a crashed or killed run never leaves a stale lock.

``site_change_lock`` is what commands that touch a site take: this checkout's lock (cheap, no
network, the same message as before for a second run from one checkout) and then the site's own
lock on its lock host (racfg.remote_lock), which binds other checkouts and other controllers.
The lab's own lifecycle lock (``site_lock`` under the lab root) stays local: it guards this machine.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.inventory import Cluster
from racfg.paths import state_dir


@contextmanager
def site_lock(directory: Path, site: str, purpose: str, *, shared: bool = False,
              holder: str | None = None) -> Iterator[Path]:
    """Hold ``<directory>/<site>-<purpose>.lock`` for the duration of the block.

    ``shared`` takes it as a reader (many readers at once, never beside the exclusive holder).
    ``holder`` names what this process is doing ("drift"), for the message another one gets.
    Raises CannotRunError (exit 3) naming the holder if the lock cannot be had.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{site}-{purpose}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            info = _read_holder(fd)
            what = info.get("holder") or info.get("purpose") or purpose
            raise CannotRunError(
                f"another {what} of site {site} is running (pid {info.get('pid', '?')}, "
                f"started {info.get('started', '?')})",
                hint=f"wait for it to finish; the lock is {path}",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                                 "purpose": purpose, "holder": holder or purpose}).encode())
        yield path
    finally:
        os.close(fd)  # releases the flock


_HELD: dict[str, bool] = {}  # site -> shared, for the site locks this process holds (site_change_lock)


@contextmanager
def site_change_lock(cluster: Cluster, overrides: ConnectionOverrides, *, shared: bool = False,
                     holder: str = "deploy") -> Iterator[None]:
    """Hold the site's lock here and on the site for the block (``shared``: as a reader).

    Raises CannotRunError (exit 3) naming the holder (controller, user, pid, start) when another
    run, from this checkout or any other, holds it. A lock lost during the run (the lock host
    rebooted or dropped the session) is said on stderr at the end: the run was not guarded throughout.
    Within a run that already holds it (drift's check-mode deploy inside drift) it is not taken
    again: one SSH connection to the lock host per run.
    """
    from racfg.remote_lock import held_on_site  # paramiko: only for the commands that reach a site

    if cluster.name in _HELD and (shared or not _HELD[cluster.name]):
        yield
        return
    with site_lock(state_dir() / "locks", cluster.name, "deploy", shared=shared, holder=holder), \
            held_on_site(cluster, overrides, holder, shared=shared, state_dir=state_dir()) as lost:
        _HELD[cluster.name] = shared
        try:
            yield
        finally:
            del _HELD[cluster.name]
    if lost:
        print(f"racfg: warning: the site lock of {cluster.name} was lost during this {holder} ({lost[0]}); "
              "another run may have started beside it", file=sys.stderr)


def _read_holder(fd: int) -> dict[str, object]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return json.loads(os.read(fd, 4096).decode() or "{}")
    except (OSError, ValueError):
        return {}


@contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """While the block runs, SIGINT and SIGTERM set the yielded event instead of raising.

    Why: Python raises KeyboardInterrupt at whatever line the main thread is on. Around a run
    that lands sometimes inside the wait for the runner thread (caught, the run is cancelled)
    and sometimes a line before or after it (not caught): the interrupt then escaped, while the
    runner thread, which Python waits for at exit, played the whole play to its end. An event
    is seen wherever the signal lands, and the one loop that waits for the run polls it. This
    also covers a process started with SIGINT ignored (a background job), which Python would
    otherwise leave deaf to ``kill -INT``. Outside the main thread nothing is installed.
    """
    event = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield event
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.getsignal(sig) for sig in signals}

    def _handler(signum: int, frame: object) -> None:
        event.set()

    for sig in signals:
        signal.signal(sig, _handler)
    try:
        yield event
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
