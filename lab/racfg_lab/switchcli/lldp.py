"""LLDP on a lab switch: a real ``lldpd`` in the switch's namespace, and what it has received.

A switch's LLDP table must follow the wiring that really exists (after a cable swap, on a port
that was shut), never the inventory, or a cabling check that compares the two proves nothing.
So the lab runs one lldpd per Ethernet switch, on its ``swpN`` ports only, announcing the switch
name and each port under the platform's own name (``Eth1/1``, ``Ethernet1``); the switch CLI's
LLDP show commands read back what that lldpd heard (``lldpcli -f json0 show neighbors``) and
print it in the platform's format. InfiniBand has no LLDP: no lldpd on ``mlnxos-ib`` switches.

This module is imported by the switch CLI process, so it stays free of pydantic and the inventory.
``json0`` rather than ``json``: lldpcli's plain JSON turns a one-element list into an object
(one interface, one neighbor), while json0 always prints lists, which is what a parser can trust.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from racfg.switches.ports import port_sort_key

if TYPE_CHECKING:
    from racfg_lab.switchcli.state import SwitchConfig
    from racfg_lab.switchcli.switch import EmulatedSwitch

SOCKET_NAME = "lldpd.socket"
PIDFILE_NAME = "lldpd.pid"
CONFIG_NAME = "lldpd.conf"
LOG_NAME = "lldpd.log"
PORT_PATTERN = "swp*"  # the switch-side veths (racfg_lab.names.switch_port_ifname)
NO_LLDP_PLATFORMS = ("mlnxos-ib",)


def runs_lldp(platform: str) -> bool:
    """InfiniBand switches have no LLDP (subnet management discovers IB topology instead)."""
    return platform not in NO_LLDP_PLATFORMS


def socket_path(switch_dir: Path) -> Path:
    """lldpd's control socket of a lab switch: in the switch's lab directory, one per switch."""
    return switch_dir / SOCKET_NAME


def daemon_config(system_name: str, ports: dict[str, str], tx_interval: int) -> str:
    """lldpcli commands lldpd runs at start: system name, transmit interval, each port's id.

    ``ports`` maps the switch-side veth (``swp1``) to the platform's port name (``Eth1/1``),
    which is what a real switch announces as its port id and description.
    """
    lines = [f"configure system hostname {system_name}", f"configure lldp tx-interval {tx_interval}"]
    lines += [f"configure ports {ifname} lldp portidsubtype local {name} description {name}"
              for ifname, name in sorted(ports.items())]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Neighbor:
    """One remote system lldpd received on a local interface, as it announced itself."""

    interface: str
    system_name: str
    port_id: str
    port_id_type: str = ""  # lldpd's names: ifname, mac, local, ...
    port_description: str = ""
    chassis_id: str = ""
    chassis_id_type: str = ""
    system_description: str = ""
    ttl: int | None = None
    capabilities: dict[str, bool] = field(default_factory=dict)  # type -> enabled


def _value(items: Any, key: str = "value") -> str:
    """json0 wraps every scalar in a list of objects: ``[{"value": "x"}]`` -> ``"x"``."""
    if isinstance(items, list) and items and isinstance(items[0], dict):
        return str(items[0].get(key, ""))
    return ""


def parse_neighbors(text: str) -> list[Neighbor]:
    """``lldpcli -f json0 show neighbors`` -> neighbors (empty output or table: none)."""
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        return []
    out: list[Neighbor] = []
    for lldp in data.get("lldp", []) if isinstance(data, dict) else []:
        for iface in lldp.get("interface", []):
            chassis = (iface.get("chassis") or [{}])[0]
            port = (iface.get("port") or [{}])[0]
            ttl = _value(port.get("ttl")) or _value(iface.get("ttl"))
            out.append(Neighbor(
                interface=str(iface.get("name", "")),
                system_name=_value(chassis.get("name")),
                port_id=_value(port.get("id")),
                port_id_type=_value(port.get("id"), "type"),
                port_description=_value(port.get("descr")),
                chassis_id=_value(chassis.get("id")),
                chassis_id_type=_value(chassis.get("id"), "type"),
                system_description=_value(chassis.get("descr")),
                ttl=int(ttl) if ttl.isdigit() else None,
                capabilities={str(c.get("type")): bool(c.get("enabled")) for c in chassis.get("capability", [])},
            ))
    return out


def read_neighbors(socket: Path, timeout: float = 5.0) -> list[Neighbor]:
    """What the lldpd behind ``socket`` has received now; none when it does not run (a fresh
    or InfiniBand switch shows an empty LLDP table, as a switch with LLDP off does)."""
    if not socket.exists():
        return []
    try:
        proc = subprocess.run(["lldpcli", "-u", str(socket), "-f", "json0", "show", "neighbors"],
                              capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return parse_neighbors(proc.stdout) if proc.returncode == 0 else []


def heard_by_port(sw: EmulatedSwitch, config: SwitchConfig) -> list[tuple[str, list[Neighbor]]]:
    """What the switch's lldpd really received, by front-panel port (swpN -> port), in port order.
    Ports that are down show nothing, as on a real switch (lldpd may still hold an entry until
    its TTL runs out)."""
    port_of = {c.ifname: port for port, c in sw.cfg.ports.items() if c.ifname}
    heard: dict[str, list[Neighbor]] = {}
    for neighbor in read_neighbors(socket_path(sw.cfg.state_dir)):
        port = port_of.get(neighbor.interface)
        if port is not None and port in config.ports and sw.status(port, config).oper_up:
            heard.setdefault(port, []).append(neighbor)
    return sorted(heard.items(), key=lambda kv: port_sort_key(kv[0]))
