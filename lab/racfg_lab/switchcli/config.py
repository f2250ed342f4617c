"""cli.json: what the lab tells one emulated switch about itself (see racfg_lab's switch start)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# What the switch prints (to its cli.log) at every accepted login; the lab API counts these lines.
LOGIN_MARK = "switchcli: login"


@dataclass(frozen=True)
class CabledPort:
    ifname: str | None  # the switch-side veth in the switch's netns; None: config state only
    speed_gbps: float
    peer_host: str
    peer_nic: str
    peer_mac: str = ""
    isl: bool = False  # cabled to another switch's port (racfg_lab.routed)


@dataclass
class CliConfig:
    name: str
    platform: str
    model: str
    ports_count: int
    listen: str
    ssh_port: int
    username: str
    password_file: str
    state_dir: Path
    ports: dict[str, CabledPort] = field(default_factory=dict)
    ports_per_slot: int = 0
    netns: str | None = None
    default_speed_gbps: float = 100.0
    eapi_port: int | None = None  # EOS only: HTTPS eAPI on the same address; None: not served
    os_version: str | None = None  # the release the inventory pins (switches[].os_version), else the default
    frr_dir: Path | None = None  # a routed switch: where its FRR daemons live (racfg_lab.frr); None: L2 only

    @property
    def password(self) -> str:
        return Path(self.password_file).read_text(encoding="utf-8").strip()

    @classmethod
    def load(cls, path: str | Path) -> CliConfig:
        data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
        from racfg.catalog import SWITCH_MODELS

        known = SWITCH_MODELS.get(data["model"])
        per_slot = data.get("ports_per_slot")
        if per_slot is None:
            per_slot = known.ports_per_slot if known else 0
        ports = {
            name: CabledPort(p.get("ifname"), float(p.get("speed_gbps") or 100.0), p.get("peer_host", ""),
                             p.get("peer_nic", ""), p.get("peer_mac", ""), bool(p.get("isl")))
            for name, p in (data.get("ports") or {}).items()
        }
        return cls(
            name=data["name"], platform=data["platform"], model=data["model"],
            ports_count=int(data["ports_count"]), listen=data.get("listen", "127.0.0.1"),
            ssh_port=int(data.get("ssh_port", 22)), username=data.get("username", "admin"),
            password_file=data["password_file"], state_dir=Path(data["state_dir"]), ports=ports,
            ports_per_slot=int(per_slot or 0), netns=data.get("netns"),
            default_speed_gbps=float(known.speed_gbps if known else 100.0),
            eapi_port=int(data["eapi_port"]) if data.get("eapi_port") and data["platform"] == "eos" else None,
            os_version=data.get("os_version") or None,
            frr_dir=Path(data["frr_dir"]) if data.get("frr_dir") else None,
        )
