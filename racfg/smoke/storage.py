"""The storage phase's figures: fio on one host, then on every host at once, each against its reference.

A figure that misses its reference (sequential GB/s, and random-read IOPS where referenced) is
measured again, that fio run alone (racfg.smoke.remeasure), and judged on its best reading; a
figure with no reference is reported as measured once, never judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from racfg.inventory.model import Reference
from racfg.results import Result, Status
from racfg.smoke import fio
from racfg.smoke.judge import Reading, deciding_reading, reference_result, with_readings
from racfg.smoke.metrics import metric, reference_margin
from racfg.smoke.plan import SmokePlan
from racfg.smoke.remeasure import Announce, until_met
from racfg.smoke.remote import Fleet
from racfg.smoke.units import bytes_rate_text


@dataclass(frozen=True)
class FioSide:
    """Where fio reads: ``client`` (the shared filesystem) or ``drive`` (the storage hosts' drives)."""

    side: str
    key: str  # the acceptance.references entry of its sequential figure
    what: str  # how the report says it
    client_gbytes_per_s: float  # acceptance.client_storage_gbytes_per_s: one client's reference by default


@dataclass(frozen=True)
class _Refs:
    seq: Reference | None
    iops: Reference | None


def measure_storage(plan: SmokePlan, fleet: Fleet, targets: list[fio.FioTarget], side: FioSide, limit: int,
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
        listed = [Reading(_seq(r) / 1e9, "GB/s", _margin(refs, r), f"{bytes_rate_text(_seq(r))}, "
                          f"{sum(x.rand_iops for x in r):,.0f} IOPS") for r in readings]
        results += [with_readings(r, listed, limit) for r in _judge(side, label, best, refs)]
    return results


def _refs(plan: SmokePlan, side: FioSide, n: int) -> _Refs:
    seq = plan.references.get(side.key, {}).get(n)
    if seq is None and side.side == "client" and n == 1:
        seq = Reference(value=side.client_gbytes_per_s, unit="GB/s")
    iops = plan.references.get("fio_randread_iops", {}).get(n) if side.side == "client" else None
    return _Refs(seq, iops)


def _seq(runs: list[fio.FioRun]) -> float:
    return sum(r.seq_bytes_per_s for r in runs)


def _margin(refs: _Refs, runs: list[fio.FioRun]) -> float:
    """The nearer miss of the referenced figures (< 0 misses); a failed fio run misses; unreferenced: 0."""
    if any(r.result is None for r in runs):
        return -1.0
    iops = sum(r.rand_iops for r in runs)
    margins = [reference_margin(value, ref) for value, ref in ((_seq(runs) / 1e9, refs.seq), (iops, refs.iops))
               if ref is not None]
    return min(margins, default=0.0)


def _judge(side: FioSide, label: str, runs: list[fio.FioRun], refs: _Refs) -> list[Result]:
    n = len(runs)
    failed = [r for r in runs if r.result is None]
    if failed:
        return [Result(failed[0].target.host, f"storage/{label}", "storage", Status.ERROR,
                       f"fio failed on {failed[0].target.host}: {failed[0].error}")]
    seq = _seq(runs)
    iops = sum(r.rand_iops for r in runs)
    message = (f"{side.what}, {n} host(s) at once: sequential 1 MiB reads {bytes_rate_text(seq)}, "
               f"4 KiB random reads {iops:,.0f} IOPS")
    data = {"side": side.side, "hosts": [r.target.host for r in runs], "seq_bytes_per_s": round(seq),
            "rand_iops": round(iops), "per_host": {r.target.host: {"seq_bytes_per_s": round(r.seq_bytes_per_s),
                                                                   "rand_iops": round(r.rand_iops)} for r in runs},
            "metrics": [metric(f"storage.{side.side}.seq.n{n}", seq / 1e9, "GB/s"),
                        metric(f"storage.{side.side}.randiops.n{n}", iops, "IOPS")]}
    target = f"{side.side}s" if n > 1 else runs[0].target.host
    reason = (f"no acceptance.references.{side.key} for {n} node(s)" if side.side == "client" else
              f"a drive-side figure (no shared filesystem mounted); give acceptance.references.{side.key} to judge it")
    out = [reference_result(target, f"storage/{side.side}/n{n}", "storage", seq / 1e9, "GB/s", refs.seq, message,
                            data, reason)]
    if refs.iops is not None:
        out.append(reference_result(target, f"storage/{side.side}/iops/n{n}", "storage", iops, "IOPS", refs.iops,
                                    message, {"rand_iops": round(iops)}, ""))
    return out
