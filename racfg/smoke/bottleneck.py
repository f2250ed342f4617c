"""Name what limited a scaling step: storage links, one slow client, a client's CPU.

Checked in that order, from the most to the least common cause in the RA's shape (many clients
reading from fewer storage links). Each verdict carries the utilisation that shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from racfg.smoke.plan import SmokePlan
from racfg.smoke.tcp import LoadResult
from racfg.smoke.units import pct, rate_text

SATURATED = 0.90  # a resource at this share of its capacity is the limit
CPU_SATURATED = 0.90
PROCESS_CPU_SATURATED = 90.0  # an iperf3 process at 90% of one core cannot go faster


@dataclass
class Bottleneck:
    kind: str  # storage-links | slow-client | client-cpu | unknown
    text: str
    utilisation: float | None = None
    items: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "utilisation": self.utilisation, "items": self.items}


def storage_utilisation(plan: SmokePlan, load: LoadResult) -> tuple[float, dict[str, float]]:
    """What the storage links carried in this load as a share of their line rate (all, and each)."""
    carried = load.per_server_link()
    rates = {s.key: s.rate_mbit * 1e6 for s in plan.storage}
    per_link = {key: carried.get(key, 0.0) / rate for key, rate in rates.items() if rate > 0}
    total = sum(carried.values()) / sum(rates.values()) if rates else 0.0
    return total, per_link


def name_bottleneck(plan: SmokePlan, load: LoadResult, cpu_busy: dict[str, float]) -> Bottleneck:
    total, per_link = storage_utilisation(plan, load)
    if total >= SATURATED:
        capacity = sum(s.rate_mbit for s in plan.storage) * 1e6
        return Bottleneck("storage-links", f"storage links saturated: {len(per_link)} links carry "
                          f"{rate_text(load.total)} of {rate_text(capacity)} ({pct(total)})", total,
                          {k: round(v, 4) for k, v in per_link.items()})
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
