"""One operation per site at a time: an flock'ed file that says who holds it.

A second ``racfg deploy`` on a site while one runs must be refused with the holder's pid and
start time, not queue silently or interleave changes. The kernel drops an flock when its
process dies, so a crashed or killed run never leaves a stale lock behind.
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
def site_lock(directory: Path, site: str, purpose: str) -> Iterator[Path]:
    """Hold ``<directory>/<site>-<purpose>.lock`` for the duration of the block.

    Raises CannotRunError (exit 3) naming the holder if another process has it.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{site}-{purpose}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            raise CannotRunError(
                f"another {purpose} of site {site} is running (pid {holder.get('pid', '?')}, "
                f"started {holder.get('started', '?')})",
                hint=f"wait for it to finish; the lock is {path}",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                                 "purpose": purpose}).encode())
        yield path
    finally:
        os.close(fd)  # releases the flock


def _read_holder(fd: int) -> dict[str, object]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return json.loads(os.read(fd, 4096).decode() or "{}")
    except (OSError, ValueError):
        return {}
