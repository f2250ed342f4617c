"""Management network and data fabric: bridges, veth cables and their shaped line rate.

Management: one bridge in the root namespace holding the first address of the inventory's
management subnet, and one veth per node, so the machine running racfg reaches every host and
switch on its inventory address, exactly as a jump host would. Nothing routes it further.

Data fabric: each switch is a namespace with a Linux bridge; each cabled port is a veth pair,
switch end ``swpN`` enslaved to the bridge, host end named as the inventory NIC. The switch end
carries a tbf qdisc at the lab rate, so host-to-host traffic crosses one shaped port and a
saturation test means something; its MTU is the switch port MTU and is enforced by the kernel.
"""

from __future__ import annotations

import ipaddress
import json

from racfg.errors import CannotRunError
from racfg.inventory.cluster import Cluster
from racfg.lab import names
from racfg.lab.netns import create_netns, ip, link_exists, link_info
from racfg.lab.sh import ok, run

DEFAULT_SCALE_MBIT_PER_100G = 1000  # 100G declared -> 1 Gbit/s in the lab
FRESH_SWITCH_MTU = 1500


def mgmt_gateway(cluster: Cluster) -> ipaddress.IPv4Interface:
    """First address of ``fabric.mgmt_subnet``, else the .1 of the /24 of the first management address."""
    if cluster.fabric.mgmt_subnet:
        net = ipaddress.ip_network(cluster.fabric.mgmt_subnet)
    else:
        first = cluster.hosts[0].mgmt if cluster.hosts else ipaddress.IPv4Address(
            next(iter(cluster.switches.values())).spec.mgmt)
        net = ipaddress.ip_network(f"{first}/24", strict=False)
    return ipaddress.IPv4Interface(f"{next(net.hosts())}/{net.prefixlen}")


def lab_rate_mbit(speed_gbps: float, scale_mbit_per_100g: int) -> int:
    return max(1, round(speed_gbps * scale_mbit_per_100g / 100))


def _addresses_in_use() -> dict[str, str]:
    proc = run(["ip", "-j", "-4", "addr", "show"], check=False, quiet=True)
    used = {}
    for link in json.loads(proc.stdout or "[]"):
        for addr in link.get("addr_info", []):
            used[addr["local"]] = link["ifname"]
    return used


def setup_mgmt_bridge(site: str, gateway: ipaddress.IPv4Interface) -> str:
    bridge = names.mgmt_bridge(site)
    holder = _addresses_in_use().get(str(gateway.ip))
    if holder and holder != bridge:
        raise CannotRunError(
            f"management gateway {gateway.ip} is already on interface {holder}",
            hint="another lab (or network) uses this subnet; give this inventory a different "
                 "fabric.mgmt_subnet, or run `racfg lab down` for the other one",
        )
    if not link_exists(bridge):
        ip(None, "link", "add", bridge, "type", "bridge")
    # No forwarding out of the lab: the bridge is an island; the gateway address only lets
    # this machine (racfg, ansible, tests) reach the nodes.
    if holder != bridge:
        ip(None, "addr", "add", str(gateway), "dev", bridge)
    ip(None, "link", "set", bridge, "up")
    return bridge


def attach_mgmt(site: str, node: str, netns: str, address: str, prefixlen: int) -> None:
    """A veth from the management bridge to ``mgmt0`` inside the node's namespace, with its address."""
    outer = names.mgmt_veth(site, node)
    if not link_exists(outer):
        ip(None, "link", "add", outer, "type", "veth", "peer", "name", names.MGMT_IFNAME, "netns", netns)
    ip(None, "link", "set", outer, "master", names.mgmt_bridge(site), "up")
    ok(["ip", "-n", netns, "addr", "add", f"{address}/{prefixlen}", "dev", names.MGMT_IFNAME])
    ip(netns, "link", "set", names.MGMT_IFNAME, "up")


def setup_switch_netns(netns: str) -> None:
    create_netns(netns)
    if not link_exists(names.BRIDGE_IFNAME, netns):
        ip(netns, "link", "add", names.BRIDGE_IFNAME, "type", "bridge", "stp_state", "0", "mcast_snooping", "0")
    ip(netns, "link", "set", names.BRIDGE_IFNAME, "up")


def add_cable(host_netns: str, nic: str, switch_netns: str, switch_ifname: str, rate_mbit: int) -> str:
    """Cable a host NIC to a switch port; returns the host NIC's MAC address."""
    if not link_exists(switch_ifname, switch_netns):
        ip(None, "link", "add", nic, "netns", host_netns, "type", "veth",
           "peer", "name", switch_ifname, "netns", switch_netns)
    ip(switch_netns, "link", "set", switch_ifname, "mtu", str(FRESH_SWITCH_MTU), "master", names.BRIDGE_IFNAME)
    ip(switch_netns, "link", "set", switch_ifname, "up")
    ip(host_netns, "link", "set", nic, "up")
    set_rate(switch_netns, switch_ifname, rate_mbit)
    return link_info(host_netns, nic).get("address", "")


def set_rate(netns: str, ifname: str, rate_mbit: int) -> None:
    """Shape egress of a switch port with tbf: the lab line rate of that cable."""
    rate_bytes = rate_mbit * 1_000_000 // 8
    burst = max(64 * 1024, rate_bytes // 200)  # ~5 ms of line rate, never below a few jumbo frames
    run(["ip", "netns", "exec", netns, "tc", "qdisc", "replace", "dev", ifname, "root", "tbf",
         "rate", f"{rate_mbit}mbit", "burst", str(burst), "latency", "50ms"])


def read_rate_mbit(netns: str, ifname: str) -> float | None:
    proc = run(["ip", "netns", "exec", netns, "tc", "-j", "qdisc", "show", "dev", ifname], check=False, quiet=True)
    try:
        for qdisc in json.loads(proc.stdout or "[]"):
            if qdisc.get("kind") == "tbf":
                return qdisc["options"]["rate"] * 8 / 1e6
    except (ValueError, KeyError):
        return None
    return None


def set_admin(netns: str, ifname: str, up: bool) -> None:
    ip(netns, "link", "set", ifname, "up" if up else "down")


def set_mtu(netns: str, ifname: str, mtu: int) -> None:
    ip(netns, "link", "set", ifname, "mtu", str(mtu))
