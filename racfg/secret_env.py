"""Which environment variables hold secrets, and the environment a run gets without them.

ansible-runner starts every run from the whole environment of the process that calls it and
writes that environment into the run record (``artifacts/<ident>/command``); Ansible's workers,
ssh and every module on the controller inherit it. A switch password an operator exported for
``password_env`` (``RACFG_SW1_PASSWORD``), or any token of their shell (``GITHUB_TOKEN``,
``AWS_SECRET_ACCESS_KEY``), would land in the record and in every child process. racfg hands a
run its secrets through a private extra-vars file instead (racfg.secret_vars), so a run needs none
of them in its environment, and gets none:

- every variable the inventory names as a password source (``password_env``), whatever its name;
- every variable whose name says it holds a secret (``SECRET_NAME``: password, passphrase, secret,
  token, credential, private/API/access key), except a name ending in ``_FILE``, ``_PATH``,
  ``_DIR`` or ``_SOCK``, whose value names where a secret is (``ANSIBLE_VAULT_PASSWORD_FILE``,
  ``SSH_AUTH_SOCK``), not the secret.

racfg's own process keeps its environment: it reads ``password_env`` there, and a vault password
script it starts (``ansible-vault``) may need the operator's variables.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from racfg.inventory import Cluster

SECRET_NAME = re.compile(
    r"PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|CREDENTIAL|PRIVATE_?KEY|API_?KEY|ACCESS_?KEY|(^|_)PASS($|_)",
    re.IGNORECASE)
LOCATION_SUFFIXES = ("_FILE", "_PATH", "_DIR", "_SOCK")


def holds_secret(name: str, withheld: Iterable[str] = ()) -> bool:
    """Whether variable ``name`` may hold a secret: named in ``withheld``, or named like one (see above)."""
    if name in set(withheld):
        return True
    return bool(SECRET_NAME.search(name)) and not name.upper().endswith(LOCATION_SUFFIXES)


def without_secrets(env: Mapping[str, str], withheld: Iterable[str] = ()) -> dict[str, str]:
    """``env`` less every variable that may hold a secret (``withheld``: names the inventory gives)."""
    names = frozenset(withheld)
    return {name: value for name, value in env.items() if not holds_secret(name, names)}


def password_variables(cluster: Cluster) -> frozenset[str]:
    """Every ``password_env`` the site's switches name, in scope of a run or not: a run that reads
    none of them must not carry them either."""
    return frozenset(s.spec.credentials.password_env for s in cluster.switches.values()
                     if s.spec.credentials.password_env)
