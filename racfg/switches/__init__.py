"""racfg's switch layer: platform drivers on netmiko (Onyx, EOS, MLNX-OS IB).

Public API::

    get_driver(platform) -> SwitchDriver           # parsers, show commands, render, plan
    intended_for(cluster, name) -> IntendedSwitch  # a view of the intended site (racfg.intent)
    intended_from_vars(racfg_switch, racfg_switch_ports, racfg_fabric, racfg_switch_routing) -> IntendedSwitch
    resolve_password(credentials, site=, name=, overrides=) -> str
    switch_passwords({name: credentials}, site=, overrides=) -> {name: password}
    SwitchTarget(...), SwitchSession(target).facts() -> SwitchFacts
    read_facts(target) -> SwitchFacts
    apply_switch(target, intended, check=False, save=True) -> ApplyResult
    plan_from_facts(name, platform, intended, facts) -> ApplyResult   # a check from facts read already
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Lazy exports (PEP 562): the lab's switch CLI imports racfg.switches.ports and must start in
# well under a second, so importing the package must not pull in jinja2 and the drivers.
_EXPORTS = {
    "ApplyResult": "apply", "apply_switch": "apply", "plan_from_facts": "apply", "resolve_password": "credentials",
    "switch_passwords": "credentials",
    "SwitchDriver": "drivers", "get_driver": "drivers", "SwitchAuthError": "switch_errors",
    "SwitchConfigError": "switch_errors", "SwitchCredentialsError": "switch_errors",
    "SwitchUnreachable": "switch_errors", "LldpNeighbor": "facts", "PfcFacts": "facts",
    "PortFacts": "facts", "SwitchFacts": "facts", "IntendedPort": "intent", "IntendedSwitch": "intent",
    "intended_for": "intent", "intended_from_vars": "intent", "SwitchSession": "session", "SwitchTarget": "session",
}

if TYPE_CHECKING:
    from racfg.switches.facts import SwitchFacts
    from racfg.switches.session import SwitchTarget


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(f"racfg.switches.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'racfg.switches' has no attribute {name!r}")


def read_facts(target: SwitchTarget) -> SwitchFacts:
    """Interfaces, PFC, version, LLDP and (where it routes) BGP and routes of one switch, in one SSH session."""
    from racfg.switches.session import SwitchSession

    with SwitchSession(target) as session:
        return session.facts(routing=True)


__all__ = [*sorted(_EXPORTS), "read_facts"]
