"""Verdicts across the spines of a routed leaf-spine site: what the largest scaling step carried across
them beside the bandwidth budget's prediction for the spine tier, each spine's share of the cross-leaf
bytes and their spread over each leaf's uplinks (ECMP balance, judged by validate's own checks on the
leaves' ISL counters)."""

from __future__ import annotations

from collections.abc import Sequence

from racfg.results import Result, Status, expected_actual
from racfg.smoke.bottleneck import UPLINKS_FIX, leaf_uplinks
from racfg.smoke.judge.scaling import StepMeasurement
from racfg.smoke.metrics import metric
from racfg.smoke.plan import SmokePlan
from racfg.smoke.probes import Snapshot, StepProbe
from racfg.smoke.units import pct, rate_text
from racfg.switches.parsers.port_counters import PortCounters
from racfg.validate.fabric_ecmp import check_ecmp_balance, check_uplink_spread


def spine_tier_result(plan: SmokePlan, steps: Sequence[StepMeasurement], budget_bits: float) -> Result | None:
    """The largest step's aggregate (every flow crosses the spines) against the prediction for it (the
    budget's: client and storage links and the spine tier, ``budget_bits`` the spine tier alone). Below
    the saturation floor of it, the leaf whose uplinks the load filled is named from its ISL counters."""
    steps = [s for s in steps if s.together]  # a sum whose processes did not run together is no aggregate
    if not plan.routed or not steps:
        return None
    step = max(steps, key=lambda s: s.n)
    share = step.total / step.predicted_bits if step.predicted_bits else 0.0
    ok = share >= plan.saturation_floor
    tier = plan.spine
    said = (f"the budget's spine tier carries {rate_text(budget_bits)} across the spines before the uplinks of "
            f"{tier.limiting_leaf} are full" if tier is not None and tier.limiting_leaf else
            "the budget bounds nothing at the spines")
    expected = f">= {pct(plan.saturation_floor)} of {rate_text(step.predicted_bits)} predicted"
    actual = f"{rate_text(step.total)} ({pct(share)})"
    message = (f"{step.n} client(s) reading across the spines: {rate_text(step.total)}, {pct(share)} of the "
               f"{rate_text(step.predicted_bits)} the budget predicts for this step ({said})")
    bottleneck = step.bottleneck
    if not ok and bottleneck is None:
        bottleneck = leaf_uplinks(plan, step.load, step.probe.port_growth() if step.probe else None)
    if not ok:
        message = (f"{expected_actual(expected, actual)}; {message}; bottleneck: "
                   + (bottleneck.text if bottleneck else "not at the leaves' uplinks (see the scaling steps)"))
    return Result("fabric", "spine/tier", "spine tier", Status.PASS if ok else Status.FAIL, message, expected, actual,
                  fix=None if ok else UPLINKS_FIX, seconds=step.load.seconds,
                  data={"clients": step.n, "measured_bps": round(step.total),
                        "predicted_bps": round(step.predicted_bits),
                        "spine_tier_bps": round(budget_bits) if budget_bits != float("inf") else None,
                        "budget": tier.as_dict() if tier else None, "share": round(share, 5),
                        "bottleneck": bottleneck.as_dict() if bottleneck else None,
                        "metrics": [metric("spine.crossing", step.total / 1e6, "Mbit/s")]})


def _by_switch(snapshot: Snapshot) -> dict[str, dict[str, PortCounters]]:
    out: dict[str, dict[str, PortCounters]] = {}
    for (switch, port), counters in snapshot.items():
        out.setdefault(switch, {})[port] = counters
    return out


def ecmp_results(plan: SmokePlan, probes: Sequence[StepProbe]) -> list[Result]:
    """Each spine's share of the cross-leaf bytes over the whole run (from the first load's counters to the
    last's; every load of a routed plan crosses the spines), by validate's check_ecmp_balance, and the
    spread over each leaf's uplinks (check_uplink_spread), where a spine's share hides idle links."""
    read = [p for p in probes if p.counters_before and p.counters_after]
    if plan.fabric is None:
        return []
    if not read:
        return [Result("fabric", "spine/ecmp", "spine tier", Status.SKIP,
                       "ECMP balance not judged: the leaves' ISL counters were not read")]
    before, after = _by_switch(read[0].counters_before), _by_switch(read[-1].counters_after)
    return check_ecmp_balance(plan.fabric, before, after) + check_uplink_spread(plan.fabric, before, after,
                                                                                  down=plan.uplinks_down)
