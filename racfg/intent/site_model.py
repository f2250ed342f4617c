"""The parts of the intended site (racfg.intent): plain frozen data, read by render, the switch layer,
validate, drift and smoke. The switch graph's own parts (Isl, HostSubnet, Topology) are
racfg.inventory.topology's, resolved at load time because the inventory's rules read them; the model
holds that graph and adds what each switch and host is to do on it."""

from __future__ import annotations

from dataclasses import dataclass, field

from racfg.catalog import SwitchModel
from racfg.inventory.topology import HostSubnet, Topology


@dataclass(frozen=True)
class IslEnd:
    """One inter-switch link seen from one of its switches: its port and address, the peer's name, port,
    address (on the /31, without prefix length) and ASN, the link's MTU and speed."""

    port: str
    address: str  # "172.16.0.1/31"
    peer: str
    peer_port: str
    peer_address: str | None
    peer_asn: int
    mtu: int
    speed_gbps: float


@dataclass(frozen=True)
class SwitchRouting:
    """What a leaf or spine of a routed (leaf-spine Ethernet) site routes: its routed ISL ends, the host
    subnets it is the gateway of (a leaf), BGP (its ASN, router id, a neighbour per ISL) and ECMP."""

    role: str  # leaf | spine
    asn: int
    router_id: str
    spine_asn: int | None
    isls: tuple[IslEnd, ...]
    subnets: tuple[HostSubnet, ...]
    maximum_paths: int  # ECMP: a leaf spreads over every uplink, a spine over its links to one leaf


@dataclass(frozen=True)
class CabledPort:
    """A switch port a host NIC is cabled to, at the switch MTU and the NIC's speed."""

    port: str  # canonical
    host: str
    nic: str
    mtu: int
    speed_gbps: float

    @property
    def description(self) -> str:
        return f"{self.host}:{self.nic}"


@dataclass(frozen=True)
class SwitchIntent:
    """One switch as the site intends it: its model, tier, cabled ports (in port order) and routing."""

    name: str
    platform: str
    model: SwitchModel
    role: str | None  # leaf | spine on a leaf-spine site, else None
    ports: tuple[CabledPort, ...]
    shutdown_unused: bool
    os_version: str | None
    routing: SwitchRouting | None  # None where the switch does not route (single, InfiniBand)


@dataclass(frozen=True)
class HostRoute:
    """One NIC's route to the site's data networks through its leaf's gateway; ``table`` is its own
    routing table where the host does source routing (NICs in several leaf subnets), else None."""

    nic: str
    leaf: str
    to: tuple[str, ...]
    via: str
    source: str
    subnet: str  # the connected route a source-routing table also needs
    metric: int
    table: int | None


@dataclass(frozen=True)
class HostRouting:
    """A host's routing on a routed leaf-spine site: its default gateway and a route per NIC."""

    gateway: str | None
    source_routing: bool
    routes: tuple[HostRoute, ...]


@dataclass(frozen=True)
class SiteIntent:
    """The whole intended site. ``topology`` is the switch graph (tiers, ISLs, subnets, ASNs); the
    figures are what the checks expect: ``host_gbps`` what each switch's hosts can send in all (the sum
    of their NICs' line rates), ``max_oversubscription`` the site's ceiling of that over the uplinks."""

    name: str
    topology: Topology
    switches: dict[str, SwitchIntent]
    hosts: dict[str, HostRouting | None]  # host -> its routing (None where the site does not route)
    host_gbps: dict[str, float]
    max_oversubscription: float
    pfc: bool
    roce: bool
    switch_mtu: int
    data_networks: tuple[str, ...] = field(default=())  # where hosts' routes lead (routed sites)

    @property
    def routed(self) -> bool:
        return self.topology.routed

    def routing_of(self, switch: str) -> SwitchRouting | None:
        found = self.switches.get(switch)
        return found.routing if found else None
