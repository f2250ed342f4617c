"""Switch passwords, resolved at run time from where the inventory says they live.

Never written to rendered files or logs: env var, a 0600 file, an ansible-vault file, or
(lab switches) the password the lab generated under its state directory.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Any

from racfg.paths import lab_root
from racfg.switches.errors import SwitchCredentialsError


def lab_password_path(site: str, name: str) -> Path:
    """Where ``racfg lab up`` leaves a lab switch's generated password."""
    return lab_root() / site / "switches" / name / "password"


def _lab_password(site: str, name: str) -> str | None:
    """The password a running lab generated for this switch, or None when no such lab switch is up.

    A switch of a running lab answers only to that password, so it wins over the inventory's
    reference: the same inventory deploys to the lab with nothing exported.
    """
    from racfg.errors import CannotRunError
    from racfg.lab import is_lab_up, switch_password

    if not is_lab_up(site):
        return None
    try:
        return switch_password(site, name)
    except CannotRunError:
        return None


def _file_password(path_text: str, name: str) -> str:
    path = Path(path_text).expanduser()
    try:
        mode = path.stat().st_mode
    except OSError:
        raise SwitchCredentialsError(f"switch {name}: password file {path} does not exist") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SwitchCredentialsError(
            f"switch {name}: password file {path} is readable by others (mode {stat.S_IMODE(mode):o})",
            hint=f"chmod 600 {path}",
        )
    return path.read_text(encoding="utf-8").strip()


def _vault_password(path_text: str, name: str) -> str:
    path = Path(path_text).expanduser()
    if not path.exists():
        raise SwitchCredentialsError(f"switch {name}: vault file {path} does not exist")
    cmd = ["ansible-vault", "view", str(path)]
    vault_file = os.environ.get("ANSIBLE_VAULT_PASSWORD_FILE")
    if vault_file:
        cmd += ["--vault-password-file", vault_file]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise SwitchCredentialsError(
            f"switch {name}: cannot decrypt vault file {path}", hint="set ANSIBLE_VAULT_PASSWORD_FILE"
        )
    return result.stdout.strip()


def resolve_password(credentials: dict[str, Any], *, site: str, name: str) -> str:
    """The password for switch ``name`` of ``site`` from its credentials reference.

    ``credentials`` is the inventory's Credentials as a dict: one of password_env,
    password_file, password_vault or lab: true."""
    lab = _lab_password(site, name)
    if lab is not None:
        return lab
    if credentials.get("password_env"):
        var = str(credentials["password_env"])
        value = os.environ.get(var)
        if not value:
            raise SwitchCredentialsError(
                f"switch {name}: environment variable {var} is not set", hint=f"export {var}=... before running"
            )
        return value
    if credentials.get("password_file"):
        return _file_password(str(credentials["password_file"]), name)
    if credentials.get("password_vault"):
        return _vault_password(str(credentials["password_vault"]), name)
    if credentials.get("lab"):
        raise SwitchCredentialsError(
            f"switch {name}: lab password not found at {lab_password_path(site, name)}",
            hint=f"is the lab for site {site!r} up? (racfg lab up)",
        )
    raise SwitchCredentialsError(
        f"switch {name}: no credentials given", hint="set password_env, password_file, password_vault or lab: true"
    )
