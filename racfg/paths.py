"""Where racfg finds its Ansible content and keeps its records.

In a checkout the playbooks, roles and validators sit next to the package; in an installed
wheel they are shipped inside it under ``racfg/_ansible``. Callers never care which.

The state directory is private: only its owner may enter it (0700), and the commands that write
it do so with umask 077 (``private_files``), so every record, report and baseline is 0600 in
directories of 0700, whoever else uses the machine.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from racfg.errors import CannotRunError

PRIVATE_UMASK = 0o077

PACKAGE_DIR = Path(__file__).resolve().parent


def ansible_root() -> Path:
    """Directory holding ``playbooks/``, ``roles/``, ``validators/`` and ``ansible.cfg``."""
    checkout = PACKAGE_DIR.parent
    if (checkout / "playbooks").is_dir() and (checkout / "roles").is_dir():
        return checkout
    return PACKAGE_DIR / "_ansible"


def playbooks_dir() -> Path:
    return ansible_root() / "playbooks"


def roles_dir() -> Path:
    return ansible_root() / "roles"


@functools.cache
def role_defaults(role: str) -> dict[str, Any]:
    """A role's defaults/main.yml: what the role promises, read where validate and render need it."""
    path = roles_dir() / role / "defaults" / "main.yml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def validators_dir() -> Path:
    return ansible_root() / "validators"


def state_dir() -> Path:
    """Per-project records (runs, baselines): ``$RACFG_STATE_DIR`` or ``./.racfg``."""
    return Path(os.environ.get("RACFG_STATE_DIR", ".racfg")).resolve()


def private_state_dir() -> Path:
    """``state_dir()``, made private (``private_dir``): where a command writes its records."""
    return private_dir(state_dir(), "racfg keeps its records there: chown it, or point RACFG_STATE_DIR elsewhere")


def private_dir(path: Path, hint: str = "racfg keeps secrets there: remove it or chown it") -> Path:
    """``path`` as a directory only its owner may enter: created 0700 if missing; an existing one
    is tightened to 0700 if group or others had any access to it.

    Tightened, not refused: a directory of this user is racfg's own (an older racfg, a loose umask
    made it so), and taking the others' access away loses nothing and asks nothing of the operator.
    Refused (exit 3, with ``hint``) when it is not a directory (a symlink included) or belongs to
    another user, who could read what racfg writes there or replace it (OpenSSH refuses such a
    ``~/.ssh``).
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise CannotRunError(f"{path} is not a directory", hint=hint)
    if info.st_uid != os.geteuid():
        raise CannotRunError(f"{path} belongs to uid {info.st_uid}, not to this user (uid {os.geteuid()})",
                             hint=hint)
    if stat.S_IMODE(info.st_mode) & 0o077:
        path.chmod(0o700)
    return path


@contextmanager
def private_files() -> Iterator[None]:
    """Create files 0600 and directories 0700 (umask 077) for the block, this process and the processes
    it starts (ansible-runner, Ansible's workers): a command that writes records. Process-wide, so
    a command's process, never a library call beside other work (the lab keeps its usual modes)."""
    previous = os.umask(PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(previous)


def lab_root() -> Path:
    """Where the virtual lab keeps images and per-site state: ``$RACFG_LAB_DIR`` or /var/lib/racfg/lab."""
    return Path(os.environ.get("RACFG_LAB_DIR", "/var/lib/racfg/lab"))
