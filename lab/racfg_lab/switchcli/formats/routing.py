"""BGP and route show output, answered from the switch's routing daemon and printed as each platform
prints it: EOS ``show ip bgp summary`` / ``show ip route`` JSON (the shapes of the recordings in
device-outputs/eos) and their text; Onyx text (the layout racfg.switches.parsers.onyx reads: Onyx
has no ``json-print`` form of these). The numbers are FRR's (``vtysh -c '... json'``): a session
that is not up, a route that is missing, one path instead of two, show as they are.

Also each platform's running-config lines of the layer-3 config (routing.RoutingConfig).
"""

from __future__ import annotations

import ipaddress
import time
from typing import Any

from racfg.switches.ports import device_port, port_sort_key
from racfg_lab.switchcli import l3dataplane
from racfg_lab.switchcli.routing import RoutingConfig
from racfg_lab.switchcli.state import SwitchConfig
from racfg_lab.switchcli.switch import EmulatedSwitch

_EOS_STATES = {"Established": "Estab"}
_EOS_ROUTE_TYPES = {"bgp": "eBGP", "connected": "connected", "static": "static", "kernel": "kernel"}
_EOS_CODES = {"eBGP": "B E", "connected": "C", "static": "S", "kernel": "K"}
_ONYX_SOURCES = {"bgp": "bgp", "connected": "direct", "static": "static", "kernel": "kernel"}


def _ifname_to_port(sw: EmulatedSwitch, config: SwitchConfig, ifname: str, prefix: str) -> str:
    """A namespace device as the platform names the interface: swpN -> its port; the bridge -> the
    VLAN interface whose subnet the route is in (the lab puts VLAN interface addresses on the
    bridge: l3dataplane); mgmt0 -> the management port."""
    platform = sw.cfg.platform
    for port, cabled in sw.cfg.ports.items():
        if cabled.ifname == ifname:
            return device_port(platform, port) if platform == "eos" else f"eth{port}"
    if ifname == l3dataplane.BRIDGE:
        network = ipaddress.IPv4Network(prefix)
        vlan = next((v for v, a in sorted(config.l3.svis.items())
                     if a and network.subnet_of(ipaddress.IPv4Interface(a).network)), None)
        if vlan is not None:
            return f"Vlan{vlan}" if platform == "eos" else f"vlan{vlan}"
    if ifname == "mgmt0" and platform == "eos":
        return "Management1"
    return ifname


def _bgp(sw: EmulatedSwitch) -> dict[str, Any]:
    data = sw.frr_json("show ip bgp summary") or {}
    return data.get("ipv4Unicast") or {}


def _selected_routes(sw: EmulatedSwitch) -> dict[str, dict[str, Any]]:
    """Prefix -> FRR's selected entry (the one in the FIB), in address order."""
    data = sw.frr_json("show ip route") or {}
    chosen = {}
    for prefix, entries in data.items():
        best = next((e for e in entries if e.get("selected")), None)
        if best is not None:
            chosen[prefix] = best
    return dict(sorted(chosen.items(), key=lambda item: ipaddress.IPv4Network(item[0])))


def _paths(sw: EmulatedSwitch, config: SwitchConfig, prefix: str,
           entry: dict[str, Any]) -> list[tuple[str | None, str]]:
    return [(hop.get("ip"), _ifname_to_port(sw, config, hop.get("interfaceName", ""), prefix))
            for hop in entry.get("nexthops", []) if hop.get("active")]


# --- EOS ---------------------------------------------------------------------------------------
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


# --- Onyx --------------------------------------------------------------------------------------
def _onyx_clock(msec: int) -> str:
    seconds = msec // 1000
    return f"{seconds // 86400}:{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def onyx_bgp_summary(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    bgp = _bgp(sw)
    if not bgp:
        return "% BGP is not running"
    rule = "-" * 114
    lines = ["", "VRF name                  : default", f"BGP router identifier     : {bgp.get('routerId', '')}",
             f"local AS number           : {bgp.get('as', '')}",
             f"BGP table version         : {bgp.get('tableVersion', 0)}",
             "", rule, "Neighbor          V    AS           MsgRcvd   MsgSent   TblVer    InQ    OutQ   Up/Down"
             "       State/PfxRcd", rule]
    for address, p in sorted(bgp.get("peers", {}).items(), key=lambda item: ipaddress.IPv4Address(item[0])):
        state = f"{p.get('state', 'Idle').upper()}/{p.get('pfxRcd', 0)}"
        lines.append(f"{address:<18}4    {p.get('remoteAs', ''):<13}{p.get('msgRcvd', 0):<10}{p.get('msgSent', 0):<10}"
                     f"{p.get('tableVersion', 0):<10}{p.get('inq', 0):<7}{p.get('outq', 0):<7}"
                     f"{_onyx_clock(p.get('peerUptimeMsec', 0)):<14}{state}")
    return "\n".join(lines)


def onyx_routes(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    rule = "  " + "-" * 102
    lines = ["", "Flags:", "  F: Failed to install in H/W", "", "VRF Name default:", rule,
             "  Destination       Mask              Flag     Gateway           Interface        Source     AD/M", rule]
    for prefix, entry in _selected_routes(sw).items():
        network = ipaddress.IPv4Network(prefix)
        source = _ONYX_SOURCES.get(entry.get("protocol", ""), entry.get("protocol", ""))
        flag = "" if entry.get("installed") else "F"
        ad = f"{entry.get('distance', 0)}/{entry.get('metric', 0)}"
        dest = "default" if network.prefixlen == 0 else str(network.network_address)
        for index, (ip, port) in enumerate(_paths(sw, config, prefix, entry)):
            head = f"  {dest:<18}{network.netmask!s:<18}" if index == 0 else " " * 38
            lines.append(f"{head}{flag:<9}{ip or '0.0.0.0':<18}{port:<17}{source:<11}{ad}")
    return "\n".join(lines)


# --- running config ----------------------------------------------------------------------------
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


def onyx_l3_lines(l3: RoutingConfig) -> list[str]:
    lines = []
    if l3.vlans:
        lines += ["##", "## VLAN configuration", "##"] + [f"   vlan {vlan}" for vlan in l3.vlans]
        lines += [f'   vlan {vlan} name "{name}"' for vlan, name in sorted(l3.vlan_names.items())]
    ports = sorted({*l3.routed_ports, *l3.access_vlan}, key=port_sort_key)
    if ports or l3.svis:
        lines += ["##", "## L3 configuration", "##"]
        if not l3.ip_routing:
            lines.append("   no ip routing")
    for port in ports:
        ctx = f"   interface ethernet {port}"
        if port in l3.routed_ports:
            lines.append(f"{ctx} no switchport force")
            lines += [f"{ctx} ip address {l3.routed_ports[port]} primary"] if l3.routed_ports[port] else []
        else:
            lines.append(f"{ctx} switchport access vlan {l3.access_vlan[port]}")
    for vlan, address in sorted(l3.svis.items()):
        lines.append(f"   interface vlan {vlan}")
        lines += [f"   interface vlan {vlan} mtu {l3.svi_mtu[vlan]}"] if vlan in l3.svi_mtu else []
        lines += [f"   interface vlan {vlan} ip address {address} primary"] if address else []
    if l3.protocol_bgp:
        lines += ["##", "## Routing protocols", "##", "   protocol bgp"]
    bgp = l3.bgp
    if bgp is not None:
        ctx = f"   router bgp {bgp.asn} vrf default"
        lines += ["##", "## BGP configuration", "##", ctx]
        lines += [f"{ctx} router-id {bgp.router_id} force"] if bgp.router_id else []
        lines += [f"{ctx} maximum-paths {bgp.maximum_paths}"] if bgp.maximum_paths != 1 else []
        lines += [f"{ctx} neighbor {peer} remote-as {asn}" for peer, asn in
                  sorted(bgp.neighbors.items(), key=lambda item: ipaddress.IPv4Address(item[0]))]
        lines += [f"{ctx} redistribute connected"] if bgp.redistribute_connected else []
        lines += [f"{ctx} network {net.split('/')[0]} /{net.split('/')[1]}" for net in bgp.networks]
    return lines
