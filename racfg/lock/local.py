"""One writer per site at a time: an flock'ed file that says who holds it.

A second ``racfg deploy`` on a site while one runs must be refused with the holder's pid and
start time, not queue silently or interleave changes. Readers (drift, ``deploy --check``) take
the same lock shared: any number of them run together, none runs beside a deploy. The kernel
drops an flock when its process dies, so a crashed or killed run never leaves a stale lock.

``site_change_lock`` is what commands that touch a site take: this checkout's lock (cheap, no
network, the same message as before for a second run from one checkout) and then the site's own
lock on its lock host (racfg.lock.site_lock), which binds other checkouts and other controllers.
A run whose site lock is lost stops (SiteLock) and exits 3: one writer means one writer
throughout, not one writer while the lock host stayed up.
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
from dataclasses import dataclass, field
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


class Stop(threading.Event):
    """Set when a run must stop, with why: a signal ("Ctrl-C", "SIGTERM") or a lost site lock.

    ``insisted``: asked more than once (a second Ctrl-C): a run that waits for its module
    processes on the hosts to end stops waiting and stops them now."""

    def __init__(self) -> None:
        super().__init__()
        self.reasons: list[str] = []

    def request(self, reason: str) -> None:
        self.reasons.append(reason)
        self.set()

    @property
    def reason(self) -> str | None:
        return self.reasons[0] if self.reasons else None

    @property
    def insisted(self) -> bool:
        return len(self.reasons) > 1


class LockLostError(CannotRunError):
    """The site lock was lost while a run held it: the run stopped (exit 3)."""


@dataclass
class SiteLock:
    """The site lock a run holds, and what a loss of it does to the run.

    Why a loss stops the run: once the lock is gone another run may start beside this one and
    interleave its changes, and this run can no longer say that nobody changed the site under it.
    A loss sets every registered Stop (deploy's, which stops its play as Ctrl-C does); a run that
    registered none is interrupted as by Ctrl-C (SIGINT to the main thread: drift and smoke stop
    and clean up as they do then). Either way the run ends with exit 3 saying why (``error``)."""

    site: str
    holder: str
    shared: bool
    host: str = ""
    lost: str | None = None  # why, once lost
    reports_loss: bool = False  # the holder reports a loss in its own outcome (deploy): no error here
    stops: list[Stop] = field(default_factory=list)

    def lose(self, why: str) -> None:
        """Called from the lock's watch thread as soon as the lock is gone."""
        if self.lost is not None:
            return
        self.lost = why
        print(f"racfg: the site lock of {self.site} was lost ({why}): stopping this {self.holder}", file=sys.stderr)
        if self.stops:
            for stop in list(self.stops):
                stop.request(f"the site lock was lost: {why}")
        elif callable(signal.getsignal(signal.SIGINT)) and threading.main_thread().ident is not None:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    @contextmanager
    def stopping(self, stop: Stop) -> Iterator[None]:
        """While the block runs, a loss requests ``stop`` (the run's own way to stop) instead of SIGINT.

        After a loss the block ends with the loss's error unless the lock's holder reports it itself
        (``reports_loss``): drift's check-mode deploy stops its play, and then drift stops too."""
        self.stops.append(stop)
        try:
            if self.lost is not None:
                stop.request(f"the site lock was lost: {self.lost}")
            yield
        finally:
            self.stops.remove(stop)
        if self.lost is not None and not self.reports_loss:
            raise self.error()

    def error(self) -> LockLostError:
        changed = ("it changes nothing (it reads), so nothing was changed; its findings are not reported: another "
                   "run may have changed the site while it read") if self.shared else \
            "another run may start beside it, so it did not go on"
        return LockLostError(f"the site lock of {self.site} was lost during this {self.holder} ({self.lost}), "
                             f"so it stopped: {changed}",
                             hint="another run may now hold the lock: `racfg lock show INVENTORY`; run again once "
                                  f"the lock host {self.host} is reachable")


_HELD: dict[str, SiteLock] = {}  # site -> the site lock this process holds (site_change_lock)


@contextmanager
def site_change_lock(cluster: Cluster, overrides: ConnectionOverrides, *, shared: bool = False,
                     holder: str = "deploy", reports_loss: bool = False) -> Iterator[SiteLock]:
    """Hold the site's lock here and on the site for the block (``shared``: as a reader).

    Raises CannotRunError (exit 3) naming the holder (controller, user, pid, start) when another
    run, from this checkout or any other, holds it. A lock lost during the run stops it (SiteLock)
    and ends it with LockLostError (exit 3), unless ``reports_loss``: the caller says it in its own
    outcome (deploy's recap). Within a run that already holds it (drift's check-mode deploy inside
    drift) it is not taken again: one SSH connection to the lock host per run; the outer holder's
    SiteLock is yielded, and the outer holder reports a loss.
    """
    from racfg.lock.site_lock import held_on_site  # paramiko: only for the commands that reach a site

    held = _HELD.get(cluster.name)
    if held is not None and (shared or not held.shared):
        yield held
        return
    lock = SiteLock(cluster.name, holder, shared, reports_loss=reports_loss)
    with site_lock(state_dir() / "locks", cluster.name, "deploy", shared=shared, holder=holder), \
            held_on_site(cluster, overrides, holder, shared=shared, state_dir=state_dir(),
                         on_lost=lock.lose) as host:
        lock.host = host
        _HELD[cluster.name] = lock
        try:
            yield lock
        except KeyboardInterrupt:
            if lock.lost is None:
                raise
            raise lock.error() from None  # the interrupt was the loss's (SiteLock.lose)
        finally:
            del _HELD[cluster.name]
    if lock.lost is not None and not lock.reports_loss:
        raise lock.error()


def _read_holder(fd: int) -> dict[str, object]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return json.loads(os.read(fd, 4096).decode() or "{}")
    except (OSError, ValueError):
        return {}


@contextmanager
def stop_on_signals() -> Iterator[Stop]:
    """While the block runs, SIGINT and SIGTERM request the yielded Stop instead of raising.

    Why: Python raises KeyboardInterrupt at whatever line the main thread is on. Around a run
    that lands sometimes inside the wait for the runner thread (caught, the run is cancelled)
    and sometimes a line before or after it (not caught): the interrupt then escaped, while the
    runner thread, which Python waits for at exit, played the whole play to its end. An event
    is seen wherever the signal lands, and the one loop that waits for the run polls it. This
    also covers a process started with SIGINT ignored (a background job), which Python would
    otherwise leave deaf to ``kill -INT``. Outside the main thread nothing is installed.
    """
    event = Stop()
    if threading.current_thread() is not threading.main_thread():
        yield event
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.getsignal(sig) for sig in signals}

    def _handler(signum: int, frame: object) -> None:
        event.request("Ctrl-C" if signum == signal.SIGINT else "SIGTERM")

    for sig in signals:
        signal.signal(sig, _handler)
    try:
        yield event
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
