"""Hand secrets to an Ansible run without writing them where runs leave records.

ansible-runner records the full process environment and command line of every run in the run
record (``artifacts/<ident>/command``), so neither may carry a password. A run's secrets go in
an extra-vars file instead, created 0600 in a private 0700 directory on a RAM file system when
there is one (``/dev/shm``), outside the run record, and removed when the run ends (or, when racfg
was killed outright, by the next racfg: ``remove_orphans``). The record keeps only the file's (by
then deleted) path; the roles pass the values to ``no_log`` parameters.

The file is YAML with every string ``!unsafe`` (racfg.render.unsafe): Ansible templates what an
extra-vars file holds, so a password with ``{{`` in it would otherwise be evaluated, not passed on.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from racfg.render.unsafe import add_representers, mark_unsafe

RAM_DIR = Path("/dev/shm")
SWITCH_PASSWORDS_VAR = "racfg_switch_passwords"  # {switch name: password}; read by roles/switch
PREFIX = "racfg-secrets-"  # + the pid of the racfg that made it + "-" + mkdtemp's random part


@contextmanager
def secret_extravars(values: dict[str, Any]) -> Iterator[Path | None]:
    """A private extra-vars file holding ``values`` for the duration of the block (None when empty)."""
    if not values:
        yield None
        return
    base = RAM_DIR if RAM_DIR.is_dir() and os.access(RAM_DIR, os.W_OK) else Path(tempfile.gettempdir())
    remove_orphans(base)
    directory = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))
    try:
        path = directory / "vars.yml"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yaml.dump(mark_unsafe(values), handle, Dumper=_SecretDumper)
        yield path
    finally:
        shutil.rmtree(directory, ignore_errors=True)


class _SecretDumper(yaml.SafeDumper):
    """Writes every string ``!unsafe``."""


add_representers(_SecretDumper)


def remove_orphans(base: Path) -> list[Path]:
    """Remove the secret files of racfg processes that are gone; the directories removed.

    Why: a racfg killed outright (SIGKILL, the OOM killer, a machine's lost session) runs no cleanup,
    and its extra-vars file would keep the switch passwords in RAM until a reboot. The next racfg to
    hand a run its secrets removes it: a directory of this user whose pid (in its name) is no longer
    running. A live run's file is never touched (its pid is running), nor one of another user.
    """
    removed = []
    for directory in base.glob(f"{PREFIX}*"):
        pid = directory.name[len(PREFIX):].split("-", 1)[0]
        try:
            if not pid.isdigit() or directory.lstat().st_uid != os.geteuid() or _running(int(pid)):
                continue
        except OSError:
            continue
        shutil.rmtree(directory, ignore_errors=True)
        removed.append(directory)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: is it there (PermissionError: there, another user's)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True
