"""Arista EOS ``| json`` output -> common facts.

Real oddities handled: vEOS reports ``bandwidth: 0`` on bridged ports (speed unknown, not
0 Gb/s); an entry's ``name`` can disagree with its key (``Ethernet5`` naming ``Ethernet1``), so
the key wins; Management interfaces are not front-panel ports.
"""

from __future__ import annotations

from typing import Any

from racfg.switches.facts import BgpFacts, BgpPeer, LldpNeighbor, NextHop, PfcFacts, PortFacts, Route, RouteFacts
from racfg.switches.parsers.bgp_summary import asplain, bgp_state
from racfg.switches.parsers.vendor_values import ParseError, load_json
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


def _default_vrf(data: Any, command: str) -> dict[str, Any]:
    vrfs = data.get("vrfs") if isinstance(data, dict) else None
    if not isinstance(vrfs, dict) or not isinstance(vrfs.get("default"), dict):
        raise ParseError(f"{command}: no default VRF in the output")
    return vrfs["default"]


def parse_bgp_summary(raw: str | Any, now: float | None = None) -> BgpFacts:
    """``show ip bgp summary [vrf all] | json`` -> BgpFacts of the default VRF.

    ASNs come as strings, asdot where configured so; unnumbered peers are keyed
    ``fe80::...%Et3``; ``upDownTime`` is the epoch of the last change, so the uptime needs ``now``."""
    vrf = _default_vrf(load_json(raw, "show ip bgp summary"), "show ip bgp summary")
    peers: dict[str, BgpPeer] = {}
    for key, entry in (vrf.get("peers") or {}).items():
        address, _, ifname = str(key).partition("%")
        state, detail = bgp_state(str(entry.get("peerState", "")))
        since = entry.get("upDownTime")
        peers[address] = BgpPeer(
            address=address, remote_asn=asplain(entry["asn"]), state=state,
            prefixes_received=entry.get("prefixReceived"),
            uptime_s=max(now - float(since), 0.0) if now is not None and since is not None else None,
            interface=(canonical_port(PLATFORM, ifname) or ifname) if ifname else None, detail=detail)
    return BgpFacts(local_asn=asplain(vrf["asn"]), router_id=str(vrf.get("routerId", "")), peers=peers)


_ROUTE_TYPES = {"ebgp": "bgp", "ibgp": "bgp", "bgp": "bgp", "connected": "connected", "static": "static",
                "kernel": "kernel", "ospf": "ospf"}


def parse_routes(raw: str | Any) -> RouteFacts:
    """``show ip route [PREFIX] [bgp] [detail] | json`` -> RouteFacts of the default VRF."""
    vrf = _default_vrf(load_json(raw, "show ip route"), "show ip route")
    routes: dict[str, Route] = {}
    for prefix, entry in (vrf.get("routes") or {}).items():
        kind = str(entry.get("routeType", "")).lower()
        hops = tuple(NextHop(via.get("nexthopAddr") or None,
                             canonical_port(PLATFORM, str(via.get("interface", ""))) or via.get("interface"))
                     for via in entry.get("vias") or [])
        programmed = entry.get("hardwareProgrammed", entry.get("kernelProgrammed", True))
        routes[prefix] = Route(prefix=prefix, protocol=_ROUTE_TYPES.get(kind, kind or "unknown"),
                               next_hops=hops, installed=bool(programmed))
    return RouteFacts(routes)
