"""Hand secrets to an Ansible run without writing them where runs leave records.

ansible-runner records the full process environment and command line of every run in the run
record (``artifacts/<ident>/command``), so neither may carry a password. A run's secrets go in
an extra-vars file instead, created 0600 in a private 0700 directory on a RAM file system when
there is one (``/dev/shm``), outside the run record, and removed when the run ends. The record
keeps only the file's (by then deleted) path; the roles pass the values to ``no_log`` parameters.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

RAM_DIR = Path("/dev/shm")
SWITCH_PASSWORDS_VAR = "racfg_switch_passwords"  # {switch name: password}; read by roles/switch


@contextmanager
def secret_extravars(values: dict[str, Any]) -> Iterator[Path | None]:
    """A private extra-vars file holding ``values`` for the duration of the block (None when empty)."""
    if not values:
        yield None
        return
    base = RAM_DIR if RAM_DIR.is_dir() and os.access(RAM_DIR, os.W_OK) else None
    directory = Path(tempfile.mkdtemp(prefix="racfg-secrets-", dir=base))
    try:
        path = directory / "vars.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(values, handle)
        yield path
    finally:
        shutil.rmtree(directory, ignore_errors=True)
