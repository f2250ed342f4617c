"""The emulated switch's configuration: running (in memory) and startup (a JSON file on disk).

Only what racfg manages and enforces is modelled: per-port description, MTU, speed, admin
state and PFC; globally PFC, lossless priorities and RoCE. A restart loads startup, so unsaved
changes are lost exactly as on a real switch.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from racfg.catalog import SwitchModel, port_by_index
from racfg_lab.switchcli.routing import RoutingConfig

DEFAULT_MTU = {"onyx": 1500, "eos": 1500, "mlnxos-ib": 4096}


@dataclass
class PortConfig:
    description: str = ""
    mtu: int = 1500
    speed_gbps: float = 100.0
    admin_up: bool = True
    pfc: bool = False
    pfc_priorities: list[int] = field(default_factory=list)  # EOS: per-port no-drop priorities


@dataclass
class SwitchConfig:
    hostname: str
    ports: dict[str, PortConfig]
    pfc: bool = False
    pfc_priorities: list[int] = field(default_factory=list)  # Onyx: global lossless priorities
    roce: bool = False
    l3: RoutingConfig = field(default_factory=RoutingConfig)  # routed ports, VLAN interfaces, BGP

    def copy(self) -> SwitchConfig:
        return copy.deepcopy(self)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> SwitchConfig:
        data = json.loads(text)
        ports = {name: PortConfig(**p) for name, p in data.pop("ports").items()}
        l3 = RoutingConfig.from_dict(data.pop("l3", None))
        return cls(ports=ports, l3=l3, **data)


def factory_config(name: str, platform: str, model: SwitchModel, speed_gbps: float) -> SwitchConfig:
    """Every front-panel port at its defaults: MTU 1500 (IB 4096), admin up, no description."""
    mtu = DEFAULT_MTU.get(platform, 1500)
    ports = {port_by_index(platform, i, model): PortConfig(mtu=mtu, speed_gbps=speed_gbps)
             for i in range(1, model.ports + 1)}
    # Onyx routes once interfaces have addresses; EOS waits for ``ip routing``.
    return SwitchConfig(hostname=name, ports=ports, l3=RoutingConfig(ip_routing=platform == "onyx"))


class ConfigStore:
    """Startup config on disk (written atomically); running config is the caller's object."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "startup-config.json"
        state_dir.mkdir(parents=True, exist_ok=True)

    def load(self) -> SwitchConfig | None:
        try:
            return SwitchConfig.from_json(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def save(self, config: SwitchConfig) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(config.to_json(), encoding="utf-8")
        os.replace(tmp, self.path)


def load_or_factory(store: ConfigStore, factory: SwitchConfig) -> SwitchConfig:
    """Startup config merged over factory defaults (ports the startup lacks keep defaults)."""
    saved = store.load()
    if saved is None:
        return factory
    for name, port in saved.ports.items():
        if name in factory.ports:
            factory.ports[name] = port
    factory.pfc, factory.pfc_priorities, factory.roce = saved.pfc, saved.pfc_priorities, saved.roce
    factory.l3 = saved.l3
    factory.hostname = saved.hostname or factory.hostname
    return factory
