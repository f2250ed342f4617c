"""Resolve a site's switch graph (racfg.inventory.topology) from the expanded inventory.

What cannot be drawn at all is refused here, at load time, as a located inventory error (exit 2,
nothing rendered): a switch without a role on a leaf-spine site, links that name unknown switches or
the wrong role, an ISL on a port a host (or another ISL) already uses, a leaf without uplinks, a spine
carrying hosts, a subnet on two leaves, an ASN used twice. Whether a drawable fabric meets the RA
(reachability, balance, MTU, oversubscription) is policy: racfg.policy.topology_rules.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass

from racfg.catalog import parse_port, parse_speed, port_by_index
from racfg.inventory import model as m
from racfg.inventory.cluster import MAX_EXPANDED, Cluster, ClusterSwitch
from racfg.inventory.ranges import expand_range, range_size
from racfg.inventory.topology import HostSubnet, Isl, Loc, Topology


@dataclass(frozen=True)
class TopologyProblem:
    loc: Loc
    message: str
    hint: str | None = None


class _Pool:
    """/31s handed out in order from one pool; ``None`` once it is spent."""

    def __init__(self, cidr: str) -> None:
        self._subnets: Iterator[ipaddress.IPv4Network] = ipaddress.IPv4Network(cidr).subnets(new_prefix=31)

    def take(self) -> tuple[ipaddress.IPv4Interface, ipaddress.IPv4Interface] | None:
        net = next(self._subnets, None)
        if net is None:
            return None
        return (ipaddress.IPv4Interface(f"{net.network_address}/31"),
                ipaddress.IPv4Interface(f"{net.network_address + 1}/31"))


def resolve_topology(cluster: Cluster) -> tuple[Topology, list[TopologyProblem]]:
    """The site's switch graph and the problems that keep it from being drawn (empty: all is well)."""
    inv = cluster.inventory
    topo = Topology(inv.fabric.design, inv.fabric.type, isl_mtu=inv.fabric.effective_isl_mtu)
    problems: list[TopologyProblem] = []
    if inv.fabric.design == "single":
        for index, spec in enumerate(inv.switches):
            if spec.role is not None:
                problems.append(TopologyProblem(("switches", index, "role"), "a switch role needs a leaf-spine site",
                                                "set fabric.design: leaf-spine, or remove role"))
        if inv.links:
            problems.append(TopologyProblem(("links",), "inter-switch links need a leaf-spine site",
                                            "set fabric.design: leaf-spine, or remove links"))
        return topo, problems
    for index, spec in enumerate(inv.switches):
        if spec.role is None:
            problems.append(TopologyProblem(("switches", index), f"switch {spec.name} has no role",
                                            "on a leaf-spine site every switch is role: leaf or role: spine"))
        else:
            topo.roles.setdefault(spec.name, spec.role)
        topo.router_ids.setdefault(spec.name, spec.mgmt)
    host_ports = _host_ports(cluster, topo, problems)
    isls = sum(range_size(spec.leaves) * range_size(spec.spines) * spec.count for spec in inv.links)
    if isls > MAX_EXPANDED:  # counted before one is drawn: a few ranges could name 10^8
        problems.append(TopologyProblem(("links",), f"the links entries name {isls:,} inter-switch links, more "
                                        f"than {MAX_EXPANDED:,}", "list each leaf's and spine's real links"))
        return topo, problems
    _links(cluster, topo, host_ports, problems)
    named = {name for spec in inv.links for text in (spec.leaves, spec.spines) for name in expand_range(text)}
    for sw in cluster.switches.values():  # a switch a bad links entry names has its problem there already
        role = topo.roles.get(sw.name)
        if role and sw.name not in named and not topo.links_of(sw.name):
            other, key = ("spine", "leaves") if role == "leaf" else ("leaf", "spines")
            problems.append(TopologyProblem(sw.src, f"{role} {sw.name} has no link to any {other}",
                                            f"add it to a links entry ({key}: {sw.name})"))
    if topo.routed:
        _asns(cluster, topo, problems)
        _subnets(cluster, topo, problems)
    return topo, problems


def _host_ports(cluster: Cluster, topo: Topology, problems: list[TopologyProblem]) -> dict[tuple[str, str], str]:
    """Every switch port a host uses (switch, port) -> host:nic; hosts on a spine are problems."""
    used: dict[tuple[str, str], str] = {}
    reported: set[Loc] = set()
    for host in cluster.hosts:
        for nic in host.nics:
            if nic.port is not None:
                used.setdefault((nic.switch, nic.port), f"{host.name}:{nic.name}")
            if topo.roles.get(nic.switch) == "spine" and nic.src not in reported:
                reported.add(nic.src)
                problems.append(TopologyProblem((*nic.src, "switch"),
                                                f"{nic.switch} is a spine: spines carry only leaves ({host.name})",
                                                "cable the host to a leaf"))
    return used


def _members(cluster: Cluster, topo: Topology, text: str, role: str, loc: Loc,
             problems: list[TopologyProblem]) -> list[ClusterSwitch]:
    found = []
    missing = [name for name in expand_range(text) if name not in cluster.switches]
    if missing:  # one problem for the entry, however many names its range holds
        more = f" and {len(missing) - 3:,} more" if len(missing) > 3 else ""
        problems.append(TopologyProblem(loc, f"switch{'es' if len(missing) > 1 else ''} {', '.join(missing[:3])}"
                                        f"{more} {'are' if len(missing) > 1 else 'is'} not defined",
                                        f"defined switches: {', '.join(cluster.switches)}"))
    for sw in (cluster.switches[name] for name in expand_range(text) if name in cluster.switches):
        if topo.roles.get(sw.name) != role:
            problems.append(TopologyProblem(loc, f"{sw.name} is not a {role} (role: {topo.roles.get(sw.name)})",
                                            f"list {role}s here"))
        else:
            found.append(sw)
    return found


def _port(sw: ClusterSwitch, first: str | int, offset: int, loc: Loc,
          problems: list[TopologyProblem]) -> str | None:
    """The port ``offset`` after ``first`` on ``sw``, or None (with a problem) when there is none."""
    try:
        parsed = parse_port(sw.platform, first, sw.model)
    except ValueError as exc:
        problems.append(TopologyProblem(loc, f"{sw.name}: {exc}"))
        return None
    index = parsed.index + offset
    if not 1 <= index <= sw.model.ports:
        problems.append(TopologyProblem(loc, f"{sw.name} has no port {index} ({sw.model.name}, {sw.model.ports} "
                                        "ports)", "the links advance the port per link; check the first port"))
        return None
    return port_by_index(sw.platform, index, sw.model)


def _links(cluster: Cluster, topo: Topology, used: dict[tuple[str, str], str],
           problems: list[TopologyProblem]) -> None:
    inv = cluster.inventory
    shared = _Pool(inv.fabric.p2p_pool)
    for g, spec in enumerate(inv.links):
        src: Loc = ("links", g)
        leaves = _members(cluster, topo, spec.leaves, "leaf", (*src, "leaves"), problems)
        spines = _members(cluster, topo, spec.spines, "spine", (*src, "spines"), problems)
        pool = _Pool(spec.pool) if spec.pool else shared
        speed = parse_speed(spec.speed) if spec.speed is not None else inv.fabric.speed_gbps
        ends = [((leaf, i), (spine, j), k) for i, leaf in enumerate(leaves) for j, spine in enumerate(spines)
                for k in range(spec.count)]
        for leaf_end, spine_end, k in ends:
            isl = _isl(topo, spec, src, leaf_end, spine_end, k, speed, pool, used, problems)
            if isl is None:
                break  # a bad entry is reported once, not once per link
            topo.isls.append(isl)


def _isl(topo: Topology, spec: m.Links, src: Loc, leaf: tuple[ClusterSwitch, int], spine: tuple[ClusterSwitch, int],
         k: int, speed: float, pool: _Pool, used: dict[tuple[str, str], str],
         problems: list[TopologyProblem]) -> Isl | None:
    (leaf_sw, i), (spine_sw, j) = leaf, spine
    leaf_port = _port(leaf_sw, spec.leaf_port, j * spec.count + k, (*src, "leaf_port"), problems)
    spine_port = _port(spine_sw, spec.spine_port, i * spec.count + k, (*src, "spine_port"), problems)
    if leaf_port is None or spine_port is None:
        return None
    for sw, port, key in ((leaf_sw, leaf_port, "leaf_port"), (spine_sw, spine_port, "spine_port")):
        if (sw.name, port) in used:
            problems.append(TopologyProblem((*src, key), f"port {sw.name} {port} is already cabled to "
                                            f"{used[(sw.name, port)]}", "move the links to free ports"))
            return None
        used[(sw.name, port)] = f"the link {leaf_sw.name}-{spine_sw.name}"
    spine_addr = leaf_addr = None
    if topo.routed:
        pair = pool.take()
        if pair is None:
            where = (*src, "pool") if spec.pool else ("fabric", "p2p_pool")
            problems.append(TopologyProblem(where, "the pool has no /31 left for the links", "give a larger pool"))
            return None
        spine_addr, leaf_addr = pair
    return Isl(leaf_sw.name, leaf_port, spine_sw.name, spine_port, speed, topo.isl_mtu, leaf_addr, spine_addr,
               spec.pfc, src)


def _asns(cluster: Cluster, topo: Topology, problems: list[TopologyProblem]) -> None:
    fabric = cluster.inventory.fabric
    owner: dict[int, str] = {}
    for name in topo.of_role("spine"):
        topo.asns[name] = fabric.spine_asn
        owner.setdefault(fabric.spine_asn, "the spines")
    for position, name in enumerate(topo.of_role("leaf")):
        sw = cluster.switches[name]
        asn = sw.spec.asn if sw.spec.asn is not None else fabric.leaf_asn_first + position
        if asn in owner:
            loc = (*sw.src, "asn") if sw.spec.asn is not None else ("fabric", "leaf_asn_first")
            problems.append(TopologyProblem(loc, f"ASN {asn} of leaf {name} is already used by {owner[asn]}",
                                            "each leaf has its own ASN; the spines share fabric.spine_asn"))
        owner.setdefault(asn, f"leaf {name}")
        topo.asns[name] = asn


def _subnets(cluster: Cluster, topo: Topology, problems: list[TopologyProblem]) -> None:
    """Each leaf's host subnets (from its hosts' NIC addresses), their gateways, and overlaps between leaves."""
    found: dict[str, dict[ipaddress.IPv4Network, list[str]]] = {}
    first_src: dict[tuple[str, ipaddress.IPv4Network], tuple[Loc, str]] = {}
    for host in cluster.hosts:
        for nic in host.nics:
            if topo.roles.get(nic.switch) != "leaf":
                continue
            net = nic.address.network
            found.setdefault(nic.switch, {}).setdefault(net, []).append(nic.port or "?")
            first_src.setdefault((nic.switch, net), (nic.src, host.name))
    seen: list[tuple[ipaddress.IPv4Network, str]] = []
    for leaf, nets in found.items():
        for net in nets:
            clash = next((other for other in seen if other[0].overlaps(net)), None)
            if clash is not None:
                loc, host = first_src[(leaf, net)]
                problems.append(TopologyProblem((*loc, "address"), f"subnet {net} of leaf {leaf} ({host}) overlaps "
                                                f"{clash[0]} of leaf {clash[1]}",
                                                "each leaf routes its own subnet: give its hosts addresses there"))
        seen += [(net, leaf) for net in nets]
    for leaf in topo.of_role("leaf"):
        sw = cluster.switches[leaf]
        given = {}
        for j, text in enumerate(sw.spec.gateways):
            gateway = ipaddress.IPv4Interface(text)
            if gateway.network not in found.get(leaf, {}):
                problems.append(TopologyProblem((*sw.src, "gateways", j), f"{text} is in no host subnet of {leaf}",
                                                f"its subnets: {', '.join(map(str, found.get(leaf, {}))) or 'none'}"))
            given[gateway.network] = gateway
        topo.subnets[leaf] = [
            HostSubnet(net, given.get(net) or ipaddress.IPv4Interface(f"{net.network_address + 1}/{net.prefixlen}"),
                       tuple(ports))
            for net, ports in sorted(found.get(leaf, {}).items())
        ]
