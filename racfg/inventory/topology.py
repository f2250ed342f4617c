"""The switch graph of a site: the inter-switch links, the leaves' host subnets and the ASN plan.

Plain data, resolved once at load time (racfg.inventory.leafspine) and read by the rules, the budget
and the lab; it is the graph part of the intended site (racfg.intent), which adds what each switch
routes and each host's routes on it, and which render, the switch layer, validate and drift read. A ``single`` site has
no links and no routing; its graph is just the switches.

Conventions racfg applies where the inventory is silent (docs/inventory.md, "Leaf-spine sites"):
a leaf's gateway in a host subnet is the subnet's first host address; an inter-switch link takes the
next /31 of the pool, the spine side the even address and the leaf side the odd one; spines share
``fabric.spine_asn``, leaves count up from ``fabric.leaf_asn_first`` in file order.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class Isl:
    """One inter-switch link, both ends. Addresses are None on InfiniBand (the subnet manager routes)."""

    leaf: str
    leaf_port: str
    spine: str
    spine_port: str
    speed_gbps: float
    mtu: int
    leaf_address: ipaddress.IPv4Interface | None
    spine_address: ipaddress.IPv4Interface | None
    pfc: bool
    src: Loc  # the links entry it was written in


@dataclass(frozen=True)
class HostSubnet:
    """A data subnet a leaf routes as its hosts' gateway, with the leaf ports its hosts use."""

    network: ipaddress.IPv4Network
    gateway: ipaddress.IPv4Interface
    ports: tuple[str, ...]


@dataclass
class Topology:
    """The switch graph and, on a leaf-spine Ethernet site, its routing plan."""

    design: str
    fabric_type: str
    isl_mtu: int = 0  # every ISL's MTU (fabric.isl_mtu)
    roles: dict[str, str] = field(default_factory=dict)  # switch -> leaf | spine (leaf-spine only)
    isls: list[Isl] = field(default_factory=list)
    asns: dict[str, int] = field(default_factory=dict)  # switch -> ASN (routed Ethernet only)
    subnets: dict[str, list[HostSubnet]] = field(default_factory=dict)  # leaf -> its host subnets
    router_ids: dict[str, str] = field(default_factory=dict)  # switch -> BGP router id (its mgmt address)

    @property
    def routed(self) -> bool:
        return self.design == "leaf-spine" and self.fabric_type == "ethernet"

    def of_role(self, role: str) -> list[str]:
        return [name for name, r in self.roles.items() if r == role]

    def links_of(self, switch: str) -> list[Isl]:
        return [i for i in self.isls if switch in (i.leaf, i.spine)]

    def gateway_for(self, address: ipaddress.IPv4Interface) -> tuple[str, HostSubnet] | None:
        """The leaf and subnet that route a host address, when a leaf routes it."""
        for leaf, subnets in self.subnets.items():
            for subnet in subnets:
                if address.ip in subnet.network:
                    return leaf, subnet
        return None

    def islands(self, switches: list[str]) -> list[list[str]]:
        """The switch graph's connected parts, each a list of switch names in the given order."""
        parent = {name: name for name in switches}

        def root(name: str) -> str:
            while parent[name] != name:
                parent[name] = parent[parent[name]]
                name = parent[name]
            return name

        for isl in self.isls:
            parent[root(isl.leaf)] = root(isl.spine)
        groups: dict[str, list[str]] = {}
        for name in switches:
            groups.setdefault(root(name), []).append(name)
        return list(groups.values())

    def cut_off(self, switches: list[str], hosts: list[Any]) -> tuple[list[list[str]], dict[str, set[int]], list[Any]]:
        """Islands, the islands each host is cabled into, and the GPU servers (role dgx) that share no
        island with some storage node (role storage): those cannot read from it at all."""
        parts = self.islands(switches)
        part_of = {name: k for k, names in enumerate(parts) for name in names}
        reach = {h.name: {part_of[n.switch] for n in h.nics if n.switch in part_of} for h in hosts}
        if len(parts) < 2:
            return parts, reach, []
        storage = [reach[h.name] for h in hosts if h.role == "storage" and reach[h.name]]
        cut = [h for h in hosts if h.role == "dgx" and reach[h.name] and any(not reach[h.name] & s for s in storage)]
        return parts, reach, cut

    def data_networks(self, declared: list[str]) -> list[str]:
        """Where a host's routes lead: the site's declared data subnets, else every leaf subnet collapsed."""
        if declared:
            return list(declared)
        nets = [s.network for subnets in self.subnets.values() for s in subnets]
        return [str(n) for n in ipaddress.collapse_addresses(nets)]
