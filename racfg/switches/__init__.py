"""racfg's switch layer: platform drivers on netmiko (Onyx, EOS, MLNX-OS IB).

Public API::

    get_driver(platform) -> SwitchDriver           # parsers, show commands, render, plan
    intended_for(cluster, name) -> IntendedSwitch  # from a loaded inventory
    intended_from_vars(racfg_switch, racfg_switch_ports, racfg_fabric) -> IntendedSwitch
    resolve_password(credentials, site=, name=) -> str
    SwitchTarget(...), SwitchSession(target).facts() -> SwitchFacts
    read_facts(target) -> SwitchFacts
    apply_switch(target, intended, check=False, save=True) -> ApplyResult
"""

from __future__ import annotations

from racfg.switches.apply import ApplyResult, apply_switch
from racfg.switches.credentials import resolve_password
from racfg.switches.drivers import SwitchDriver, get_driver
from racfg.switches.errors import SwitchAuthError, SwitchConfigError, SwitchCredentialsError, SwitchUnreachable
from racfg.switches.facts import LldpNeighbor, PfcFacts, PortFacts, SwitchFacts
from racfg.switches.intent import IntendedPort, IntendedSwitch, intended_for, intended_from_vars
from racfg.switches.session import SwitchSession, SwitchTarget


def read_facts(target: SwitchTarget) -> SwitchFacts:
    """Interfaces, PFC, version and LLDP of one switch, in one SSH session."""
    with SwitchSession(target) as session:
        return session.facts()


__all__ = [
    "ApplyResult", "IntendedPort", "IntendedSwitch", "LldpNeighbor", "PfcFacts", "PortFacts", "SwitchAuthError",
    "SwitchConfigError", "SwitchCredentialsError", "SwitchDriver", "SwitchFacts", "SwitchSession", "SwitchTarget",
    "SwitchUnreachable", "apply_switch", "get_driver", "intended_for", "intended_from_vars", "read_facts",
    "resolve_password",
]
