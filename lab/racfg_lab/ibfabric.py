"""An InfiniBand two-tier site in the lab: the fat tree a subnet manager routes, stood in for by routed Ethernet.

On a real InfiniBand fabric no switch is configured to forward: the subnet manager computes every
switch's forwarding tables (up/down routing over the spines), and every host of the site sits in
one IPoIB subnet whatever leaf it hangs off. The lab has no InfiniBand, so it builds the nearest
real thing with what its Ethernet leaf-spine sites already use: the inventory's ISLs as routed
veths with /31s of the lab's own (``LAB_ISL_POOL``, inside the switch namespaces only), FRR BGP
between every leaf and every spine with ECMP (spines one ASN, each leaf its own, as
racfg.inventory.leafspine plans Ethernet), each leaf announcing a /32 per host cabled to it and
answering ARP for the hosts on other leaves (proxy ARP on its bridge), so hosts of one subnet on
different leaves reach each other over both spines. The lab configures this itself at ``lab up``:
the emulated MLNX-OS CLI has no routing commands (nor has the real switch), and its FRR is never
reconfigured by it. ``lab up``, ``demo`` and ``deploy`` print it as a substitution
(racfg_lab.substitutions).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass, field

from racfg.catalog import parse_port
from racfg.inventory.cluster import Cluster
from racfg_lab import names
from racfg_lab.netns import ip
from racfg_lab.sh import run
from racfg_lab.state import SwitchState
from racfg_lab.switchcli.routing import BgpConfig, RoutingConfig, frr_config

LAB_ISL_POOL = ipaddress.IPv4Network("10.254.0.0/16")  # the stand-in ISLs' /31s: switch namespaces only
SPINE_ASN = 65100
LEAF_ASN_FIRST = 65101


def stands_in(cluster: Cluster) -> bool:
    """The site is an InfiniBand two-tier fabric, which the lab runs as routed Ethernet."""
    return cluster.fabric.type == "infiniband" and cluster.topology.design == "leaf-spine"


@dataclass
class SwitchPlan:
    """What the lab sets up on one switch of the stand-in."""

    asn: int
    router_id: str
    isl_addresses: dict[str, str] = field(default_factory=dict)  # port veth -> "A/31"
    neighbors: dict[str, int] = field(default_factory=dict)  # peer address -> its ASN
    gateways: list[str] = field(default_factory=list)  # leaf: its bridge's address per host subnet ("A/len")
    host_routes: list[str] = field(default_factory=list)  # leaf: a /32 per host address cabled to it

    def bgpd_config(self, hostname: str) -> str:
        bgp = BgpConfig(self.asn, self.router_id, dict(self.neighbors), max(len(self.neighbors), 1),
                        list(self.host_routes))
        return frr_config(hostname, RoutingConfig(ip_routing=True, bgp=bgp))


def _ifname(cluster: Cluster, switch: str, port: str) -> str:
    sw = cluster.switches[switch]
    parsed = parse_port(sw.platform, port, sw.model)
    return names.switch_port_ifname(parsed.index, parsed.lane)


def _free_address(network: ipaddress.IPv4Network, used: set[ipaddress.IPv4Address]) -> ipaddress.IPv4Address:
    """The highest host address of ``network`` no host uses: the leaf's own address there (ARP's source)."""
    candidates: Iterator[ipaddress.IPv4Address] = (network.broadcast_address - k
                                                  for k in range(1, network.num_addresses - 1))
    return next(a for a in candidates if a not in used)


def plan(cluster: Cluster) -> dict[str, SwitchPlan]:
    """Switch -> what the lab configures on it, for an InfiniBand two-tier site."""
    topo = cluster.topology
    leaves, spines = topo.of_role("leaf"), topo.of_role("spine")
    asns = {name: SPINE_ASN for name in spines} | {name: LEAF_ASN_FIRST + k for k, name in enumerate(leaves)}
    out = {name: SwitchPlan(asns[name], str(cluster.switches[name].spec.mgmt)) for name in leaves + spines}
    pool = LAB_ISL_POOL.subnets(new_prefix=31)
    for isl in topo.isls:
        net = next(pool)
        spine_ip, leaf_ip = net[0], net[1]
        out[isl.spine].isl_addresses[_ifname(cluster, isl.spine, isl.spine_port)] = f"{spine_ip}/31"
        out[isl.leaf].isl_addresses[_ifname(cluster, isl.leaf, isl.leaf_port)] = f"{leaf_ip}/31"
        out[isl.spine].neighbors[str(leaf_ip)] = asns[isl.leaf]
        out[isl.leaf].neighbors[str(spine_ip)] = asns[isl.spine]
    addresses = [(nic.switch, ipaddress.IPv4Interface(nic.address)) for h in cluster.hosts for nic in h.nics
                 if nic.address]
    used = {a.ip for _, a in addresses}
    for leaf in leaves:
        mine = [a for switch, a in addresses if switch == leaf]
        out[leaf].host_routes = [f"{a.ip}/32" for a in mine]
        for network in sorted({a.network for a in mine}):
            out[leaf].gateways.append(f"{_free_address(network, used)}/{network.prefixlen}")
    return out


def _sysctl(netns: str, key: str, value: str) -> None:
    run(["ip", "netns", "exec", netns, "sysctl", "-q", "-w", f"{key}={value}"])


def configure(cluster: Cluster, switches: dict[str, SwitchState], isl_mtu: int) -> dict[str, SwitchPlan]:
    """Make the switch namespaces of an InfiniBand two-tier site route (``lab up``'s cables step, after
    the ISLs are cabled; idempotent). Returns the plan, whose bgpd configs the switches' FRR starts with."""
    plans = plan(cluster)
    for name, p in plans.items():
        ns = switches[name].netns
        _sysctl(ns, "net.ipv4.ip_forward", "1")
        for ifname, address in p.isl_addresses.items():
            ip(ns, "link", "set", ifname, "nomaster", "mtu", str(isl_mtu), "up")
            ip(ns, "addr", "replace", address, "dev", ifname)
        for address in p.gateways:
            ip(ns, "addr", "replace", address, "dev", names.BRIDGE_IFNAME)
        if p.gateways:
            _sysctl(ns, f"net.ipv4.conf.{names.BRIDGE_IFNAME}.proxy_arp", "1")
            _sysctl(ns, f"net.ipv4.neigh.{names.BRIDGE_IFNAME}.proxy_delay", "0")
        for route in p.host_routes:  # what bgpd announces (its network import check wants them in the RIB)
            ip(ns, "route", "replace", route, "dev", names.BRIDGE_IFNAME)
    return plans
