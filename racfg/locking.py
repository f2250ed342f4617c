"""One writer per site at a time: an flock'ed file that says who holds it.

A second ``racfg deploy`` on a site while one runs must be refused with the holder's pid and
start time, not queue silently or interleave changes. Readers (drift, ``deploy --check``) take
the same lock shared: any number of them run together, none runs beside a deploy. The kernel
drops an flock when its process dies, so a crashed or killed run never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from racfg.errors import CannotRunError


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


def _read_holder(fd: int) -> dict[str, object]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return json.loads(os.read(fd, 4096).decode() or "{}")
    except (OSError, ValueError):
        return {}
