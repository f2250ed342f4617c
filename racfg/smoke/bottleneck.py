"""Name what limited a scaling step: a leaf's uplinks, storage links, one slow client, a client's CPU.

Checked in that order, from the most to the least common cause in the RA's shape (many clients
reading from fewer storage links; on a leaf-spine site every load crosses the spines first). Each
verdict carries the utilisation that shows it.

A leaf's uplinks are judged from two readings: the iperf3 figures say what crossed each leaf in
each direction over the measured seconds (scaled to what the receiving NICs took in while every process
ran, where they were read), and the leaf's ISL counters (read through the switch
drivers before and after the load) say which of its uplinks carried it: one that moved next to
nothing (shut, down, or no flow hashed onto it) carries no share of the capacity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from racfg.smoke.link_ceiling import above, carried_bits
from racfg.smoke.measured import LoadResult, Snapshot
from racfg.smoke.smoke_plan import SmokePlan, Uplink
from racfg.smoke.units import pct, rate_text

SATURATED = 0.90  # a resource at this share of its capacity is the limit
CPU_SATURATED = 0.90
PROCESS_CPU_SATURATED = 90.0  # an iperf3 process at 90% of one core cannot go faster
CARRYING = 0.10  # an uplink that moved less than this share of the busiest uplink's bytes carried nothing
UPLINKS_FIX = ("bring the leaf's uplinks back (racfg validate names a down ISL or BGP session), or add uplinks "
               "to it")


@dataclass
class Bottleneck:
    kind: str  # leaf-uplinks | storage-links | overshoot | slow-client | client-cpu | unknown
    text: str
    utilisation: float | None = None
    items: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "utilisation": self.utilisation, "items": self.items}


def window_share(load: LoadResult) -> float:
    """What the receiving NICs took in while every process ran (racfg.smoke.window) over the processes' own
    sum: the factor that brings each process's figure to the load's common seconds (1 without a window).
    Their own figures are over no common seconds: the 16-client step of the 40-host demo summed 1.4 to 2.6
    times what the NICs took in, and read as such, a healthy leaf's uplinks looked full at 137%."""
    sent = load.total
    if load.received and sent > 0:
        return sum(load.received.values()) / sent
    return 1.0


def storage_carried(load: LoadResult) -> dict[str, float]:
    """Bits/s each storage link carried in this load. On a read whose receiving NICs were read, what the
    clients took in is what the storage links sent: the processes' split of it, scaled to that total
    (``window_share``); else their own figures."""
    carried = load.per_server_link()
    if load.direction != "read":
        return carried
    share = window_share(load)
    return {key: bits * share for key, bits in carried.items()}


def storage_utilisation(plan: SmokePlan, load: LoadResult) -> tuple[float, dict[str, float]]:
    """What the storage links carried in this load as a share of their line rate (all, and each)."""
    carried = storage_carried(load)
    rates = {s.key: s.rate_mbit * 1e6 for s in plan.storage}
    per_link = {key: carried.get(key, 0.0) / rate for key, rate in rates.items() if rate > 0}
    total = sum(carried.values()) / sum(rates.values()) if rates else 0.0
    return total, per_link


def crossing(load: LoadResult) -> dict[tuple[str, str], float]:
    """Bits/s each leaf's uplinks carried in this load, (leaf, "in" | "out"): a flow's data leaves its
    sender's leaf and enters its receiver's (read: storage sends; write: the client does). The flows'
    split, scaled to what the receiving NICs took in where they were read (``window_share``)."""
    share = window_share(load)
    out: dict[tuple[str, str], float] = {}
    for fr in load.flows:
        sender, receiver = ((fr.flow.server, fr.flow.client) if load.direction == "read"
                            else (fr.flow.client, fr.flow.server))
        if sender.switch == receiver.switch:
            continue
        out[(sender.switch, "out")] = out.get((sender.switch, "out"), 0.0) + fr.bits_per_second * share
        out[(receiver.switch, "in")] = out.get((receiver.switch, "in"), 0.0) + fr.bits_per_second * share
    return out


def carrying(uplinks: list[Uplink], growth: Snapshot | None) -> tuple[list[Uplink], dict[str, int]]:
    """The uplinks that carried the load (all, when the counters were not read) and the bytes each moved."""
    moved = {f"{u.leaf}:{u.port}": growth[(u.leaf, u.port)].rx_bytes + growth[(u.leaf, u.port)].tx_bytes
             for u in uplinks if growth and (u.leaf, u.port) in growth}
    if len(moved) < len(uplinks):
        return list(uplinks), moved
    busiest = max(moved.values(), default=0)
    return [u for u in uplinks if busiest and moved[f"{u.leaf}:{u.port}"] >= CARRYING * busiest], moved


def leaf_uplinks(plan: SmokePlan, load: LoadResult, growth: Snapshot | None) -> Bottleneck | None:
    """The leaf whose uplinks the load filled (at SATURATED of the uplinks that carried it), if one did."""
    if not plan.uplinks:
        return None
    used, moved = carrying(plan.uplinks, growth)
    ceiling = min((link.tcp_ceiling for link in plan.clients), default=1.0)
    used = [u for u in used if (u.leaf, u.port) not in plan.uplinks_down]
    full: list[tuple[bool, float, str, str]] = []  # (a down uplink, share, leaf, direction)
    for (leaf, way), bits in crossing(load).items():
        capacity = sum(u.rate_mbit for u in used if u.leaf == leaf) * 1e6 * ceiling
        share = bits / capacity if capacity else float("inf")
        if share >= SATURATED:  # a leaf with an uplink down first: its peers' uplinks to that spine idle with it
            full.append((any(d[0] == leaf for d in plan.uplinks_down), share, leaf, way))
    if not full:
        return None
    _, share, leaf, way = max(full)
    mine = [u for u in plan.uplinks if u.leaf == leaf]
    idle = [u for u in mine if u not in used]
    lost = f" ({', '.join(f'{u.port} to {u.spine}' for u in idle)} " + (
        "down)" if any((u.leaf, u.port) in plan.uplinks_down for u in idle) else "moved nothing)") if idle else ""
    rate = sum(u.rate_mbit for u in mine if u in used) * 1e6
    return Bottleneck("leaf-uplinks", f"uplinks of {leaf}: {len(mine) - len(idle)} of {len(mine)} carry the "
                      f"cross-leaf traffic{lost}, full at {pct(min(share, 1.0))} of their {rate_text(rate)} "
                      f"({way}bound)", share,
                      {"leaf": leaf, "direction": way, "carrying": [u.port for u in mine if u in used],
                       "idle": [u.port for u in idle], "bytes": moved})


def storage_overshoot(plan: SmokePlan, load: LoadResult) -> Bottleneck | None:
    """The storage links' figures (``storage_carried``) when together they add up to more than the links
    carry (racfg.smoke.link_ceiling): no bottleneck but a measurement that overshot, said as such (None:
    they do not). One link's own sum a little over is left to the clipped share."""
    carried = storage_carried(load)
    links = [s for s in plan.storage if s.key in carried]
    capacity = sum(carried_bits(s) for s in links)
    if not above(sum(carried.values()), capacity):
        return None
    return Bottleneck("overshoot", f"no bottleneck named: the storage links' figures add up to "
                      f"{rate_text(sum(carried.values()))} on {len(links)} storage links that carry "
                      f"{rate_text(capacity)}, more than they can (a measurement that overshot: the processes did "
                      "not run over the same seconds)", None,
                      {"sum_bps": round(sum(carried.values())), "capacity_bps": round(capacity)})


def name_bottleneck(plan: SmokePlan, load: LoadResult, cpu_busy: dict[str, float],
                    growth: Snapshot | None = None) -> Bottleneck:
    """What limited a load; ``growth`` is the switch ports' counter growth over it (the leaves' ISLs)."""
    uplinks = leaf_uplinks(plan, load, growth)
    if uplinks is not None:
        return uplinks
    total, per_link = storage_utilisation(plan, load)
    over = storage_overshoot(plan, load)
    if over is not None:
        return over
    if total >= SATURATED:  # within the tolerance above the TCP ceiling a link is full, never more than full
        capacity = sum(s.rate_mbit for s in plan.storage) * 1e6
        return Bottleneck("storage-links", f"storage links saturated: {len(per_link)} links carry "
                          f"{rate_text(min(total, 1.0) * capacity)} of {rate_text(capacity)} ({pct(min(total, 1.0))})",
                          min(total, 1.0), {k: round(min(v, 1.0), 4) for k, v in per_link.items()})
    clients = load.per_client_host()
    if len(clients) > 1:
        best = max(clients.values())
        slow = {h: v for h, v in clients.items() if best > 0 and v < plan.outlier_fraction * best}
        if slow:
            host = min(slow, key=lambda h: slow[h])
            return Bottleneck("slow-client", f"slow client {host}: {rate_text(slow[host])}, "
                              f"{pct(slow[host] / best)} of the best client ({rate_text(best)})",
                              slow[host] / best, {h: round(v) for h, v in clients.items()})
    process_cpu = load.process_cpu()
    busy = {h: v for h, v in cpu_busy.items() if h in clients and v >= CPU_SATURATED}
    hot = {h: v for h, v in process_cpu.items() if v >= PROCESS_CPU_SATURATED}
    if busy or hot:
        host = max(busy or hot, key=lambda h: (busy or hot)[h])
        detail = (f"CPU {pct(busy[host])} busy" if host in busy else
                  f"an iperf3 process at {hot[host]:.0f}% of a core")
        return Bottleneck("client-cpu", f"client CPU: {host} ({detail})",
                          busy.get(host, hot.get(host, 0.0) / 100), {"cpu_busy": busy, "iperf3_cpu": hot})
    return Bottleneck("unknown", f"not identified: storage links at {pct(total)}, no slow client, no busy CPU "
                      "(see the switch counters)", total, {"storage": {k: round(v, 4) for k, v in per_link.items()}})
