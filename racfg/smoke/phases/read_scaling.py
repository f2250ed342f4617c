"""The scaling phase (``scaling``): 1, 2 ... N clients reading at once, E(n) = T(n) / (n T(1)), a step
below the floor measured again.

Plan: one load per step of ``plan.steps``. Commands: iperf3 through racfg.smoke.tcp (``run.load``).
Only the step that missed acceptance.scaling_efficiency is loaded again (racfg.smoke.remeasure),
against the T(1) already measured; each step is judged on its best reading and lists them all.
T(1) is the single client link's read when the links phase measured it (its deciding reading).

Verdicts (``VERDICTS``, pure): each step's aggregate, E(n) against the floor, the knee and its
bottleneck, a step counted at no more than its links carry. On a routed leaf-spine site, what the
largest step carried across the spines beside the bandwidth budget's prediction for the spine tier,
each spine's share of the cross-leaf bytes and their spread over each leaf's uplinks (ECMP balance,
judged by validate's own checks on the leaves' ISL counters).

The node, not the step: the knee's clients below their share of it are each loaded again beside a
client that passed (racfg.smoke.pair_isolation), and the verdict names the client or says none is at fault.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from racfg.results import Result, Status, expected_actual
from racfg.smoke import plots
from racfg.smoke.bottleneck import UPLINKS_FIX, Bottleneck, leaf_uplinks, name_bottleneck
from racfg.smoke.link_ceiling import OVER_CEILING, above
from racfg.smoke.machine_limit import machine_limited, machine_limits
from racfg.smoke.measured import LinkMeasurement, LoadResult, StepProbe, by_switch
from racfg.smoke.metrics import metric
from racfg.smoke.pair_isolation import Isolating, PairOutcome, isolate_suspects, isolation_results
from racfg.smoke.remeasure import (
    OVERSHOT,
    Announce,
    Reading,
    deciding_reading,
    until_met,
    with_readings,
)
from racfg.smoke.run_state import Measure, SmokeRun
from racfg.smoke.smoke_plan import Link, SmokePlan
from racfg.smoke.units import pct, rate_text
from racfg.validate.fabric_ecmp import check_ecmp_balance, check_uplink_spread


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
                                                    if base > 0 else rate_text(s.total), not s.together)
                                            for s in series[n]], limit)
        out.append(result)
    return verdict, out


def step_margin(plan: SmokePlan, step: StepMeasurement, base: float) -> float:
    """E(n) less the floor (and, across the spines, the share of what its links carry less the saturation
    floor, the nearer miss); 0 (nothing to judge, nothing to measure again) without a T(1); -1, below any
    reading's, for a sum whose processes did not run together (measured again, never deciding over one)."""
    if not step.together:
        return OVERSHOT
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


# How far a step's figure may run above what its links carry and still be a reading: the links' own
# tolerance (racfg.smoke.link_ceiling). Process sums were seen up to 8% over on a 2-core machine starting
# 192 processes, once 48% (which made a short step look linear); the receiving NICs' window, not above 0.3%.
OVERSHOOT = OVER_CEILING


@dataclass
class StepMeasurement:
    n: int
    hosts: list[str]
    load: LoadResult
    predicted_bits: float
    probe: StepProbe | None = None
    bottleneck: Bottleneck | None = None
    capacity_bits: float = float("inf")  # what the step's links carry at most (step_capacity)

    @property
    def measured(self) -> float:
        """What the step's receiving links took in while every process ran (racfg.smoke.window), else the
        sum of every process's figure."""
        return sum(self.load.received.values()) if self.load.received else self.load.total

    @property
    def total(self) -> float:
        """The aggregate the step is judged on: as measured, but no more than its links carry."""
        return min(self.measured, self.capacity_bits)

    @property
    def together(self) -> bool:
        """Whether the reading is the step's aggregate. The receiving NICs' window is, up to the counters'
        timing. A sum of the processes' figures is while it runs a few percent above what the links carry
        (processes starting some tens of milliseconds apart); more (``OVERSHOOT``) is some of them running
        while others had not started or had ended, and such a sum says nothing about the step."""
        return self.measured <= self.capacity_bits * (1 + OVERSHOOT)


def step_capacity(plan: SmokePlan, hosts: list[str]) -> float:
    """The most a read step from these client hosts can carry: on each subnet (a rail) the smaller of
    its clients' and its storage links' line rates at their TCP ceilings. A sum of iperf3 figures
    above it is an overshoot (processes that did not run over quite the same seconds), not
    throughput: judged as measured, 9 clients reading from 8 storage links of the same speed looked
    linear (E = 0.914) where the storage links allow 8/9."""
    def carried(links: list[Link]) -> float:
        return sum(link.rate_mbit * 1e6 * link.tcp_ceiling for link in links)
    clients = [link for link in plan.clients if link.host in hosts]
    if plan.routed:  # routed: the clients read from the storage links on other leaves, across the spines
        targets = {s.key: s for c in clients for s in plan.targets_for(c)}
        return min(carried(clients), carried(list(targets.values())))
    subnets = dict.fromkeys(link.network for link in clients)
    return sum(min(carried([c for c in clients if c.network == net]),
                   carried([s for s in plan.storage if s.network == net])) for net in subnets)


@dataclass
class ScalingVerdict:
    steps: list[StepMeasurement]
    efficiency: dict[int, float] = field(default_factory=dict)
    knee: int | None = None


def judge_scaling(plan: SmokePlan, steps: list[StepMeasurement]) -> tuple[ScalingVerdict, list[Result]]:
    verdict = ScalingVerdict(steps)
    base = next((s.total for s in steps if s.n == 1), 0.0)
    results = []
    limited: set[int] = set()  # steps short because of the measuring machine: not judged
    for step in steps:
        eff = step.total / (step.n * base) if base > 0 else 0.0
        verdict.efficiency[step.n] = eff
        if not step.together:
            results.append(_not_together(step))
            continue
        short = crossing_short(plan, step)
        linear = eff >= plan.scaling_floor and short is None
        busy = step.probe.cpu_busy() if step.probe else {}
        if not linear:
            step.bottleneck = name_bottleneck(plan, step.load, busy, step.probe.port_growth() if step.probe else None)
        limits = [] if linear else step_limits(step)
        if not linear and verdict.knee is None and not limits:
            verdict.knee = step.n
        expected = f"E({step.n}) >= {plan.scaling_floor:g}" + (
            f" and >= {plan.saturation_floor:g} of what its links carry" if plan.routed else "")
        actual = f"E({step.n}) = {eff:.3f}"
        message = (f"{step.n} client(s) ({', '.join(step.hosts)}): {rate_text(step.total)} aggregate, "
                   f"E = {eff:.3f}; the budget predicts {rate_text(step.predicted_bits)}")
        if short is not None:
            message += f"; {short}"
        if step.measured > step.total:
            message += (f"; measured {rate_text(step.measured)}, more than the links carry "
                        f"({rate_text(step.capacity_bits)}): counted as that")
        if step.bottleneck is not None:
            message += f"; bottleneck: {step.bottleneck.text}"
        results.append(Result("cluster", f"scaling/step{step.n:03d}", "scaling",
                              Status.PASS if linear else Status.FAIL,
                              message if linear else f"{expected_actual(expected, actual)}; {message}",
                              expected, actual, seconds=step.load.seconds,
                              data={"clients": step.n, "hosts": step.hosts, "aggregate_bps": round(step.total),
                                    "measured_bps": round(step.measured), "processes_sum_bps": round(step.load.total),
                                    "measured_by": "receiving NICs" if step.load.received else "processes",
                                    "capacity_bps": round(step.capacity_bits)
                                    if step.capacity_bits != float("inf") else None,
                                    "efficiency": round(eff, 5), "predicted_bps": round(step.predicted_bits),
                                    "per_client_bps": {h: round(v) for h, v in step.load.per_client_host().items()},
                                    "per_storage_link_bps": {k: round(v) for k, v in
                                                             step.load.per_server_link().items()},
                                    "cpu_busy": {h: round(v, 4) for h, v in busy.items()},
                                    "bottleneck": step.bottleneck.as_dict() if step.bottleneck else None,
                                    "metrics": [metric(f"scaling.aggregate.n{step.n}", step.total / 1e6, "Mbit/s"),
                                                metric(f"scaling.efficiency.n{step.n}", eff, "")]}))
        if limits:  # short because of the measuring machine: an error that says so, no knee
            results[-1] = machine_limited(results[-1], limits)
            limited.add(step.n)
    series = {"clients": [s.n for s in steps], "aggregate_bps": [round(s.total) for s in steps],
              "efficiency": [round(verdict.efficiency[s.n], 5) for s in steps],
              "predicted_bps": [round(s.predicted_bits) for s in steps], "single_bps": round(base),
              "floor": plan.scaling_floor, "knee": verdict.knee}
    judged = [s for s in steps if s.together and s.n not in limited]
    ns = ", ".join(str(s.n) for s in judged)
    if not ns:
        return verdict, results
    if verdict.knee is None:
        results.append(Result("cluster", "scaling/linear", "scaling", Status.PASS,
                              f"linear over {ns} clients: every E(n) >= {plan.scaling_floor:g} "
                              f"(lowest {min(verdict.efficiency[s.n] for s in judged):.3f})",
                              data={"series": series}))
    else:
        knee_step = next(s for s in steps if s.n == verdict.knee)
        cause = knee_step.bottleneck.text if knee_step.bottleneck else "not identified"
        results.append(Result(
            "cluster", "scaling/linear", "scaling", Status.FAIL,
            f"not linear: the knee is at n={verdict.knee} (E = {verdict.efficiency[verdict.knee]:.3f} < "
            f"{plan.scaling_floor:g}); bottleneck: {cause}", f"E(n) >= {plan.scaling_floor:g} for n in {ns}",
            f"knee at n={verdict.knee}", fix="add capacity where the bottleneck is, or lower the expectation "
            "(acceptance.scaling_efficiency)", data={"series": series, "knee": verdict.knee,
                                                    "bottleneck": knee_step.bottleneck.as_dict()
                                                    if knee_step.bottleneck else None}))
    return verdict, results


def step_limits(step: StepMeasurement) -> list[str]:
    """What says the measuring machine, not the fabric, held a short step back ([]: nothing does). Links
    that are full (a leaf's uplinks, the storage links) are the fabric's limit, whatever the CPUs did;
    processes' figures that add up to more than the links carry did not run together (racfg.smoke.
    bottleneck's overshoot, or their own sum above what the links carry while the NICs took in less),
    which a machine too busy to start them does."""
    kind = step.bottleneck.kind if step.bottleneck else None
    if kind in ("leaf-uplinks", "storage-links"):
        return []
    overshoot = [step.bottleneck.text] if step.bottleneck and kind == "overshoot" else []
    if not overshoot and above(step.load.total, step.capacity_bits):
        overshoot = [f"the iperf3 processes' figures add up to {rate_text(step.load.total)}, more than the links "
                     f"carry ({rate_text(step.capacity_bits)}): they did not run over the same seconds"]
    return machine_limits(step.load, step.probe) + overshoot


def _not_together(step: StepMeasurement) -> Result:
    over = step.measured / step.capacity_bits - 1
    return Result("cluster", f"scaling/step{step.n:03d}", "scaling", Status.ERROR,
                  f"measurement error: {step.n} client(s) ({', '.join(step.hosts)}) measured "
                  f"{rate_text(step.measured)} ({'the receiving NICs' if step.load.received else 'the processes sum'}),"
                  f" {pct(over)} above what the links carry ({rate_text(step.capacity_bits)}): the processes did not "
                  "run over the same seconds (hosts or controller too busy to start them together), so the figure is "
                  "no aggregate",
                  fix="run smoke again on a quieter machine, or with fewer processes per link "
                      "(acceptance.smoke.processes_per_link)", seconds=step.load.seconds,
                  data={"clients": step.n, "hosts": step.hosts, "measured_bps": round(step.measured),
                        "capacity_bps": round(step.capacity_bits), "overshoot_limit": OVERSHOOT})


def crossing_short(plan: SmokePlan, step: StepMeasurement) -> str | None:
    """On a routed leaf-spine site every step crosses the spines, so T(1) already carries the fabric's
    fault (a leaf's uplink cut crosses every cross-leaf flow of a two-leaf site): a step is held to
    what its links carry as well as to E(n). Why it falls short, or None."""
    if not plan.routed or step.capacity_bits in (0.0, float("inf")):
        return None
    share = step.total / step.capacity_bits
    if share >= plan.saturation_floor:
        return None
    return (f"carries {pct(share)} of what its links carry ({rate_text(step.capacity_bits)}), below "
            f"{pct(plan.saturation_floor)}: the load crosses the spines")


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
    before, after = by_switch(read[0].counters_before), by_switch(read[-1].counters_after)
    return check_ecmp_balance(plan.fabric, before, after) + check_uplink_spread(plan.fabric, before, after,
                                                                                  down=plan.uplinks_down)


def steps(plan: SmokePlan) -> int:
    """The progress steps the phase counts for ``plan``: one per scaling step."""
    return len(plan.steps)


def measure(run: SmokeRun) -> None:
    """The phase: every step, the spine tier and ECMP on a leaf-spine site, and the plot."""
    plan = run.plan
    verdict, results = measure_scaling(plan, run.load, run.links, run.options.remeasure,
                                       run.tick, run.announce)
    steps = verdict.steps
    run.results += results
    run.results += isolate_knee(plan, run.load, verdict, run.options.remeasure, run.announce)  # the node, not the step
    if plan.routed:  # every load crossed the spines: the tier against the budget, and each spine's share
        tier = spine_tier_result(plan, steps, spine_tier_bits(plan))
        run.results += [*([tier] if tier else []), *ecmp_results(plan, [p for _, p in run.probed])]
    if len(steps) > 1:
        path = plots.plot_scaling(
            run.out_dir / "scaling.png", f"{plan.site}: read scaling (storage -> n clients, iperf3 TCP)",
            [s.n for s in steps], [s.total / 1e6 for s in steps], "Mbit/s", plan.scaling_floor,
            [s.predicted_bits / 1e6 for s in steps], verdict.knee,
            capacity=("storage link capacity", sum(s.rate_mbit for s in plan.storage)))
        run.attachments.append(str(path))


def isolate_knee(plan: SmokePlan, measure: Measure, verdict: ScalingVerdict, limit: int,
                 announce: Announce) -> list[Result]:
    """The node, not the step: the knee's clients below their share, each loaded beside one that passed."""
    step = next((s for s in verdict.steps if s.n == verdict.knee and s.n > 1), None)
    if step is None:
        return []

    def pair(suspect: str, partner: str) -> dict[str, float]:
        clients = [link for h in (suspect, partner) for link in plan.links_of(h)]
        return measure(clients, "read", f"scaling/isolate/{suspect}")[0].per_client_host()
    capacity = {h: sum(link.rate_mbit for link in plan.links_of(h)) for h in step.hosts}
    return pair_results(plan, step, isolate_suspects(step.load.per_client_host(), capacity, plan.outlier_fraction,
                                                     pair, limit, announce, f"scaling: step {step.n}"))


def pair_results(plan: SmokePlan, step: StepMeasurement, pairs: list[PairOutcome]) -> list[Result]:
    """The knee's pairs (racfg.smoke.pair_isolation): the client that stays low beside one that passed, or none."""
    how = Isolating("scaling/isolate", "scaling", "client", f"the {step.n}-client step", rate_text,
                    "racfg validate --limit {node} (its data NIC's speed, MTU, tuning), then its cable and port")
    capacity = {h: sum(link.rate_mbit for link in plan.links_of(h)) for h in step.hosts}
    return isolation_results(how, step.load.per_client_host(), capacity, plan.outlier_fraction, pairs)


# The phase's pure verdicts: plain data in (racfg.smoke.measured, the plan), results out.
VERDICTS = (judge_scaling, spine_tier_result, ecmp_results, pair_results)
