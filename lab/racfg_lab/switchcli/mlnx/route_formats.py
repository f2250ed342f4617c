"""Onyx's BGP and route show output: text (the layout racfg.switches.parsers.onyx reads: Onyx has
no ``json-print`` form of these), from FRR's figures (formats/routing.py); and Onyx's
running-config lines of the layer-3 config (routing.RoutingConfig).
"""

from __future__ import annotations

import ipaddress

from racfg.switches.ports import port_sort_key
from racfg_lab.switchcli.formats.routing import _bgp, _paths, _selected_routes
from racfg_lab.switchcli.routing import RoutingConfig
from racfg_lab.switchcli.state import SwitchConfig
from racfg_lab.switchcli.switch import EmulatedSwitch

_ONYX_SOURCES = {"bgp": "bgp", "connected": "direct", "static": "static", "kernel": "kernel"}


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
