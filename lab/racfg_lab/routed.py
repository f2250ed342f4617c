"""The routed part of a lab fabric: inter-switch links and the routing of the switches that use them.

An inter-switch link (ISL) is a veth between two switch namespaces, each end named as the switch's
port (``swpN``) and shaped with the same tbf as a host cable (fabric.Shaper: the lab rate both
ways, each end's queue its switch model's buffer), so a spine tier can be saturated and its
ports' counters (the veths' own) are what the switch CLI shows. Each end starts as a switchport in
its switch's bridge at the factory MTU, as a real port does; the switch's config (``no switchport``,
``ip address``, ``mtu``) makes it a routed port.

Before that config, every leaf-spine pair of ISLs is a loop (leaf1 - spine1 - leaf2 - spine2 - leaf1)
where each broadcast would circle for ever. A factory switch's spanning tree blocks it; the lab's
stand-in is an *isolated* bridge port (``bridge_slave isolated on``): an ISL switchport forwards to
and from its switch's host ports but never to another ISL, so no loop can form, whatever the load
and with no timers to converge (a kernel spanning tree that has not converged on a loaded machine
lets a storm start, and the storm's full queues then drop the BPDUs that would stop it). Nothing of
racfg crosses a switchport ISL.

A switch that routes gets its FRR daemons (racfg_lab.frr) and tells its CLI where they are
(``frr_dir`` in cli.json).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from racfg.catalog import parse_port
from racfg.inventory.cluster import Cluster
from racfg_lab import frr, ibfabric, names
from racfg_lab.fabric import FRESH_SWITCH_MTU, PORT_BUFFER_BYTES, lab_rate_mbit, port_buffer_bytes, set_rate
from racfg_lab.netns import ip, link_exists
from racfg_lab.state import SwitchState
from racfg_lab.switchcli import frrctl
from racfg_lab.switchcli.l3dataplane import ISOLATED


@dataclass(frozen=True)
class IslEnd:
    """One end of an ISL: the switch's namespace, its port device there and the switch's port buffer."""

    netns: str
    ifname: str
    buffer_bytes: int = PORT_BUFFER_BYTES


def add_isl(a: IslEnd, b: IslEnd, rate_mbit: int) -> None:
    """Cable two switch ports to each other as isolated switchports (idempotent: an existing link is
    kept and re-set)."""
    if not link_exists(a.ifname, a.netns):
        ip(None, "link", "add", a.ifname, "netns", a.netns, "type", "veth", "peer", "name", b.ifname, "netns", b.netns)
    for end in (a, b):
        ip(end.netns, "link", "set", end.ifname, "mtu", str(FRESH_SWITCH_MTU), "master", names.BRIDGE_IFNAME)
        ip(end.netns, "link", "set", "dev", end.ifname, *ISOLATED)
        ip(end.netns, "link", "set", end.ifname, "up")
        set_rate(end.netns, end.ifname, rate_mbit, end.buffer_bytes)


def routes(cluster: Cluster) -> bool:
    """The site's lab switches route: a leaf-spine Ethernet site, or the routed stand-in of an InfiniBand
    two-tier one (racfg_lab.ibfabric)."""
    return cluster.topology.routed or ibfabric.stands_in(cluster)


def start_switch_routing(cluster: Cluster, switch: SwitchState, switch_dir: Path) -> dict[str, str]:
    """``lab up``: start a switch's routing daemons where the site routes; what its cli.json adds. On an
    InfiniBand stand-in bgpd starts with the lab's own config and the CLI is not told where FRR is (the
    MLNX-OS CLI configures no routing; nothing may rewrite the lab's)."""
    if cluster.topology.routed:
        return start_routing(switch, switch_dir)
    if ibfabric.stands_in(cluster):
        config = ibfabric.plan(cluster)[switch.name].bgpd_config(switch.name)
        directory = frr.frr_dir(switch_dir)
        directory.mkdir(parents=True, exist_ok=True)
        frrctl.conf_path(directory, "bgpd").write_text(config)
        frr.start(switch.netns, switch_dir, switch.name)
    return {}


def start_routing(switch: SwitchState, switch_dir: Path) -> dict[str, str]:
    """Start the switch's routing daemons; returns what its cli.json adds (``frr_dir``)."""
    frr.start(switch.netns, switch_dir, switch.name)
    return {"frr_dir": str(frr.frr_dir(switch_dir))}


def start_routing_if_stopped(switch: SwitchState, switch_dir: Path) -> bool:
    """``lab up`` of a lab that is up: restart the daemons of a switch if one is gone; True if it did."""
    if len(frr.running_pids(switch_dir)) == len(frrctl.DAEMONS):
        return False
    start_routing(switch, switch_dir)
    return True


def cable_isls(cluster: Cluster, switches: dict[str, SwitchState], ports: dict[str, dict[str, dict]],
               scale_mbit_per_100g: int) -> int:
    """Cable every ISL of a routed leaf-spine site (``lab up``'s cables step) and add both ends to the
    switches' cli.json port maps (``ports``: switch -> port -> entry). Returns how many were made. An
    InfiniBand two-tier site's ISLs become routed ports of the lab's stand-in at once (racfg_lab.ibfabric)."""
    if not routes(cluster):
        return 0
    for isl in cluster.topology.isls:
        ends = [(isl.leaf, isl.leaf_port), (isl.spine, isl.spine_port)]
        made = []
        for (name, port), (peer, peer_port) in zip(ends, reversed(ends), strict=True):
            sw = cluster.switches[name]
            parsed = parse_port(sw.platform, port, sw.model)
            ifname = names.switch_port_ifname(parsed.index, parsed.lane)
            made.append(IslEnd(switches[name].netns, ifname, port_buffer_bytes(sw.spec.model)))
            ports[name][port] = {"ifname": ifname, "speed_gbps": isl.speed_gbps, "peer_host": peer,
                                 "peer_nic": peer_port, "isl": True,
                                 "lab_rate_mbit": lab_rate_mbit(isl.speed_gbps, scale_mbit_per_100g)}
        add_isl(made[0], made[1], lab_rate_mbit(isl.speed_gbps, scale_mbit_per_100g))
    if ibfabric.stands_in(cluster):
        ibfabric.configure(cluster, switches, cluster.topology.isl_mtu)
    return len(cluster.topology.isls)
