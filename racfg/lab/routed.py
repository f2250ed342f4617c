"""The routed part of a lab fabric: inter-switch links and the routing of the switches that use them.

An inter-switch link (ISL) is a veth between two switch namespaces, each end named as the switch's
port (``swpN``) and shaped with the same tbf as a host cable (fabric.Shaper: the lab rate both
ways, each end's queue its switch model's buffer), so a spine tier can be saturated and its
ports' counters (the veths' own) are what the switch CLI shows. Each end starts as a switchport in
its switch's bridge at the factory MTU, as a real port does; the switch's config (``no switchport``,
``ip address``, ``mtu``) makes it a routed port. A switch that routes gets its FRR daemons
(racfg.lab.frr) and tells its CLI where they are (``frr_dir`` in cli.json).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from racfg.lab import frr, names
from racfg.lab.fabric import FRESH_SWITCH_MTU, PORT_BUFFER_BYTES, set_rate
from racfg.lab.netns import ip, link_exists
from racfg.lab.state import SwitchState


@dataclass(frozen=True)
class IslEnd:
    """One end of an ISL: the switch's namespace, its port device there and the switch's port buffer."""

    netns: str
    ifname: str
    buffer_bytes: int = PORT_BUFFER_BYTES


def add_isl(a: IslEnd, b: IslEnd, rate_mbit: int) -> None:
    """Cable two switch ports to each other (idempotent: an existing link is kept and re-set)."""
    if not link_exists(a.ifname, a.netns):
        ip(None, "link", "add", a.ifname, "netns", a.netns, "type", "veth", "peer", "name", b.ifname, "netns", b.netns)
    for end in (a, b):
        ip(end.netns, "link", "set", end.ifname, "mtu", str(FRESH_SWITCH_MTU), "master", names.BRIDGE_IFNAME, "up")
        set_rate(end.netns, end.ifname, rate_mbit, end.buffer_bytes)


def start_routing(switch: SwitchState, switch_dir: Path) -> dict[str, str]:
    """Start the switch's routing daemons; returns what its cli.json adds (``frr_dir``)."""
    frr.start(switch.netns, switch_dir, switch.name)
    return {"frr_dir": str(frr.frr_dir(switch_dir))}
