"""``ip -j link show`` / ``ip -j addr show``: per interface MTU, state, carrier, addresses, IPoIB.

Formats read: iproute2 JSON of a host with 8 IPoIB interfaces (``link_type: infiniband``, 20-byte
addresses; published as one compact line) and of the lab's veths (iproute2 6.1: MTU 9000, IPv4 and
IPv6 addresses, an interface whose peer is down: ``NO-CARRIER``, operstate ``LOWERLAYERDOWN``).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from racfg.hostfacts.common import load_json, optional_int
from racfg.hostfacts.parse_error import ParseError

TOOL = "ip"


@dataclass(frozen=True)
class Interface:
    """One interface. ``carrier`` is the kernel's LOWER_UP flag (a cable with a link partner);
    ``addresses`` are ``"198.18.0.11/24"`` strings in the order printed (empty for ``link show``)."""

    name: str
    mtu: int
    operstate: str
    admin_up: bool
    carrier: bool
    link_type: str
    mac: str | None
    addresses: tuple[str, ...] = ()

    @property
    def ipoib(self) -> bool:
        return self.link_type == "infiniband"

    @property
    def ipv4(self) -> tuple[str, ...]:
        return tuple(a for a in self.addresses if ipaddress.ip_interface(a).version == 4)


def parse_ip_json(text: str | bytes) -> dict[str, Interface]:
    """Parse ``ip -j link show`` or ``ip -j addr show``: interface name -> :class:`Interface`."""
    data = load_json(text, TOOL)
    if not isinstance(data, list):
        raise ParseError(TOOL, "-j: expected a JSON list of interfaces")
    result: dict[str, Interface] = {}
    for entry in data:
        if not isinstance(entry, dict) or not entry.get("ifname") or "mtu" not in entry:
            raise ParseError(TOOL, "-j: an interface without ifname or mtu")
        flags = entry.get("flags") or []
        addresses = []
        for address in entry.get("addr_info") or []:
            if "local" not in address or "prefixlen" not in address:
                continue  # an address being removed is printed without them
            addresses.append(f"{address['local']}/{address['prefixlen']}")
        result[entry["ifname"]] = Interface(
            name=entry["ifname"], mtu=optional_int(entry["mtu"], TOOL, "mtu") or 0,
            operstate=str(entry.get("operstate", "UNKNOWN")), admin_up="UP" in flags,
            carrier="LOWER_UP" in flags, link_type=str(entry.get("link_type", "")),
            mac=entry.get("address"), addresses=tuple(addresses),
        )
    return result
