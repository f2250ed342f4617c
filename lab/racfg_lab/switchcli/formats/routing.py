"""What every platform's BGP and route show output is answered from: the switch's routing daemon
(FRR, ``vtysh -c '... json'``): a session that is not up, a route that is missing, one path
instead of two, show as they are. Each platform prints them its own way (eos/route_formats.py,
mlnx/route_formats.py).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from racfg.switches.ports import device_port
from racfg_lab.switchcli import l3dataplane
from racfg_lab.switchcli.state import SwitchConfig
from racfg_lab.switchcli.switch import EmulatedSwitch


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
