"""Common switch facts: what every platform's parsers produce, whatever the vendor printed.

Validators, drift and apply compare these, never raw vendor output, so a new platform only
has to teach racfg how to read its show commands.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class PortFacts:
    """One front-panel port as the switch reports it. Keys of the port dicts are canonical names."""

    mtu: int
    admin_up: bool
    oper_up: bool
    speed_gbps: float | None
    description: str = ""


@dataclass(frozen=True)
class PfcFacts:
    """Priority flow control and RoCE/lossless state: global, and per port (canonical names)."""

    enabled: bool
    ports: dict[str, bool] = field(default_factory=dict)
    roce: bool = False
    lossless_priorities: tuple[int, ...] = ()
    # EOS keeps no-drop priorities per port, also on a port whose PFC is off: each must be removed there.
    port_priorities: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def any_enabled(self) -> bool:
        return (self.enabled or self.roce or bool(self.lossless_priorities) or any(self.ports.values())
                or any(self.port_priorities.values()))


@dataclass(frozen=True)
class LldpNeighbor:
    """The neighbor seen on a local port: its system name and its port (as it announces them)."""

    system_name: str
    port: str


@dataclass(frozen=True)
class ConfigLine:
    """One routing setting of the running config, in the mode it lives in: ``context`` is the line
    that enters the mode (``interface ethernet 1/21``, ``router bgp 65101``; None: global), ``key``
    names the setting within it (``ip address``, ``neighbor 10.0.0.0``), ``line`` is as configured.
    A setting with one value has one key (a new value replaces the old); a list has one key per item."""

    context: str | None
    key: str
    line: str


def has_bgp_process(lines: Iterable[ConfigLine]) -> bool:
    """Whether routing settings of a running config hold a BGP process."""
    return any(line.key == "router bgp" or (line.context or "").startswith("router bgp ") for line in lines)


@dataclass
class SwitchFacts:
    """Everything racfg reads from one switch in one pass."""

    name: str
    platform: str
    version: str
    interfaces: dict[str, PortFacts]
    pfc: PfcFacts
    lldp: dict[str, LldpNeighbor]
    config_saved: bool | None = None  # running config == startup; None where the platform cannot tell
    # The routing settings of the running config (routed ports, VLANs, BGP); None: not read.
    config_lines: tuple[ConfigLine, ...] | None = None
    # The fabric's routing state, read only from a switch whose running config has a BGP process
    # (SwitchSession.facts(routing=True)); None: not read, with the reason in routing_error where
    # the switch routes but its BGP or route table could not be read.
    bgp: BgpFacts | None = None
    routes: RouteFacts | None = None
    routing_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SwitchFacts:
        """The inverse of ``to_dict``, also after a JSON round trip (tuples come back as lists): how
        facts read once in a run reach the switch play, which then plans without logging in again."""
        pfc = dict(data["pfc"])
        pfc["lossless_priorities"] = tuple(pfc.get("lossless_priorities") or ())
        pfc["port_priorities"] = {p: tuple(v) for p, v in (pfc.get("port_priorities") or {}).items()}
        return cls(
            name=data["name"], platform=data["platform"], version=data["version"],
            interfaces={p: PortFacts(**f) for p, f in data["interfaces"].items()},
            pfc=PfcFacts(**pfc),
            lldp={p: LldpNeighbor(**n) for p, n in data["lldp"].items()},
            config_saved=data.get("config_saved"),
            config_lines=None if data.get("config_lines") is None
            else tuple(ConfigLine(**c) for c in data["config_lines"]),
            bgp=None if data.get("bgp") is None else BgpFacts.from_dict(data["bgp"]),
            routes=None if data.get("routes") is None else RouteFacts.from_dict(data["routes"]),
            routing_error=data.get("routing_error"),
        )

    @property
    def routes_traffic(self) -> bool:
        """Whether the running config holds a BGP process: the switch routes, so its BGP and route
        tables are part of its facts (a switch with none prints an error for them, not an empty table)."""
        return has_bgp_process(self.config_lines or ())


# --- Routed fabrics (leaf-spine): what the BGP and route parsers of every platform produce. ---
# Checks compare peer addresses and next hops with the routing intent, so interfaces stay as the
# switch prints them (canonical where they are front-panel ports) and ASNs are asplain integers.

BGP_STATES = ("Established", "Idle", "Connect", "Active", "OpenSent", "OpenConfirm")


@dataclass(frozen=True)
class BgpPeer:
    """One BGP session as the switch reports it.

    ``state`` is one of BGP_STATES (RFC 4271 names) whatever the vendor's spelling; ``detail`` keeps
    what the vendor added (``Admin`` for a shut neighbour, ``Policy`` where FRR holds every prefix
    back for want of a policy). ``prefixes_received`` is None where the switch printed no count."""

    address: str
    remote_asn: int
    state: str
    prefixes_received: int | None = None
    uptime_s: float | None = None  # time in the current state; None where the output gives no clock
    interface: str | None = None  # the peer's interface where it is named by one (unnumbered, FRR hostname(ifname))
    detail: str = ""

    @property
    def established(self) -> bool:
        return self.state == "Established"


@dataclass(frozen=True)
class BgpFacts:
    """``show ip bgp summary`` of one switch, default VRF, IPv4 unicast: peers keyed by address.
    ``local_asn`` and ``router_id`` are None where BGP runs with no neighbour (FRR then prints only
    ``% No BGP neighbors found``)."""

    local_asn: int | None
    router_id: str | None
    peers: dict[str, BgpPeer] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BgpFacts:
        """The inverse of ``to_dict``, also after a JSON round trip (drift's baseline)."""
        return cls(data["local_asn"], data["router_id"], {a: BgpPeer(**p) for a, p in data["peers"].items()})


@dataclass(frozen=True)
class NextHop:
    """One path of a route: the gateway (None when directly connected) and the outgoing interface."""

    address: str | None
    interface: str | None = None


@dataclass(frozen=True)
class Route:
    """One prefix of the routing table. ``protocol``: bgp, connected, static, kernel, local, ospf, ...
    (``unknown`` for a code racfg does not know); ``installed``: in the forwarding table."""

    prefix: str
    protocol: str
    next_hops: tuple[NextHop, ...] = ()
    installed: bool = True


@dataclass(frozen=True)
class RouteFacts:
    """A routing table (or the part of it a query returned), keyed by prefix (``10.1.0.0/24``)."""

    routes: dict[str, Route] = field(default_factory=dict)

    def of_protocol(self, protocol: str) -> dict[str, Route]:
        return {p: r for p, r in self.routes.items() if r.protocol == protocol}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RouteFacts:
        """The inverse of ``to_dict``, also after a JSON round trip (next hops come back as lists)."""
        return cls({prefix: Route(r["prefix"], r["protocol"], tuple(NextHop(**h) for h in r["next_hops"]),
                                  r.get("installed", True)) for prefix, r in data["routes"].items()})
