"""The performance layer of ``racfg drift``: every item of the site's performance baseline measured now.

The figures a clean, full smoke kept (racfg.baseline.performance) are measured again with smoke's
own phases and tools (racfg.smoke.smoke_run: the same plan, iperf3, fio, perftest, nccl-tests),
only the phases the baseline has items of, briefly with ``--quick`` (racfg.smoke.smoke_plan.brief_plan).
An item worse than its baseline figure by more than its noise (racfg.drift.figure_drops) is a
suspect, and the suspects' phases run a second time on the suspects' hosts alone: a drop is called
only when it repeats. Each drop is tied to what the other layers of the same run found on its host,
NIC, switch port or path (racfg.drift.drop_causes), with that layer's fix.

Opt-in because it loads the fabric: it runs after the three read-only layers, under smoke's own
hold of the site lock (a deploy cannot change the site under a measurement).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racfg.baseline.performance import baseline_items, conditions, load_performance_baseline
from racfg.connection import ConnectionOverrides
from racfg.drift.drop_causes import cause_text, causes_data, likely_causes, place_of
from racfg.drift.figure_drops import (
    PHASE_OF_KIND,
    ItemDrift,
    compare_items,
    condition_differences,
    kind_of,
)
from racfg.errors import UsageError
from racfg.inventory import Cluster
from racfg.results import Report, Result, Status

Say = Callable[[str], None]
CATEGORY = "performance"
COUNTERS = "switch counters"  # the category of smoke's port-counter verdicts (racfg.smoke.counter_verdicts)


@dataclass
class PerformanceOutcome:
    """The layer's results, what the report's meta keeps of it, and its notes."""

    results: list[Result]
    meta: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def performance_layer(cluster: Cluster, overrides: ConnectionOverrides, out_dir: Path, *, quick: bool,
                      others: list[Result], layers_ran: bool, say: Say) -> PerformanceOutcome:
    """Measure the baseline's items now, measure the suspects again, and judge each item."""
    baseline = load_performance_baseline(cluster.name)
    if baseline is None:
        why = ("no performance baseline yet: a clean, full smoke offers to record one, or "
               f"`racfg smoke {cluster.display} --accept`")
        return PerformanceOutcome([Result("cluster", "cluster/performance/baseline", CATEGORY, Status.SKIP, why)],
                                  notes=[f"performance not compared: {why}"])
    items: dict[str, dict[str, Any]] = baseline["items"]
    floors = cluster.inventory.acceptance.noise.by_kind()
    phases = _phases(items)
    say(f"performance: measuring {len(items)} items ({', '.join(sorted(phases))})")
    try:
        first = _measure(cluster, overrides, phases, None, quick, out_dir / "pass1")
    except UsageError as exc:
        return PerformanceOutcome([Result("cluster", "cluster/performance/measure", CATEGORY, Status.ERROR,
                                          f"could not measure: {exc.message}")])
    now = _readings(first)
    drifts = compare_items(items, now, floors)
    suspects = [d for d in drifts if d.beyond_noise]
    passes = [first]
    if suspects:
        say(f"performance: {len(suspects)} items below their baseline, measured again")
        hosts = _hosts_of(suspects, items, cluster)
        second = _measure(cluster, overrides, _phases({d.key: items[d.key] for d in suspects}), hosts, quick,
                          out_dir / "pass2")
        passes.append(second)
        again = _readings(second)
        now = {key: (*values, *again.get(key, ())) for key, values in now.items()}
        drifts = compare_items(items, now, floors)
    differ = condition_differences(baseline["conditions"], conditions(first))
    # what the load itself showed on a port (errors, discards): a cause; a straggler or outlier is the drop itself
    smoke_findings = [r for p in passes for r in p.results if r.status is Status.FAIL and r.category == COUNTERS]
    results = [_verdict(cluster, d, items[d.key], first, quick, [*others, *smoke_findings], layers_ran, differ)
               for d in drifts]
    meta = {"baseline": baseline["meta"]["id"], "baseline_run": baseline.get("run"),
            "baseline_measured": baseline.get("measured"), "quick": quick,
            "passes": [str(out_dir / name) for name in ("pass1", "pass2")[:len(passes)]],
            "items": len(drifts), "drops": sum(d.beyond_noise for d in drifts), "conditions_differ": differ}
    notes = [f"performance: measured under other conditions than the baseline's: {d}" for d in differ]
    return PerformanceOutcome(results, meta, notes)


def _phases(items: dict[str, dict[str, Any]]) -> set[str]:
    return {PHASE_OF_KIND[kind_of(key)] for key in items if kind_of(key) in PHASE_OF_KIND}


def _hosts_of(suspects: list[ItemDrift], items: dict[str, dict[str, Any]], cluster: Cluster) -> list[str] | None:
    """The dgx hosts a second pass needs: those of the suspect links and ports; None (all) when a suspect
    is a figure of several clients (a scaling step, a storage or NCCL figure)."""
    dgx = {h.name for h in cluster.role("dgx")}
    hosts = []
    for d in suspects:
        host = str(items[d.key].get("target") or "").partition(":")[0]
        if kind_of(d.key) not in ("link", "rdma") or host not in dgx:
            return None
        hosts.append(host)
    return sorted(set(hosts))


def _measure(cluster: Cluster, overrides: ConnectionOverrides, phases: set[str], hosts: list[str] | None,
             quick: bool, out_dir: Path) -> Report:
    """One smoke run of ``phases`` (its report is kept in ``out_dir`` beside its plots)."""
    from racfg.smoke.phase_table import PHASES
    from racfg.smoke.smoke_run import SmokeOptions, run_smoke

    out_dir.mkdir(parents=True, exist_ok=True)
    skip = frozenset(PHASES) - phases
    if quick:
        skip |= {"benchmark"}  # the user's benchmark runs as long as it runs: not a quick measurement
    report = run_smoke(cluster, overrides, SmokeOptions(hosts=hosts, skip=skip, brief=quick), out_dir)
    (out_dir / "results.json").write_text(json.dumps(report.as_dict(), indent=1, default=str) + "\n")
    return report


def _readings(report: Report) -> dict[str, tuple[float, ...]]:
    return {key: tuple(item["readings"]) for key, item in baseline_items(report).items()}


def _verdict(cluster: Cluster, d: ItemDrift, item: dict[str, Any], first: Report, quick: bool,
             others: list[Result], layers_ran: bool, differ: list[str]) -> Result:
    place = place_of(item, cluster)
    target = next(iter(place.hosts)) if len(place.hosts) == 1 else "cluster"
    check = f"{target}/performance/{d.key}"
    data = {**d.as_dict(), "sign": "~", "baseline_check": item.get("check")}
    if d.now is None:
        phase = PHASE_OF_KIND.get(kind_of(d.key), kind_of(d.key))
        skipped = (quick and phase == "benchmark") or (quick and kind_of(d.key) == "scaling"
                                                        and d.key.rsplit(".n", 1)[-1] not in _steps(first))
        if skipped:
            return Result(target, check, CATEGORY, Status.SKIP, f"{d.key}: not measured by --quick "
                          "(its full form measures every baseline item)", data=data)
        why = next((r.message for r in first.results if r.status is Status.ERROR), "smoke measured no such figure")
        return Result(target, check, CATEGORY, Status.ERROR, f"{d.key}: not measured now: {why}", data=data)
    expected = f"{'>=' if d.better == 'higher' else '<='} {_bound(d):.4g} {d.unit}".rstrip()
    actual = f"{d.now:.4g} {d.unit}".rstrip()
    if not d.beyond_noise:
        return Result(target, check, CATEGORY, Status.PASS, d.sentence(), expected, actual, data=data)
    causes = likely_causes(place, others)
    text, fix = cause_text(place, causes, layers_ran)
    data["causes"] = causes_data(causes)
    message = f"{d.sentence()}; measured {len(d.readings_now)} times now; {text}"
    if differ:
        message += f" (measured under other conditions than the baseline's: {'; '.join(differ)})"
    return Result(target, check, CATEGORY, Status.FAIL, message, expected, actual,
                  fix=fix or f"compare {place.text()} with a peer that kept its figure (cable, port counters, NIC, "
                  f"tuning), then `racfg smoke {cluster.display}` to confirm the repair", data=data)


def _bound(d: ItemDrift) -> float:
    return d.then * (1 - d.noise) if d.better == "higher" else d.then * (1 + d.noise)


def _steps(report: Report) -> set[str]:
    return {str(n) for n in report.meta.get("steps") or []}
