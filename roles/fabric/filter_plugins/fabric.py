"""The fabric role's decisions about the host's links, read from ``ip -j addr show`` (a list of links,
each with ``ifname``, ``mtu`` and ``addr_info``): which interface carries the management address,
which data NICs drifted from the inventory, which must not be touched, and what is wrong after a
change. Pure functions, so they are unit-tested on real ``ip -j`` output (tests/roles/test_fabric_filters.py)
instead of living as Jinja loops in the role's vars.

A data NIC (``common_data_nics``, from the common role) is ``{name, address: "A.B.C.D/P", mtu}``.
"""

from __future__ import annotations

from typing import Any

Link = dict[str, Any]
Nic = dict[str, Any]


def _link(links: list[Link], name: str) -> Link:
    return next((link for link in links if link.get("ifname") == name), {})


def _inet(link: Link) -> list[str]:
    """The link's IPv4 addresses with their prefix: ``198.19.0.11/24``."""
    return [f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", []) if a.get("family") == "inet"]


def _ip(address: str) -> str:
    return str(address).split("/", 1)[0]


def mgmt_ifaces(links: list[Link], mgmt_address: str) -> list[str]:
    """The interfaces that carry the address racfg reaches the host on (never a data NIC)."""
    return [link["ifname"] for link in links
            if mgmt_address in [a.get("local") for a in link.get("addr_info", [])]]


def live_drift(nics: list[Nic], links: list[Link]) -> list[str]:
    """Data NICs present on the host whose live MTU or address is not the inventory's (changed by
    hand or by another tool): they are reconfigured even when their configuration file is right."""
    out = []
    for nic in nics:
        link = _link(links, nic["name"])
        if link and (int(link["mtu"]) != int(nic["mtu"]) or _ip(nic["address"]) not in map(_ip, _inet(link))):
            out.append(nic["name"])
    return out


def nic_refusals(nics: list[Nic], links: list[str], mgmt: list[str], mgmt_address: str) -> list[str]:
    """One "data NIC ...: why" line per data NIC the role must not touch: absent from the host (``links``
    are the host's interface names), or the management interface."""
    out = []
    for nic in nics:
        if nic["name"] not in links:
            out.append(f"data NIC {nic['name']}: not present on this host (links: {', '.join(links)})")
        elif nic["name"] in mgmt or _ip(nic["address"]) == mgmt_address:
            out.append(f"data NIC {nic['name']}: carries the management address {mgmt_address}; refusing to touch it")
    return out


def nic_mismatches(nics: list[Nic], links: list[Link]) -> list[str]:
    """One "NIC: Expected: ... Actual: ..." line per data NIC whose live MTU or address (with its prefix,
    hence its connected route) is not the inventory's: the role's postcondition."""
    out = []
    for nic in nics:
        link = _link(links, nic["name"])
        expected = f"{nic['name']}: Expected: MTU {nic['mtu']}, {nic['address']}"
        if not link:
            out.append(f"{expected} Actual: no such link")
        elif int(link["mtu"]) != int(nic["mtu"]) or nic["address"] not in _inet(link):
            out.append(f"{expected} Actual: MTU {link['mtu']}, {', '.join(_inet(link)) or 'no IPv4 address'}")
    return out


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"fabric_mgmt_ifaces": mgmt_ifaces, "fabric_live_drift": live_drift,
                "fabric_nic_refusals": nic_refusals, "fabric_nic_mismatches": nic_mismatches}
