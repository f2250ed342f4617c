"""Arista EOS's BGP and route show output: ``show ip bgp summary`` / ``show ip route`` JSON (the
shapes of the recordings in device-outputs/eos) and their text, from FRR's figures
(formats/routing.py); and EOS's running-config lines of the layer-3 config (routing.RoutingConfig).
"""

from __future__ import annotations

import ipaddress
import time
from typing import Any

from racfg_lab.switchcli.formats.routing import _bgp, _paths, _selected_routes
from racfg_lab.switchcli.routing import RoutingConfig
from racfg_lab.switchcli.state import SwitchConfig
from racfg_lab.switchcli.switch import EmulatedSwitch

_EOS_STATES = {"Established": "Estab"}
_EOS_ROUTE_TYPES = {"bgp": "eBGP", "connected": "connected", "static": "static", "kernel": "kernel"}
_EOS_CODES = {"eBGP": "B E", "connected": "C", "static": "S", "kernel": "K"}


def eos_bgp_summary(sw: EmulatedSwitch, config: SwitchConfig) -> dict[str, Any]:
    bgp = _bgp(sw)
    if not bgp:
        return {"vrfs": {}}
    now = time.time()
    peers = {
        address: {
            "version": 4, "msgReceived": p.get("msgRcvd", 0), "msgSent": p.get("msgSent", 0),
            "inMsgQueue": p.get("inq", 0), "outMsgQueue": p.get("outq", 0), "asn": str(p.get("remoteAs", "")),
            "prefixAccepted": p.get("pfxRcd", 0), "prefixReceived": p.get("pfxRcd", 0),
            "upDownTime": now - p.get("peerUptimeMsec", 0) / 1000, "underMaintenance": False,
            "peerState": p.get("state", "Idle"),
        }
        for address, p in sorted(bgp.get("peers", {}).items(), key=lambda item: ipaddress.IPv4Address(item[0]))
    }
    return {"vrfs": {"default": {"vrf": "default", "routerId": bgp.get("routerId", ""), "asn": str(bgp.get("as", "")),
                                 "peers": peers}}}


def eos_bgp_summary_text(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    vrf = eos_bgp_summary(sw, config)["vrfs"].get("default")
    if vrf is None:
        return "% BGP inactive"
    lines = ["BGP summary information for VRF default",
             f"Router identifier {vrf['routerId']}, local AS number {vrf['asn']}",
             "Neighbor Status Codes: m - Under maintenance",
             "  Neighbor         V  AS           MsgRcvd   MsgSent  InQ OutQ  Up/Down State   PfxRcd PfxAcc"]
    for address, p in vrf["peers"].items():
        up = time.strftime("%H:%M:%S", time.gmtime(max(0.0, time.time() - p["upDownTime"])))
        state = _EOS_STATES.get(p["peerState"], p["peerState"])
        lines.append(f"  {address:<16} 4  {p['asn']:<12} {p['msgReceived']:>7} {p['msgSent']:>9} {p['inMsgQueue']:>4} "
                     f"{p['outMsgQueue']:>4} {up:>8} {state:<7} {p['prefixReceived']:<6} {p['prefixAccepted']}")
    return "\n".join(lines)


def eos_routes(sw: EmulatedSwitch, config: SwitchConfig) -> dict[str, Any]:
    routes = {}
    for prefix, entry in _selected_routes(sw).items():
        route_type = _EOS_ROUTE_TYPES.get(entry.get("protocol", ""), entry.get("protocol", ""))
        connected = route_type == "connected"
        vias = [{"interface": port} if connected or ip is None else {"interface": port, "nexthopAddr": ip}
                for ip, port in _paths(sw, config, prefix, entry)]
        routes[prefix] = {"kernelProgrammed": bool(entry.get("installed")), "directlyConnected": connected,
                          "routeAction": "forward", "routeLeaked": False, "vias": vias,
                          "metric": entry.get("metric", 0), "hardwareProgrammed": bool(entry.get("installed")),
                          "routeType": route_type, "preference": entry.get("distance", 0)}
    return {"vrfs": {"default": {"routes": routes, "allRoutesProgrammedKernel": True, "routingDisabled":
                                 not config.l3.ip_routing, "allRoutesProgrammedHardware": True,
                                 "defaultRouteState": "reachable" if "0.0.0.0/0" in routes else "notSet"}}}


def eos_routes_text(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    lines = ["VRF: default", "Codes: C - connected, S - static, K - kernel, B E - eBGP", "",
             "Gateway of last resort is not set", ""]
    for prefix, route in eos_routes(sw, config)["vrfs"]["default"]["routes"].items():
        code = _EOS_CODES.get(route["routeType"], route["routeType"])
        if route["directlyConnected"]:
            lines.append(f" {code:<8} {prefix} is directly connected, {route['vias'][0]['interface']}")
            continue
        head = f" {code:<8} {prefix} [{route['preference']}/{route['metric']}]"
        for index, via in enumerate(route["vias"]):
            lead = head if index == 0 else " " * len(head)
            lines.append(f"{lead} via {via.get('nexthopAddr')}, {via['interface']}")
    return "\n".join(lines)


def eos_port_l3_lines(l3: RoutingConfig, port: str) -> list[str]:
    if port in l3.routed_ports:
        address = l3.routed_ports[port]
        return ["   no switchport"] + ([f"   ip address {address}"] if address else [])
    return [f"   switchport access vlan {l3.access_vlan[port]}"] if port in l3.access_vlan else []


def eos_l3_lines(l3: RoutingConfig) -> list[str]:
    lines: list[str] = []
    for vlan, address in sorted(l3.svis.items()):
        lines += [f"interface Vlan{vlan}"] + ([f"   mtu {l3.svi_mtu[vlan]}"] if vlan in l3.svi_mtu else [])
        lines += ([f"   ip address {address}"] if address else []) + ["!"]
    if l3.ip_routing:
        lines += ["ip routing", "!"]
    bgp = l3.bgp
    if bgp is not None:
        lines.append(f"router bgp {bgp.asn}")
        if bgp.router_id:
            lines.append(f"   router-id {bgp.router_id}")
        if bgp.maximum_paths != 1:
            lines.append(f"   maximum-paths {bgp.maximum_paths} ecmp {bgp.maximum_paths}")
        lines += [f"   neighbor {peer} remote-as {asn}" for peer, asn in
                  sorted(bgp.neighbors.items(), key=lambda item: ipaddress.IPv4Address(item[0]))]
        lines += ["   redistribute connected"] if bgp.redistribute_connected else []
        lines += [f"   network {net}" for net in bgp.networks] + ["!"]
    return lines


def eos_vlan_lines(l3: RoutingConfig) -> list[str]:
    lines = []
    for vlan in l3.vlans:
        lines += [f"vlan {vlan}"] + ([f"   name {l3.vlan_names[vlan]}"] if vlan in l3.vlan_names else []) + ["!"]
    return lines
