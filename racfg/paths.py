"""Where racfg finds its Ansible content and keeps its records.

In a checkout the playbooks, roles and validators sit next to the package; in an installed
wheel they are shipped inside it under ``racfg/_ansible``. Callers never care which.
"""

from __future__ import annotations

import os
from pathlib import Path

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


def validators_dir() -> Path:
    return ansible_root() / "validators"


def state_dir() -> Path:
    """Per-project records (runs, baselines): ``$RACFG_STATE_DIR`` or ``./.racfg``."""
    return Path(os.environ.get("RACFG_STATE_DIR", ".racfg")).resolve()


def lab_root() -> Path:
    """Where the virtual lab keeps images and per-site state: ``$RACFG_LAB_DIR`` or /var/lib/racfg/lab."""
    return Path(os.environ.get("RACFG_LAB_DIR", "/var/lib/racfg/lab"))
