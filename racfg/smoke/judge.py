"""Verdicts: measured figures against line rate, TCP ceiling, the best of their kind and references.

Every verdict is a ``racfg.results.Result``; its ``data`` keeps the measured series (for plots,
JSON and ``--compare``) under ``metrics`` and the raw figures beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from racfg.inventory.model import Reference
from racfg.results import Result, Status, expected_actual
from racfg.smoke.bottleneck import Bottleneck, name_bottleneck
from racfg.smoke.metrics import metric, reference_text, within
from racfg.smoke.plan import Link, SmokePlan
from racfg.smoke.probes import StepProbe
from racfg.smoke.tcp import LoadResult
from racfg.smoke.units import pct, rate_text

DIRECTION_TEXT = {"read": "read (storage -> client)", "write": "write (client -> storage)"}
REMEASURE = 2  # measurements again, at most, of an item whose readings all missed their mark


@dataclass(frozen=True)
class Reading:
    """One measurement of one item as the report keeps it. ``margin`` is how far it is past its mark in
    the mark's own terms (share of line rate, E(n), share of the bound): >= 0 meets it, < 0 misses."""

    value: float
    unit: str
    margin: float
    text: str

    @property
    def meets(self) -> bool:
        return self.margin >= 0


def deciding_reading(margins: Sequence[float]) -> int:
    """Which of an item's readings its verdict stands on: the best (the largest margin; the first of equals).

    A fault (a cable at half speed, a port that came up slow, a shaper, a host short of CPU) caps
    every reading: it reproduces, and no re-measurement meets the mark. Noise (another process on a
    shared core, a stall of the scheduler, TCP finding its window late) lowers one reading and not
    the next. So one reading at the mark shows the item can meet it, and is what decides; the worst
    or the mean of the readings would fail the item on the noise that re-measuring is there to see
    through. When none meets the mark the best is still the one reported: even at its best, short.
    """
    if not margins:
        raise ValueError("an item with no reading has no verdict")
    return max(range(len(margins)), key=lambda i: (margins[i], -i))


def measure_again(margins: Sequence[float], limit: int) -> bool:
    """Whether an item is measured once more: no reading has met its mark yet and fewer than ``limit``
    re-measurements ran (the first reading is not one). A fault is measured ``limit + 1`` times in all."""
    return bool(margins) and all(m < 0 for m in margins) and len(margins) - 1 < limit


def with_readings(result: Result, readings: Sequence[Reading], limit: int) -> Result:
    """``result`` (judged on its deciding reading) with every reading: in ``data["readings"]`` always,
    and, when the item was measured more than once, in its message, which says so."""
    data = {**result.data, "readings": [{"value": round(r.value, 6), "unit": r.unit, "margin": round(r.margin, 5),
                                         "meets": r.meets} for r in readings],
            "remeasured": len(readings) - 1, "remeasure_limit": limit}
    if len(readings) < 2:
        return replace(result, data=data)
    return replace(result, data=data, message=f"{result.message}; {readings_text(readings, limit)}")


def remeasure_notes(results: Sequence[Result]) -> list[str]:
    """One note per item measured more than once: a re-measured pass is folded away with the other passes
    on a terminal, and the note keeps it in sight in every report."""
    out = []
    for r in results:
        readings = r.data.get("readings", [])
        if len(readings) > 1:
            listed = ", ".join(f"{x['value']:.4g} {x['unit']}" + ("" if x["meets"] else " (below the mark)")
                               for x in readings)
            out.append(f"{r.check}: measured {len(readings)} times ({listed}), at most {r.data['remeasure_limit']} "
                       f"re-measurements: {r.status}")
    return out


def readings_text(readings: Sequence[Reading], limit: int) -> str:
    """``measured 2 times (re-measured 1, at most 2): 217 Mbit/s (below the mark), 246 Mbit/s; ...``."""
    n = len(readings)
    listed = ", ".join(r.text + ("" if r.meets else " (below the mark)") for r in readings)
    best = deciding_reading([r.margin for r in readings])
    if readings[best].meets:
        end = f"the best (reading {best + 1}) meets the mark and decides: a fault would have reproduced"
    else:
        end = "no reading meets the mark: the fault reproduced, the best is reported"
    return f"measured {n} times (re-measured {n - 1}, at most {limit}): {listed}; {end}"


@dataclass
class LinkMeasurement:
    link: Link
    direction: str
    load: LoadResult
    probe: StepProbe | None = None

    @property
    def bits(self) -> float:
        return self.load.per_client_link().get(self.link.key, 0.0)

    @property
    def share(self) -> float:
        return self.bits / (self.link.rate_mbit * 1e6)


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
        """The sum of every process's figure, as measured."""
        return self.load.total

    @property
    def total(self) -> float:
        """The aggregate the step is judged on: as measured, but no more than its links carry."""
        return min(self.load.total, self.capacity_bits)


def step_capacity(plan: SmokePlan, hosts: list[str]) -> float:
    """The most a read step from these client hosts can carry: on each subnet (a rail) the smaller of
    its clients' and its storage links' line rates at their TCP ceilings. A sum of iperf3 figures
    above it is an overshoot (processes that did not run over quite the same seconds), not
    throughput: judged as measured, 9 clients reading from 8 storage links of the same speed looked
    linear (E = 0.914) where the storage links allow 8/9."""
    def carried(links: list[Link]) -> float:
        return sum(link.rate_mbit * 1e6 * link.tcp_ceiling for link in links)
    clients = [link for link in plan.clients if link.host in hosts]
    subnets = dict.fromkeys(link.network for link in clients)
    return sum(min(carried([c for c in clients if c.network == net]),
                   carried([s for s in plan.storage if s.network == net])) for net in subnets)


@dataclass
class ScalingVerdict:
    steps: list[StepMeasurement]
    efficiency: dict[int, float] = field(default_factory=dict)
    knee: int | None = None


def link_result(plan: SmokePlan, m: LinkMeasurement) -> Result:
    link = m.link
    line = link.rate_mbit * 1e6
    ceiling = link.tcp_ceiling
    share_ceiling = m.share / ceiling
    floor = plan.saturation_floor
    expected = f">= {pct(floor)} of {rate_text(line)} ({link.rate_source})"
    actual = (f"{rate_text(m.bits)} = {pct(m.share)} of line rate, {pct(share_ceiling)} of the TCP ceiling "
              f"({pct(ceiling)} at MTU {link.mtu})")
    errors = m.load.errors
    if errors and m.bits == 0:
        return Result(link.key, f"link/{m.direction}/{link.key}", "link saturation", Status.ERROR,
                      f"{DIRECTION_TEXT[m.direction]}: not measured: {errors[0]}", expected, None,
                      data={"direction": m.direction, "errors": errors})
    if share_ceiling >= 0.97:
        limit = "the link is full; TCP/IP headers take the rest"
    elif m.share >= floor:
        limit = f"{pct(1 - share_ceiling)} below what TCP carries at MTU {link.mtu}"
    else:
        limit = (f"{pct(1 - share_ceiling)} below what TCP carries at MTU {link.mtu}: not the protocol, "
                 "look at the link, the storage side and the client")
    status = Status.PASS if m.share >= floor else Status.FAIL
    message = f"{DIRECTION_TEXT[m.direction]}: {rate_text(m.bits)}; {limit}"
    if errors:
        message += f" ({len(errors)} of {len(m.load.flows)} iperf3 processes failed: {errors[0]})"
    if status is Status.FAIL:
        message = f"{expected_actual(expected, rate_text(m.bits))}; {message}"
    return Result(link.key, f"link/{m.direction}/{link.key}", "link saturation", status, message, expected, actual,
                  fix=None if status is Status.PASS else "check the cable, port speed and NIC of this link "
                  "(racfg validate), then the storage side", seconds=m.load.seconds,
                  data={"direction": m.direction, "measured_bps": round(m.bits), "line_bps": round(line),
                        "rate_source": link.rate_source, "mtu": link.mtu, "tcp_ceiling": round(ceiling, 5),
                        "share_of_line": round(m.share, 5), "share_of_ceiling": round(share_ceiling, 5),
                        "processes": len([f for f in m.load.flows if f.flow.client.key == link.key]),
                        "flows": [{"server": f.flow.server.key, "port": f.flow.port,
                                   "iperf3": f.result.as_dict() if f.result else None, "error": f.error}
                                  for f in m.load.flows],
                        "metrics": [metric(f"link.{m.direction}.{link.key}", m.bits / 1e6, "Mbit/s")]})


def best_of_kind(best: LinkMeasurement) -> float:
    """What the links of a kind are held to: the best one's figure, but no more than its line rate
    carries at its MTU. A figure above that is not a faster link but a measurement that overshot
    (a shaper's burst, processes that did not run over quite the same seconds), and holding the
    others to it would name full links as slow."""
    return min(best.bits, best.link.rate_mbit * 1e6 * best.link.tcp_ceiling)


def link_kinds(measurements: Sequence[LinkMeasurement]) -> dict[tuple[str, float], list[LinkMeasurement]]:
    """The measured links of each kind (direction, declared speed) that has two or more, reads first."""
    kinds = sorted({(m.direction, m.link.declared_mbit) for m in measurements}, key=lambda k: (k[0] != "read", k[1]))
    groups = {kind: [m for m in measurements if (m.direction, m.link.declared_mbit) == kind and m.bits > 0]
              for kind in kinds}
    return {kind: group for kind, group in groups.items() if len(group) > 1}


def outlier_bound(plan: SmokePlan, m: LinkMeasurement, measurements: Sequence[LinkMeasurement]) -> float | None:
    """The figure below which ``m`` is an outlier among ``measurements`` (None: no other link of its kind)."""
    group = link_kinds(measurements).get((m.direction, m.link.declared_mbit))
    if group is None:
        return None
    return plan.outlier_fraction * best_of_kind(max(group, key=lambda x: x.bits))


def outlier_results(plan: SmokePlan, measurements: list[LinkMeasurement]) -> list[Result]:
    """A link below ``outlier_fraction`` of the best link of its kind (direction, declared speed) is
    named, even when it meets its own line rate: a link that came up at half speed is full, and slow."""
    out = []
    for (direction, _), group in link_kinds(measurements).items():
        best = max(group, key=lambda m: m.bits)
        reference = best_of_kind(best)
        held = (f"{best.link.key}, {rate_text(best.bits)}" if reference >= best.bits else
                f"{best.link.key}, {rate_text(best.bits)}, counted as {rate_text(reference)}: "
                f"the TCP ceiling of its line rate")
        bound = plan.outlier_fraction * reference
        slow = [m for m in group if m.bits < bound]
        for m in slow:
            out.append(Result(m.link.key, f"outlier/{direction}/{m.link.key}", "outliers", Status.FAIL,
                              f"{expected_actual(f'>= {rate_text(bound)}', rate_text(m.bits))}; "
                              f"{DIRECTION_TEXT[direction]}: {pct(m.bits / reference)} of the best link of its kind "
                              f"({held})",
                              f">= {pct(plan.outlier_fraction)} of the best link", pct(m.bits / reference),
                              fix="compare its cable, negotiated speed, port counters and NIC with the best link's",
                              data={"direction": direction, "best": best.link.key, "best_bps": round(best.bits),
                                    "reference_bps": round(reference),
                                    "share_of_best": round(m.bits / reference, 5)}))
        if not slow:
            out.append(Result("cluster", f"outlier/{direction}", "outliers", Status.PASS,
                              f"{DIRECTION_TEXT[direction]}: every link within {pct(plan.outlier_fraction)} of the "
                              f"best ({held})"))
    return out


def judge_scaling(plan: SmokePlan, steps: list[StepMeasurement]) -> tuple[ScalingVerdict, list[Result]]:
    verdict = ScalingVerdict(steps)
    base = next((s.total for s in steps if s.n == 1), 0.0)
    results = []
    for step in steps:
        eff = step.total / (step.n * base) if base > 0 else 0.0
        verdict.efficiency[step.n] = eff
        linear = eff >= plan.scaling_floor
        if not linear and verdict.knee is None:
            verdict.knee = step.n
        busy = step.probe.cpu_busy() if step.probe else {}
        if not linear:
            step.bottleneck = name_bottleneck(plan, step.load, busy)
        expected = f"E({step.n}) >= {plan.scaling_floor:g}"
        actual = f"E({step.n}) = {eff:.3f}"
        message = (f"{step.n} client(s) ({', '.join(step.hosts)}): {rate_text(step.total)} aggregate, "
                   f"E = {eff:.3f}; the budget predicts {rate_text(step.predicted_bits)}")
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
                                    "measured_bps": round(step.measured),
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
    ns = ", ".join(str(s.n) for s in steps)
    if verdict.knee is None:
        results.append(Result("cluster", "scaling/linear", "scaling", Status.PASS,
                              f"linear over {ns} clients: every E(n) >= {plan.scaling_floor:g} "
                              f"(lowest {min(verdict.efficiency.values()):.3f})", data={"series": series}))
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


def counter_results(probes: list[tuple[str, StepProbe]], problem: str | None, ports: dict[tuple[str, str], str]
                    ) -> list[Result]:
    """Drops, errors or pause frames on any measured switch port during the run are reported."""
    if not probes or not any(p.counters_before for _, p in probes):
        reason = problem or "no switch counters were read"
        return [Result("switches", "switch/counters", "switch counters", Status.SKIP,
                       f"switch port counters not read: {reason}")]
    grown: dict[tuple[str, str], dict[str, int]] = {}
    for _, probe in probes:
        for key, delta in probe.port_growth().items():
            if key not in ports:
                continue
            totals = grown.setdefault(key, {})
            for name, value in delta.as_dict().items():
                totals[name] = totals.get(name, 0) + value
    out = []
    for (switch, port), totals in sorted(grown.items()):
        bad = {k: v for k, v in totals.items() if v and not k.endswith("_bytes")}
        if bad:
            what = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(bad.items()))
            out.append(Result(f"{switch}:{port}", f"switch/{switch}/{port}/errors", "switch counters", Status.FAIL,
                              f"{expected_actual('no drops, errors or pause frames', what)} during the run "
                              f"(port of {ports[(switch, port)]})", "0", what,
                              fix="check the cable and optics of this port; drops under load also mean a "
                                  "buffer or a shaper was overrun",
                              data={"counters": totals}))
    if not out:
        out.append(Result("switches", "switch/counters", "switch counters", Status.PASS,
                          f"no drops, errors or pause frames on {len(grown)} measured ports during the run",
                          data={"ports": {f"{s}:{p}": t for (s, p), t in sorted(grown.items())}}))
    if problem:
        out.append(Result("switches", "switch/counters/read", "switch counters", Status.ERROR,
                          f"some switch counters could not be read: {problem}"))
    return out


def reference_result(target: str, check: str, category: str, value: float, unit: str, ref: Reference | None,
                     message: str, data: dict[str, Any], unjudged_reason: str) -> Result:
    """A figure against a ReFrame-style reference; without one it is reported and not judged."""
    actual = f"{value:.4g} {unit}"
    if ref is None:
        return Result(target, check, category, Status.SKIP, f"{message}; not judged: {unjudged_reason}",
                      None, actual, data=data)
    ok = within(value, ref)
    expected = reference_text(ref)
    return Result(target, check, category, Status.PASS if ok else Status.FAIL,
                  message if ok else f"{expected_actual(expected, actual)}; {message}", expected, actual,
                  data=data)


def equivalence_result(benchmark: str, unit: str, band: float, values: dict[str, float | None]) -> Result:
    """Scale-out equals scale-up (seed 004: 1 server x 8 GPUs = 2 x 4 = 4 x 2): every shape's figure
    within +-band of the first shape's (the baseline). A shape that gave no figure makes it an error."""
    shapes = list(values)
    check = f"benchmark/{benchmark}/equivalent/{'='.join(shapes)}"
    expected = f"{' = '.join(shapes)} within +-{pct(band)} of {shapes[0]}"
    missing = [s for s, v in values.items() if v is None]
    if missing:
        return Result("cluster", check, "benchmark", Status.ERROR,
                      f"{benchmark}: {', '.join(missing)} gave no figure, so {expected} could not be judged",
                      expected, None)
    base = values[shapes[0]] or 0.0
    deviation = {s: (v or 0.0) / base - 1.0 if base else float("inf") for s, v in values.items()}
    off = [s for s in shapes[1:] if abs(deviation[s]) > band]
    figures = ", ".join(f"{s} {values[s]:.4g} {unit}" + (f" ({deviation[s]:+.1%})" if s != shapes[0] else "")
                        for s in shapes)
    worst = max((abs(deviation[s]) for s in shapes[1:]), default=0.0)
    actual = f"largest difference {worst:.1%}" + (f" ({', '.join(off)})" if off else "")
    message = f"{benchmark}: {figures}"
    return Result("cluster", check, "benchmark", Status.FAIL if off else Status.PASS,
                  f"{expected_actual(expected, actual)}; {message}" if off else
                  f"scale-out equals scale-up: {message}; within +-{pct(band)}",
                  expected, actual, fix="look at the slower shape's interconnect (across nodes) or its GPU "
                  "topology (inside a node)" if off else None,
                  data={"values": values, "deviation": {s: round(d, 5) for s, d in deviation.items()},
                        "band": band})
