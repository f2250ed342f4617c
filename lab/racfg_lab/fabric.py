"""Management network and data fabric: bridges, veth cables and their shaped line rate.

Management: one bridge in the root namespace holding the first address of the inventory's
management subnet, and one veth per node, so the machine running racfg reaches every host and
switch on its inventory address, exactly as a jump host would. Nothing routes it further.

Data fabric: each switch is a namespace with a Linux bridge; each cabled port is a veth pair,
switch end ``swpN`` enslaved to the bridge, host end named as the inventory NIC. Both ends carry
a tbf qdisc at the lab rate (the switch end shapes what the switch sends to the host, the host
end, set from the root namespace, what the host sends into the switch), so a cable is limited
both ways, as a real link is, and a saturation test in either direction means something. The
switch end's MTU is the switch port MTU and is enforced by the kernel.

A cable swap (a wiring fault) moves the switch ends of two cables: the veth devices change
names (and namespaces, across switches), while the port's MTU, admin state and rate stay with
the port's name, as they stay with a switch port when someone replugs the cable.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass

from racfg.errors import CannotRunError
from racfg.inventory.cluster import Cluster
from racfg_lab import names
from racfg_lab.netns import create_netns, ip, link_exists, link_info
from racfg_lab.sh import ok, run

DEFAULT_SCALE_MBIT_PER_100G = 1000  # 100G declared -> 1 Gbit/s in the lab
# What the lab's data plane carries at once on a 2-core machine with room to spare: a leaf-spine lab's
# 8 client links at 1 Gbit/s took in 7.5 Gbit/s, 16 of them 3.8-7.7 (bench/RESULTS.md).
LAB_CARRIES_MBIT = 4000
FRESH_SWITCH_MTU = 1500
PORT_BUFFER_BYTES = 16 * 1024 * 1024  # a switch port's packet buffer unless its model says (see Shaper)
QUEUE_FLOOR_MS = 50  # ... or this much of line rate on a slow link
BURST_FLOOR = 64 * 1024  # a few jumbo frames


def mgmt_gateway(cluster: Cluster) -> ipaddress.IPv4Interface:
    """First address of ``fabric.mgmt_subnet``, else the .1 of the /24 of the first management address."""
    if cluster.fabric.mgmt_subnet:
        net = ipaddress.ip_network(cluster.fabric.mgmt_subnet)
    else:
        first = cluster.hosts[0].mgmt if cluster.hosts else ipaddress.IPv4Address(
            next(iter(cluster.switches.values())).spec.mgmt)
        net = ipaddress.ip_network(f"{first}/24", strict=False)
    return ipaddress.IPv4Interface(f"{next(net.hosts())}/{net.prefixlen}")


def lab_rate_mbit(speed_gbps: float, scale_mbit_per_100g: int) -> int:
    return max(1, round(speed_gbps * scale_mbit_per_100g / 100))


def smoke_load_100g(cluster: Cluster) -> float:
    """The most smoke loads the data plane with at once, in 100G: its largest scaling step
    (acceptance.smoke.scaling_steps, else every dgx host) times the fastest dgx host's data links."""
    dgx = cluster.role("dgx")
    steps = cluster.inventory.acceptance.smoke.scaling_steps
    clients = min(max(steps), len(dgx)) if steps else len(dgx)
    per_host = max((sum(nic.speed_gbps for nic in host.nics) for host in dgx), default=0.0)
    return clients * per_host / 100


def fitting_scale(cluster: Cluster) -> int:
    """The lab's line rate per 100G for this site: the default, or less where smoke's largest load would
    need more than the lab's data plane carries at once (``LAB_CARRIES_MBIT``). Above that the
    machine's CPUs, not the links, are what a measurement measures."""
    load = smoke_load_100g(cluster)
    if load * DEFAULT_SCALE_MBIT_PER_100G <= LAB_CARRIES_MBIT:
        return DEFAULT_SCALE_MBIT_PER_100G
    return max(1, int(LAB_CARRIES_MBIT / load))


def _addresses_in_use() -> dict[str, str]:
    proc = run(["ip", "-j", "-4", "addr", "show"], check=False, quiet=True)
    used = {}
    for link in json.loads(proc.stdout or "[]"):
        for addr in link.get("addr_info", []):
            used[addr["local"]] = link["ifname"]
    return used


def setup_mgmt_bridge(site: str, gateway: ipaddress.IPv4Interface) -> str:
    bridge = names.mgmt_bridge(site)
    holder = _addresses_in_use().get(str(gateway.ip))
    if holder and holder != bridge:
        raise CannotRunError(
            f"management gateway {gateway.ip} is already on interface {holder}",
            hint="another lab (or network) uses this subnet; give this inventory a different "
                 "fabric.mgmt_subnet, or run `racfg lab down` for the other one",
        )
    if not link_exists(bridge):
        ip(None, "link", "add", bridge, "type", "bridge")
    # No forwarding out of the lab: the bridge is an island; the gateway address only lets
    # this machine (racfg, ansible, tests) reach the nodes.
    if holder != bridge:
        ip(None, "addr", "add", str(gateway), "dev", bridge)
    ip(None, "link", "set", bridge, "up")
    return bridge


def attach_mgmt(site: str, node: str, netns: str, address: str, prefixlen: int) -> None:
    """A veth from the management bridge to ``mgmt0`` inside the node's namespace, with its address."""
    outer = names.mgmt_veth(site, node)
    if not link_exists(outer):
        ip(None, "link", "add", outer, "type", "veth", "peer", "name", names.MGMT_IFNAME, "netns", netns)
    ip(None, "link", "set", outer, "master", names.mgmt_bridge(site), "up")
    ok(["ip", "-n", netns, "addr", "add", f"{address}/{prefixlen}", "dev", names.MGMT_IFNAME])
    ip(netns, "link", "set", names.MGMT_IFNAME, "up")


def setup_switch_netns(netns: str) -> None:
    create_netns(netns)
    if not link_exists(names.BRIDGE_IFNAME, netns):
        ip(netns, "link", "add", names.BRIDGE_IFNAME, "type", "bridge", "stp_state", "0", "mcast_snooping", "0")
    ip(netns, "link", "set", names.BRIDGE_IFNAME, "up")


def port_buffer_bytes(model: str) -> int:
    """A switch model's packet buffer (racfg.catalog), the queue its lab ports get; unknown
    models get a Spectrum's 16 MB."""
    from racfg.catalog import SWITCH_MODELS

    known = SWITCH_MODELS.get(model)
    return known.buffer_mib * 1024 * 1024 if known else PORT_BUFFER_BYTES


def add_cable(host_netns: str, nic: str, switch_netns: str, switch_ifname: str, rate_mbit: int,
              buffer_bytes: int = PORT_BUFFER_BYTES) -> str:
    """Cable a host NIC to a switch port (whose packet buffer is ``buffer_bytes``, the switch
    model's); returns the host NIC's MAC address."""
    if not link_exists(switch_ifname, switch_netns):
        ip(None, "link", "add", nic, "netns", host_netns, "type", "veth",
           "peer", "name", switch_ifname, "netns", switch_netns)
    ip(switch_netns, "link", "set", switch_ifname, "mtu", str(FRESH_SWITCH_MTU), "master", names.BRIDGE_IFNAME)
    ip(switch_netns, "link", "set", switch_ifname, "up")
    ip(host_netns, "link", "set", nic, "up")
    set_cable_rate(CableEnds(switch_netns, switch_ifname, host_netns, nic), rate_mbit, buffer_bytes)
    return link_info(host_netns, nic).get("address", "")


@dataclass(frozen=True)
class CableEnds:
    """Where a cable's two veth ends are: the switch port device and the host NIC, by namespace."""

    switch_netns: str
    switch_ifname: str
    host_netns: str
    nic: str


def set_cable_rate(ends: CableEnds, rate_mbit: float, switch_buffer_bytes: int | None = None) -> None:
    """The lab line rate of a cable, both directions: switch port egress (to the host) and host
    NIC egress (to the switch). Shaping only the switch side would let a host send unlimited.
    ``switch_buffer_bytes`` is given when a cable is made; a rate change keeps each end's."""
    set_rate(ends.switch_netns, ends.switch_ifname, rate_mbit, switch_buffer_bytes)
    set_rate(ends.host_netns, ends.nic, rate_mbit)


@dataclass(frozen=True)
class Shaper:
    """The tbf parameters of one shaped veth end: line rate, token bucket and queue.

    ``burst`` is about 5 ms of line rate (never below a few jumbo frames): enough that a shaper
    woken late on a busy 2-core machine does not lose tokens, and too little to matter against a
    measurement (0.2% of a 3 s window, which smoke starts after a warm-up second anyway). Over any
    interval a token bucket passes at most its rate times the interval plus one burst, and under a
    sustained load the bucket stays empty: a link held to its rate reads at most its rate. The lab's
    readings of 101-107% of line rate were sums of iperf3 processes over different seconds, not the
    shaper's; smoke now reads a link on its receiving NIC (98.7-99.0% of line rate on the smokelab).

    ``limit`` is the port's packet buffer, in bytes: the real switch model's (a Spectrum SN2700
    shares 16 MB between its ports, a 7368X's Tomahawk 3 64 MB, and one congested port can take
    most of it; see racfg.catalog), or 50 ms of line rate on a link slow enough that this is
    more. The lab scales rates down, not packet sizes nor TCP windows, so a buffer kept in time
    (50 ms at the lab's rate) would be smaller than the real one in what matters to TCP: an incast
    of a few storage hosts into one client port (smoke's) queues megabytes whatever the rate, and a
    queue of the scaled-down size drops where the real switch's buffer absorbs it, which the lab
    switch would then count as egress discards the real fabric never has.
    """

    rate_bit: int
    burst: int
    limit: int

    @classmethod
    def for_rate(cls, rate_mbit: float, buffer_bytes: int = PORT_BUFFER_BYTES) -> Shaper:
        rate_bit = max(1, round(rate_mbit * 1_000_000))  # a rate read back from tc may be fractional Mbit/s
        burst = max(BURST_FLOOR, rate_bit // 8 // 200)
        limit = max(buffer_bytes, rate_bit // 8 * QUEUE_FLOOR_MS // 1000) + burst
        return cls(rate_bit, burst, limit)

    def tc_args(self) -> list[str]:
        return ["tbf", "rate", f"{self.rate_bit}bit", "burst", str(self.burst), "limit", str(self.limit)]


def set_rate(netns: str, ifname: str, rate_mbit: float, buffer_bytes: int | None = None) -> None:
    """Shape egress of one veth end with tbf (see ``Shaper``). Without ``buffer_bytes`` the end
    keeps the buffer it has (a new rate, or a cable moved to this port, does not change the
    switch), else the default."""
    if buffer_bytes is None:
        buffer_bytes = _read_tbf(netns, ifname)[1] or PORT_BUFFER_BYTES
    run(["ip", "netns", "exec", netns, "tc", "qdisc", "replace", "dev", ifname, "root",
         *Shaper.for_rate(rate_mbit, buffer_bytes).tc_args()])


def _read_tbf(netns: str, ifname: str) -> tuple[float | None, int | None]:
    """The rate (Mbit/s) and queue (bytes) of an end's tbf, as tc reports them: the queue as a
    latency at the rate (``lat``, microseconds)."""
    proc = run(["ip", "netns", "exec", netns, "tc", "-j", "qdisc", "show", "dev", ifname], check=False, quiet=True)
    try:
        for qdisc in json.loads(proc.stdout or "[]"):
            if qdisc.get("kind") == "tbf":
                rate_bytes = qdisc["options"]["rate"]
                lat_us = qdisc["options"].get("lat")
                return rate_bytes * 8 / 1e6, (round(rate_bytes * lat_us / 1e6) if lat_us else None)
    except (ValueError, KeyError, TypeError):
        return None, None
    return None, None


def read_rate_mbit(netns: str, ifname: str) -> float | None:
    return _read_tbf(netns, ifname)[0]


def read_buffer_bytes(netns: str, ifname: str) -> int | None:
    """An end's queue in bytes (a switch port's: its model's packet buffer, see ``Shaper``)."""
    return _read_tbf(netns, ifname)[1]


def set_admin(netns: str, ifname: str, up: bool) -> None:
    ip(netns, "link", "set", ifname, "up" if up else "down")


def set_mtu(netns: str, ifname: str, mtu: int) -> None:
    ip(netns, "link", "set", ifname, "mtu", str(mtu))


@dataclass(frozen=True)
class PortSettings:
    """What belongs to a switch port rather than to the cable plugged into it."""

    mtu: int
    admin_up: bool
    rate_mbit: float | None


def port_settings(netns: str, ifname: str) -> PortSettings:
    info = link_info(netns, ifname)
    if not info:
        raise CannotRunError(f"switch port {ifname} is missing from namespace {netns}")
    return PortSettings(int(info.get("mtu", FRESH_SWITCH_MTU)), "UP" in info.get("flags", []),
                        read_rate_mbit(netns, ifname))


def _apply_port(netns: str, ifname: str, settings: PortSettings) -> None:
    ip(netns, "link", "set", ifname, "master", names.BRIDGE_IFNAME, "mtu", str(settings.mtu))
    if settings.rate_mbit:
        set_rate(netns, ifname, settings.rate_mbit)
    set_admin(netns, ifname, settings.admin_up)


def swap_switch_ends(a: CableEnds, b: CableEnds) -> None:
    """Replug two cables into each other's switch ports: afterwards ``a``'s host NIC is cabled to
    ``b``'s switch port and the other way round.

    The switch-end devices are renamed (and moved between switch namespaces when the ports are on
    two switches), so the host NICs keep their addresses and settings, as a host's NIC does when
    its cable is moved at the switch. Each port keeps its MTU, admin state and rate; each host
    NIC's egress takes the rate of the port it now reaches. Carrier drops for a moment, as it does
    when a cable is unplugged.
    """
    port_a = port_settings(a.switch_netns, a.switch_ifname)
    port_b = port_settings(b.switch_netns, b.switch_ifname)
    set_admin(a.switch_netns, a.switch_ifname, False)
    set_admin(b.switch_netns, b.switch_ifname, False)
    # Temporary names outside lldpd's swp* pattern; a crash midway leaves them in the switch
    # namespace, which `lab down` deletes with everything in it.
    ip(a.switch_netns, "link", "set", a.switch_ifname, "name", "rfswapa")
    ip(b.switch_netns, "link", "set", b.switch_ifname, "name", "rfswapb")
    if a.switch_netns != b.switch_netns:
        ip(a.switch_netns, "link", "set", "rfswapa", "netns", b.switch_netns)
        ip(b.switch_netns, "link", "set", "rfswapb", "netns", a.switch_netns)
    ip(b.switch_netns, "link", "set", "rfswapa", "name", b.switch_ifname)
    ip(a.switch_netns, "link", "set", "rfswapb", "name", a.switch_ifname)
    _apply_port(a.switch_netns, a.switch_ifname, port_a)
    _apply_port(b.switch_netns, b.switch_ifname, port_b)
    if port_b.rate_mbit:
        set_rate(a.host_netns, a.nic, port_b.rate_mbit)
    if port_a.rate_mbit:
        set_rate(b.host_netns, b.nic, port_a.rate_mbit)
