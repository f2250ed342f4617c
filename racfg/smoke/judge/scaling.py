"""Scaling verdicts: each step's aggregate, E(n) = T(n) / (n T(1)) against the floor, the knee and its
bottleneck; a step counted at no more than its links carry."""

from __future__ import annotations

from dataclasses import dataclass, field

from racfg.results import Result, Status, expected_actual
from racfg.smoke.bottleneck import Bottleneck, name_bottleneck
from racfg.smoke.measured import LoadResult, StepProbe
from racfg.smoke.metrics import metric
from racfg.smoke.plan import Link, SmokePlan
from racfg.smoke.units import pct, rate_text

# How far a step's sum may run above what its links carry and still be a reading (seen in the lab: up to
# 8% on a 2-core machine starting 192 processes; once 48%, which made a short step look linear).
OVERSHOOT = 0.15


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
    for step in steps:
        eff = step.total / (step.n * base) if base > 0 else 0.0
        verdict.efficiency[step.n] = eff
        if not step.together:
            results.append(_not_together(step))
            continue
        short = crossing_short(plan, step)
        linear = eff >= plan.scaling_floor and short is None
        if not linear and verdict.knee is None:
            verdict.knee = step.n
        busy = step.probe.cpu_busy() if step.probe else {}
        if not linear:
            step.bottleneck = name_bottleneck(plan, step.load, busy, step.probe.port_growth() if step.probe else None)
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
    series = {"clients": [s.n for s in steps], "aggregate_bps": [round(s.total) for s in steps],
              "efficiency": [round(verdict.efficiency[s.n], 5) for s in steps],
              "predicted_bps": [round(s.predicted_bits) for s in steps], "single_bps": round(base),
              "floor": plan.scaling_floor, "knee": verdict.knee}
    ns = ", ".join(str(s.n) for s in steps if s.together)
    if not ns:
        return verdict, results
    if verdict.knee is None:
        results.append(Result("cluster", "scaling/linear", "scaling", Status.PASS,
                              f"linear over {ns} clients: every E(n) >= {plan.scaling_floor:g} "
                              f"(lowest {min(verdict.efficiency[s.n] for s in steps if s.together):.3f})",
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


def _not_together(step: StepMeasurement) -> Result:
    over = step.measured / step.capacity_bits - 1
    return Result("cluster", f"scaling/step{step.n:03d}", "scaling", Status.ERROR,
                  f"{step.n} client(s) ({', '.join(step.hosts)}) not measured: the processes' figures add up to "
                  f"{rate_text(step.measured)}, {pct(over)} above what the links carry "
                  f"({rate_text(step.capacity_bits)}): they did not run over the same seconds (hosts or controller "
                  "too busy to start them together), so the sum is no aggregate",
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
