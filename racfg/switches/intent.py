"""Intended switch state, derived from the inventory (a Cluster) or from the rendered Ansible
vars (what the racfg_switch module receives). Both paths produce the same IntendedSwitch, so
``racfg validate``/``drift`` and the playbook agree on what a switch should look like."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from racfg.catalog import SWITCH_MODELS, SwitchModel, port_by_index
from racfg.errors import UsageError


@dataclass(frozen=True)
class IntendedPort:
    port: str  # canonical
    description: str
    mtu: int
    speed_gbps: float | None
    admin_up: bool = True


@dataclass(frozen=True)
class IntendedSwitch:
    """What racfg enforces on one switch: cabled ports, global PFC/RoCE off, unused ports policy."""

    name: str
    platform: str
    model: str
    ports_count: int
    ports_per_slot: int
    ports: dict[str, IntendedPort]
    shutdown_unused: bool = False
    pfc: bool = False
    roce: bool = False
    os_version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def panel_ports(self) -> list[str]:
        """Every front-panel port (canonical), cabled or not."""
        model = SwitchModel(self.model, self.platform, self.ports_count, 100.0, self.ports_per_slot)
        return [port_by_index(self.platform, i, model) for i in range(1, self.ports_count + 1)]

    def managed_ports(self, observed: set[str] | None = None) -> list[str]:
        """Ports racfg touches: the cabled ones, plus unused ones when they are to be shut."""
        if not self.shutdown_unused:
            return list(self.ports)
        ports = list(self.ports)
        for port in self.panel_ports() if observed is None else sorted(observed):
            if port not in self.ports:
                ports.append(port)
        return ports

    def wanted(self, port: str) -> IntendedPort | None:
        """The intended state of any port: cabled ports as inventoried, unused ones shut (or None)."""
        if port in self.ports:
            return self.ports[port]
        if self.shutdown_unused:
            return IntendedPort(port, "", 0, None, admin_up=False)
        return None


def intended_from_vars(
    switch: dict[str, Any], ports: list[dict[str, Any]], fabric: dict[str, Any] | None = None
) -> IntendedSwitch:
    """From the rendered host vars ``racfg_switch``, ``racfg_switch_ports`` and ``racfg_fabric``."""
    fabric = fabric or {}
    try:
        model = SWITCH_MODELS.get(switch["model"])
        per_slot = switch.get("ports_per_slot")
        if per_slot is None:
            per_slot = model.ports_per_slot if model else 0
        intended = {
            p["port"]: IntendedPort(
                port=str(p["port"]),
                description=str(p.get("description") or f"{p.get('host', '')}:{p.get('nic', '')}"),
                mtu=int(p.get("mtu") or fabric.get("switch_mtu") or 9000),
                speed_gbps=float(p["speed_gbps"]) if p.get("speed_gbps") else None,
                admin_up=bool(p.get("admin_up", True)),
            )
            for p in ports
        }
        return IntendedSwitch(
            name=str(switch["name"]),
            platform=str(switch["platform"]),
            model=str(switch["model"]),
            ports_count=int(switch.get("ports_count") or (model.ports if model else len(intended))),
            ports_per_slot=int(per_slot or 0),
            ports=intended,
            shutdown_unused=bool(switch.get("shutdown_unused", False)),
            pfc=bool(fabric.get("pfc", False)),
            roce=bool(fabric.get("roce", False)),
            os_version=switch.get("os_version"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"switch vars are incomplete or invalid: {exc}") from exc
