"""How racfg reaches a site's machines, when something other than the inventory says so.

The virtual lab (or any other provider) knows things a site's inventory does not: the SSH key
its machines accept, the host keys they present, the passwords its switches were given. The
command layer asks the provider for these and hands them down as ``ConnectionOverrides``;
deploy, validate, drift, smoke and the switch layer read only this object, so the product never
imports the lab. An inventory's own ``ssh_key`` and switch credential sources are never
overridden by it (see ``ssh_key_for`` and ``switch_password_for``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ConnectionOverrides:
    """Connection facts from a provider (the lab), passed explicitly to every command that connects."""

    provider: str = ""  # "lab" when a running lab supplied these; "" for none
    ssh_key: Path | None = None  # used for hosts whose inventory entry gives no ssh_key
    known_hosts: Path | None = None  # host keys of the provider's machines (strict checking with it)
    switch_passwords: dict[str, str] = field(default_factory=dict, repr=False)  # switch name -> password
    substitutions: tuple[str, ...] = ()  # what the provider replaces (printed once, kept in the run record)
    link_rates_mbit: dict[tuple[str, str], int] = field(default_factory=dict)  # (host, nic) -> shaped line rate
    host_vars: dict[str, Any] = field(default_factory=dict)  # variables the provider sets on every host

    @property
    def active(self) -> bool:
        return bool(self.provider)

    def ssh_key_for(self, inventory_key: str | None) -> str | None:
        """The key to use for a host: the inventory's own, else the provider's."""
        if inventory_key:
            return inventory_key
        return str(self.ssh_key) if self.ssh_key else None


NO_OVERRIDES = ConnectionOverrides()
