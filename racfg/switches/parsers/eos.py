"""Arista EOS ``| json`` output -> common facts.

Real oddities handled: vEOS reports ``bandwidth: 0`` on bridged ports (speed unknown, not
0 Gb/s); an entry's ``name`` can disagree with its key (``Ethernet5`` naming ``Ethernet1``), so
the key wins; Management interfaces are not front-panel ports.
"""

from __future__ import annotations

from typing import Any

from racfg.switches.facts import LldpNeighbor, PfcFacts, PortFacts
from racfg.switches.parsers.common import ParseError, load_json
from racfg.switches.ports import canonical_port

PLATFORM = "eos"


def parse_interfaces(raw: str | Any) -> dict[str, PortFacts]:
    """``show interfaces | json`` -> {canonical port: PortFacts}."""
    data = load_json(raw, "show interfaces")
    if not isinstance(data, dict) or "interfaces" not in data:
        raise ParseError("show interfaces: no 'interfaces' object in the output")
    ports: dict[str, PortFacts] = {}
    for key, entry in data["interfaces"].items():
        port = canonical_port(PLATFORM, key)
        if port is None:
            continue
        bandwidth = entry.get("bandwidth") or 0
        ports[port] = PortFacts(
            mtu=int(entry["mtu"]),
            admin_up=entry.get("interfaceStatus") not in ("disabled", "adminDown"),
            oper_up=entry.get("lineProtocolStatus") == "up",
            speed_gbps=bandwidth / 1e9 if bandwidth else None,
            description=entry.get("description") or "",
        )
    return ports


def parse_pfc(raw: str | Any) -> PfcFacts:
    """``show priority-flow-control | json`` -> PfcFacts.

    EOS has no global PFC switch: PFC is per port; lossless (RoCE) = priorities set no-drop."""
    data = load_json(raw, "show priority-flow-control")
    statuses = data.get("interfaceStatuses", {}) if isinstance(data, dict) else {}
    ports: dict[str, bool] = {}
    per_port: dict[str, tuple[int, ...]] = {}
    for key, entry in statuses.items():
        port = canonical_port(PLATFORM, key)
        if port is None:
            continue
        ports[port] = bool(entry.get("enabled"))
        per_port[port] = tuple(sorted(int(p) for p in entry.get("priorities", []) or []))
    priorities = {p for prios in per_port.values() for p in prios}
    glob = bool(data.get("enabled", False)) if isinstance(data, dict) else False
    return PfcFacts(glob, ports, roce=bool(priorities), lossless_priorities=tuple(sorted(priorities)),
                    port_priorities={port: prios for port, prios in per_port.items() if prios})


def parse_version(raw: str | Any) -> str:
    """``show version | json`` -> ``4.30.0F-31408673.4300F (engineering build)``."""
    data = load_json(raw, "show version")
    if not isinstance(data, dict) or "version" not in data:
        raise ParseError("show version: no 'version' field")
    return str(data["version"]).strip()


def parse_lldp(raw: str | Any) -> dict[str, LldpNeighbor]:
    """``show lldp neighbors | json`` -> {local port: neighbor}."""
    data = load_json(raw, "show lldp neighbors")
    neighbors: dict[str, LldpNeighbor] = {}
    for entry in data.get("lldpNeighbors", []) if isinstance(data, dict) else []:
        port = canonical_port(PLATFORM, str(entry.get("port", "")))
        if port is not None:
            neighbors[port] = LldpNeighbor(str(entry.get("neighborDevice", "")), str(entry.get("neighborPort", "")))
    return neighbors
