"""The storage phase's figures: fio on one host, then on every host at once, each against its reference.

A figure that misses its reference (sequential GB/s, and random-read IOPS where referenced) is
measured again, that fio run alone (racfg.smoke.remeasure), and judged on its best reading; a
figure with no reference is reported as measured once, never judged.
"""

from __future__ import annotations

from functools import partial

from racfg.inventory.model import Reference
from racfg.results import Result
from racfg.smoke import fio
from racfg.smoke.judge.readings import Reading, deciding_reading, with_readings
from racfg.smoke.judge.storage import FioRefs, FioSide, fio_results, seq_bytes
from racfg.smoke.measured import FioRun, FioTarget
from racfg.smoke.metrics import reference_margin
from racfg.smoke.plan import SmokePlan
from racfg.smoke.remeasure import Announce, until_met
from racfg.smoke.remote import Fleet
from racfg.smoke.units import bytes_rate_text


def measure_storage(plan: SmokePlan, fleet: Fleet, targets: list[FioTarget], side: FioSide, limit: int,
                    tick: Announce, announce: Announce) -> list[Result]:
    """fio on the first target, then on all at once (the first run again when there is one target)."""
    results: list[Result] = []
    for label, group in (("one", targets[:1]), ("all", targets)):
        tick(f"storage: fio on {group[0].host}" if label == "one" else
             f"storage: fio on {len(group)} {side.side} hosts at once")
        if label == "all" and len(targets) == 1:
            break
        refs = _refs(plan, side, len(group))
        take = partial(fio.run_fio, fleet, group, plan.fio_runtime_s)
        readings = until_met([take()], take, partial(_margin, refs), limit, announce,
                             f"storage: fio on {len(group)} host(s)")
        best = readings[deciding_reading([_margin(refs, r) for r in readings])]
        listed = [Reading(seq_bytes(r) / 1e9, "GB/s", _margin(refs, r), f"{bytes_rate_text(seq_bytes(r))}, "
                          f"{sum(x.rand_iops for x in r):,.0f} IOPS") for r in readings]
        results += [with_readings(r, listed, limit) for r in fio_results(side, label, best, refs)]
    return results


def _refs(plan: SmokePlan, side: FioSide, n: int) -> FioRefs:
    seq = plan.references.get(side.key, {}).get(n)
    if seq is None and side.side == "client" and n == 1:
        seq = Reference(value=side.client_gbytes_per_s, unit="GB/s")
    iops = plan.references.get("fio_randread_iops", {}).get(n) if side.side == "client" else None
    return FioRefs(seq, iops)


def _margin(refs: FioRefs, runs: list[FioRun]) -> float:
    """The nearer miss of the referenced figures (< 0 misses); a failed fio run misses; unreferenced: 0."""
    if any(r.result is None for r in runs):
        return -1.0
    iops = sum(r.rand_iops for r in runs)
    margins = [reference_margin(value, ref) for value, ref in ((seq_bytes(runs) / 1e9, refs.seq), (iops, refs.iops))
               if ref is not None]
    return min(margins, default=0.0)
