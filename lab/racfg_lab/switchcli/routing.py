"""The emulated switch's layer-3 config (routed ports, VLAN interfaces, BGP) and its FRR translation.

A lab switch of a leaf-spine site routes for real: the kernel of its namespace forwards, the
kernel's multipath routes are its ECMP, and BGP is FRR's bgpd (racfg_lab.frr runs zebra and bgpd
in the namespace). The CLI keeps what an engineer typed here, in the running config like every
other setting, and ``frr_config`` turns it into the bgpd config that FRR is reloaded with: a pure
function, so what FRR is told is unit-tested without a lab. Addresses are not FRR's business:
the CLI puts them on the namespace's devices (racfg_lab.switchcli.l3dataplane), zebra learns them.

Only what a fabric of the RA needs is modelled: ``ip routing``, routed ports (``no switchport``
plus ``ip address A/31``), VLANs with access ports and a VLAN interface (the leaf's gateway),
and ``router bgp`` with a router id, neighbours by address, maximum paths, networks and
``redistribute connected``.
"""

from __future__ import annotations

import ipaddress
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class BgpConfig:
    asn: int
    router_id: str = ""
    neighbors: dict[str, int] = field(default_factory=dict)  # peer address -> its remote AS
    maximum_paths: int = 1
    networks: list[str] = field(default_factory=list)  # "10.1.0.0/24"
    redistribute_connected: bool = False


@dataclass
class RoutingConfig:
    ip_routing: bool = False  # EOS: off until ``ip routing``; Onyx routes by default (factory sets it)
    routed_ports: dict[str, str] = field(default_factory=dict)  # port -> "A/len" ("" routed, no address)
    vlans: list[int] = field(default_factory=list)
    access_vlan: dict[str, int] = field(default_factory=dict)  # switchport -> its access VLAN
    svis: dict[int, str] = field(default_factory=dict)  # VLAN -> "A/len" of its VLAN interface
    vlan_names: dict[int, str] = field(default_factory=dict)
    svi_mtu: dict[int, int] = field(default_factory=dict)  # VLAN interface MTU where one was set
    protocol_bgp: bool = False  # Onyx: BGP enabled as a protocol (``protocol bgp``)
    bgp: BgpConfig | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> RoutingConfig:
        if not data:
            return cls()
        data = dict(data)
        bgp = data.pop("bgp", None)
        return cls(
            ip_routing=bool(data.get("ip_routing", False)),
            routed_ports=dict(data.get("routed_ports", {})),
            vlans=[int(v) for v in data.get("vlans", [])],
            access_vlan={k: int(v) for k, v in data.get("access_vlan", {}).items()},
            svis={int(k): v for k, v in data.get("svis", {}).items()},
            vlan_names={int(k): v for k, v in data.get("vlan_names", {}).items()},
            svi_mtu={int(k): int(v) for k, v in data.get("svi_mtu", {}).items()},
            protocol_bgp=bool(data.get("protocol_bgp", False)),
            bgp=BgpConfig(**bgp) if bgp else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def routes(self) -> bool:
        """Has anything a routing daemon acts on."""
        return self.bgp is not None or bool(self.routed_ports) or bool(self.svis)


def parse_interface_address(text: str, mask: str | None = None) -> str:
    """``10.0.0.0/31`` or ``10.0.0.0 255.255.255.254`` (Onyx accepts both) -> ``10.0.0.0/31``.
    Raises ValueError for anything that is not a host address with a prefix."""
    iface = ipaddress.IPv4Interface(f"{text}/{mask}" if mask else text)
    if "/" not in text and not mask:
        raise ValueError(f"{text}: an address needs its prefix length")
    if iface.network.prefixlen < 31 and iface.ip in (iface.network.network_address, iface.network.broadcast_address):
        raise ValueError(f"{text}: not a host address of {iface.network}")
    return str(iface)


def parse_prefix(text: str, length: str | None = None) -> str:
    """``10.1.0.0/24``, Onyx ``10.1.0.0 /24`` or ``10.1.0.0 255.255.255.0`` -> ``10.1.0.0/24``."""
    if length:
        text = f"{text}/{length.lstrip('/')}"
    return str(ipaddress.IPv4Network(text, strict=True))


def frr_config(hostname: str, routing: RoutingConfig) -> str:
    """The bgpd config of a switch whose CLI state is ``routing``.

    ``frr defaults datacenter`` gives the fast timers a fabric uses (3 s keepalive, 9 s hold) and
    sends eBGP routes without an explicit policy, as Onyx and EOS do (FRR's traditional profile
    would hold them back: ``ebgp-requires-policy``). With BGP unconfigured bgpd runs with no router.
    """
    lines = ["frr defaults datacenter", f"hostname {hostname}", "!"]
    bgp = routing.bgp
    if bgp is None:
        return "\n".join(lines) + "\n"
    lines.append(f"router bgp {bgp.asn}")
    if bgp.router_id:
        lines.append(f" bgp router-id {bgp.router_id}")
    lines.append(" no bgp ebgp-requires-policy")
    for peer in sorted(bgp.neighbors, key=ipaddress.IPv4Address):
        lines.append(f" neighbor {peer} remote-as {bgp.neighbors[peer]}")
    lines += [" !", " address-family ipv4 unicast"]
    lines += [f"  network {net}" for net in sorted(bgp.networks, key=ipaddress.IPv4Network)]
    if bgp.redistribute_connected:
        lines.append("  redistribute connected")
    lines += [f"  maximum-paths {bgp.maximum_paths}", " exit-address-family", "exit", "!"]
    return "\n".join(lines) + "\n"
