"""The scaling phase: 1, 2 ... N clients reading at once, E(n) = T(n) / (n T(1)), a step below the floor
measured again.

Only the step that missed acceptance.scaling_efficiency is loaded again (racfg.smoke.remeasure),
against the T(1) already measured; each step is judged on its best reading and lists them all.
T(1) is the single client link's read when the links phase measured it (its deciding reading).
"""

from __future__ import annotations

from functools import partial

from racfg.results import Result
from racfg.smoke.judge.links import LinkMeasurement
from racfg.smoke.judge.readings import Reading, deciding_reading, with_readings
from racfg.smoke.judge.scaling import ScalingVerdict, StepMeasurement, judge_scaling, step_capacity
from racfg.smoke.links import Measure
from racfg.smoke.plan import SmokePlan
from racfg.smoke.remeasure import Announce, until_met
from racfg.smoke.units import rate_text


def predicted(plan: SmokePlan, hosts: list[str]) -> float:
    """The budget's view of a step: client links, storage links (both at its NIC efficiency), storage nodes,
    and on a leaf-spine site the spine tier (racfg.policy.budget: what crosses the spines before the
    fullest leaf's uplinks are full, at the links' scale: the lab's shaping)."""
    eff = plan.budget.nic_efficiency
    clients = sum(link.rate_mbit for host in hosts for link in plan.links_of(host)) * 1e6 * eff
    storage_links = sum(s.rate_mbit for s in plan.storage) * 1e6 * eff
    storage_nodes = len(plan.storage_hosts) * plan.budget.storage_node_gbytes_per_s * 8e9
    return min(clients, storage_links, storage_nodes, spine_tier_bits(plan))


def spine_tier_bits(plan: SmokePlan) -> float:
    """The budget's spine tier in bits/s at the links' scale: what crosses the spines at most (inf: no bound)."""
    if plan.spine is None or plan.spine.limiting_leaf is None:
        return float("inf")
    return plan.spine.capacity_crossing * 8e9 * plan.scale


def measure_scaling(plan: SmokePlan, measure: Measure, links: list[LinkMeasurement], limit: int, tick: Announce,
                    announce: Announce) -> tuple[ScalingVerdict, list[Result]]:
    """Every step in turn; returns the verdict on each step's deciding reading, every reading in its result."""
    series: dict[int, list[StepMeasurement]] = {}
    base = 0.0
    for n in plan.steps:
        tick(f"scaling: {n} client(s)")
        first = _reused(plan, n, links) or _take(plan, measure, n)
        if n == 1:
            base = first.total
        series[n] = until_met([first], partial(_take, plan, measure, n), partial(step_margin, plan, base=base), limit,
                              announce, f"scaling: {n} client(s)")
    steps = [readings[deciding_reading([step_margin(plan, s, base) for s in readings])] for readings in series.values()]
    verdict, results = judge_scaling(plan, steps)
    out = []
    for result in results:
        n = result.data.get("clients")
        if n in series:
            result = with_readings(result, [Reading(s.total / 1e6, "Mbit/s", step_margin(plan, s, base),
                                                    f"{rate_text(s.total)} (E = {s.total / (n * base):.3f})"
                                                    if base > 0 else rate_text(s.total)) for s in series[n]], limit)
        out.append(result)
    return verdict, out


def step_margin(plan: SmokePlan, step: StepMeasurement, base: float) -> float:
    """E(n) less the floor (and, across the spines, the share of what its links carry less the saturation
    floor, the nearer miss); 0 (nothing to judge, nothing to measure again) without a T(1); -1, below any
    reading's, for a sum whose processes did not run together (measured again, never deciding over one)."""
    if not step.together:
        return -1.0
    margin = step.total / (step.n * base) - plan.scaling_floor if base > 0 else 0.0
    if plan.routed and 0 < step.capacity_bits < float("inf"):
        margin = min(margin, step.total / step.capacity_bits - plan.saturation_floor)
    return margin


def _take(plan: SmokePlan, measure: Measure, n: int) -> StepMeasurement:
    hosts = plan.client_hosts[:n]
    load, probe = measure([link for host in hosts for link in plan.links_of(host)], "read", f"scaling/{n}")
    return StepMeasurement(n, hosts, load, predicted(plan, hosts), probe, capacity_bits=step_capacity(plan, hosts))


def _reused(plan: SmokePlan, n: int, links: list[LinkMeasurement]) -> StepMeasurement | None:
    """Step 1 with one client link is that link's read, already measured alone: not loaded twice."""
    hosts = plan.client_hosts[:n]
    clients = [link for host in hosts for link in plan.links_of(host)]
    m = next((m for m in links if n == 1 and len(clients) == 1 and m.link == clients[0] and m.direction == "read"
              and not m.batched), None)
    if m is None:
        return None
    return StepMeasurement(n, hosts, m.load, predicted(plan, hosts), m.probe, capacity_bits=step_capacity(plan, hosts))
