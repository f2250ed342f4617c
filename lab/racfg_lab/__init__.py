"""The virtual lab: an inventory's hosts, switches and cabling as real Linux machines on one host.

``racfg lab up FILE`` builds it (see lifecycle.py), ``racfg lab down`` removes it (teardown.py).
The rest of racfg reaches a running lab through the functions re-exported here.

The exports are lazy (PEP 562): every emulated switch CLI process (``racfg_lab.switchcli``)
imports this package as its parent, and must not pay for the inventory model and pydantic.
``from racfg_lab import up, lab_exec, ...`` works as before.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "connection_overrides": "api", "is_lab_up": "api", "lab_exec": "api", "lab_known_hosts": "api",
    "lab_ssh_config": "api", "cut_switch_session": "api",
    "lab_ssh_key": "api", "rekey_switch": "api", "restart_switch": "api", "set_link": "api", "start_host": "api",
    "start_switch": "api", "stop_host": "api", "stop_switch": "api", "switch_password": "api",
    "swap_cables": "api", "unswap_cables": "api",
    "down": "lifecycle", "up": "lifecycle", "leftovers": "teardown", "teardown_all": "teardown",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'racfg_lab' has no attribute {name!r}")
    value = getattr(import_module(f"racfg_lab.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = sorted(_EXPORTS)
