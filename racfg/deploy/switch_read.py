"""Every switch of a site read once, all at once: the one read a command shares.

drift needs every switch's facts three times (its config layer plans the switch play from them,
its state layer's validators check them, its environment layer compares them with the baseline),
and a deploy that changes nothing needs them twice (whether the switch play has anything to do,
and the baseline). Each used to log in on its own (a switch session costs seconds, an Onyx login
most of it); here each switch is read once, in parallel, and the same facts serve every use.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from racfg.connection import ConnectionOverrides
from racfg.errors import RacfgError
from racfg.inventory import Cluster
from racfg.ssh.known_hosts import KnownHosts


@dataclass
class SwitchesRead:
    """Each switch's facts (SwitchFacts), or the error that kept it from being read."""

    facts: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, RacfgError] = field(default_factory=dict)

    def for_validate(self) -> dict[str, Any]:
        """name -> SwitchFacts or exception, as ValidateContext.switch_facts holds them."""
        return {**self.facts, **self.errors}

    def as_dicts(self) -> dict[str, dict[str, Any]]:
        """name -> facts document (what the switch play takes and the baseline keeps), read ones only."""
        return {name: facts.to_dict() for name, facts in self.facts.items()}


def read_switches(cluster: Cluster, names: list[str], overrides: ConnectionOverrides) -> SwitchesRead:
    """One session per switch in ``names``, all at once, with the switch drivers."""
    read = SwitchesRead()
    if not names:
        return read  # before the imports: the drivers load netmiko
    from racfg.render.ansible_inventory import switch_vars
    from racfg.switches import SwitchTarget, read_facts, resolve_password

    known = KnownHosts(cluster.known_hosts_file, overrides.known_hosts)

    def one(name: str) -> Any:
        switch = cluster.switches[name]
        try:
            password = resolve_password(switch.spec.credentials.model_dump(), site=cluster.name, name=name,
                                        overrides=overrides)
            return read_facts(SwitchTarget.from_vars(switch_vars(cluster, switch)["racfg_switch"], password,
                                                     known_hosts=known))
        except RacfgError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=min(16, len(names))) as pool:
        for name, result in zip(names, pool.map(one, names), strict=True):
            if isinstance(result, RacfgError):
                read.errors[name] = result
            else:
                read.facts[name] = result
    return read
