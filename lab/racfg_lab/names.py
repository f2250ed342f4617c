"""Names of everything the lab creates, all derived from the site so that labs can coexist.

Every network namespace is ``rf-<site>.<node>`` (a site name cannot hold a dot, so the prefix
``rf-<site>.`` never matches another site's namespaces); every link in the root namespace starts with
``rfm`` and carries a short hash of the site (Linux caps interface names at 15 characters).
``lab down --all`` finds strays by these prefixes even when a state file is gone.
"""

from __future__ import annotations

import hashlib

NETNS_PREFIX = "rf-"
ROOT_LINK_PREFIX = "rfm"
DRIVE_SUFFIX = ".racfg-drive.img"
MGMT_IFNAME = "mgmt0"  # the management NIC inside every host and switch namespace
BRIDGE_IFNAME = "br0"  # the data-plane bridge inside a switch namespace


def short_hash(text: str, length: int = 4) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:length]


def netns(site: str, node: str) -> str:
    return f"{NETNS_PREFIX}{site}.{node}"


def netns_prefix(site: str) -> str:
    return f"{NETNS_PREFIX}{site}."


def mgmt_bridge(site: str) -> str:
    """The management bridge in the root namespace: ``rfm<site hash>`` (7 chars)."""
    return f"{ROOT_LINK_PREFIX}{short_hash(site)}"


def mgmt_veth(site: str, node: str) -> str:
    """Root-namespace end of a node's management veth: ``rfm<site hash><node hash>`` (12 chars)."""
    return f"{ROOT_LINK_PREFIX}{short_hash(site)}{short_hash(site + '/' + node, 5)}"


def switch_port_ifname(port_index: int, lane: int | None) -> str:
    """Switch-side veth of a front-panel port: ``swp1``, ``swp17s2`` for breakout lane 2."""
    return f"swp{port_index}" + (f"s{lane}" if lane is not None else "")
