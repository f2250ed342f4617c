"""Switch passwords, resolved at run time from where the inventory says they live.

Never written to rendered files or logs: env var, a 0600 file, an ansible-vault file, or
(``lab: true``) the password a connection provider (the virtual lab) hands the command as an
override. The override answers only for ``lab: true``: an inventory that names its own source
(password_env/file/vault) always gets that source, so a lab never masks a real site's secret.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Any

from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.switches.switch_errors import SwitchCredentialsError


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


def resolve_password(credentials: dict[str, Any], *, site: str, name: str,
                     overrides: ConnectionOverrides = NO_OVERRIDES) -> str:
    """The password for switch ``name`` of ``site`` from its credentials reference.

    ``credentials`` is the inventory's Credentials as a dict: one of password_env,
    password_file, password_vault or lab: true (the provider's password, from ``overrides``)."""
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
        password = overrides.switch_passwords.get(name)
        if password:
            return password
        raise SwitchCredentialsError(
            f"switch {name}: credentials say lab: true, but no running lab of site {site!r} supplies its password",
            hint=f"is the lab for site {site!r} up? (racfg lab up INVENTORY)",
        )
    raise SwitchCredentialsError(
        f"switch {name}: no credentials given", hint="set password_env, password_file, password_vault or lab: true"
    )


def switch_passwords(switches: dict[str, dict[str, Any]], *, site: str,
                     overrides: ConnectionOverrides = NO_OVERRIDES) -> dict[str, str]:
    """Every switch's password, {name: password}, from {name: credentials}; raises on the first missing one."""
    return {name: resolve_password(creds, site=site, name=name, overrides=overrides)
            for name, creds in switches.items()}
