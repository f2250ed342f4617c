"""Smoke's benchmark phase: the user's benchmark on each node-count step, each step re-measured below its
mark and judged on its reference (else on its scaling), scale-out against scale-up, and its plot."""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial
from typing import Any

from racfg.results import Result, Status
from racfg.smoke import benchmark as bench
from racfg.smoke import plots
from racfg.smoke.judge import Reading, deciding_reading, equivalence_result, reference_result, with_readings
from racfg.smoke.metrics import metric, reference_bounds, reference_margin
from racfg.smoke.plan import SmokePlan, shape_of
from racfg.smoke.remeasure import until_met


def measure(run: Any) -> None:
    """The benchmark phase of a smoke run (``run``: racfg.smoke.command's run of it)."""
    plan = run.plan
    if plan.benchmark is None:
        return
    spec = plan.benchmark.spec
    refs = plan.references.get(spec.name, {})
    all_steps: list[bench.BenchmarkStep] = []
    base = None  # T(1): the one-node whole-node step's deciding figure; it comes first of the whole-node steps
    for planned in plan.benchmark.steps:
        n, gpus = shape_of(planned, plan.benchmark.gpus_per_node)
        shape = planned if isinstance(planned, str) else None
        run.tick(f"benchmark {spec.name}: {shape or n} node(s)")
        take = partial(_bench_step, run, plan.client_hosts[:n], gpus, shape)
        readings = until_met([take()], take, partial(_bench_margin, plan, refs, base), run.options.remeasure,
                             run.announce, f"benchmark {spec.name}: {shape or n} node(s)")
        step = readings[deciding_reading([_bench_margin(plan, refs, base, r) for r in readings])]
        if shape is None and n == 1:
            base = step.value
        all_steps.append(step)
        result = _bench_result(plan, refs, base, step)
        run.results.append(with_readings(result, [
            Reading(r.value or 0.0, spec.unit, _bench_margin(plan, refs, base, r),
                    f"{r.value:.4g} {spec.unit}" if r.value is not None else f"no figure ({r.error})")
            for r in readings], run.options.remeasure))
    by_shape = {s.shape: s.value for s in all_steps if s.shape}
    for group in spec.equivalent:
        values = {shape: by_shape.get(shape) for shape in group.shapes}
        if any(shape not in by_shape for shape in group.shapes):
            run.results.append(Result("cluster", f"benchmark/{spec.name}/equivalent/{'='.join(group.shapes)}",
                                      "benchmark", Status.SKIP, "not every shape ran (more nodes than clients): "
                                      + ", ".join(s for s in group.shapes if s not in by_shape)))
            continue
        run.results.append(equivalence_result(spec.name, spec.unit, group.band, values))
    good = [s for s in all_steps if s.shape is None and s.value is not None]  # whole-node steps: their scaling
    if len(good) > 1:
        reference = [(n, r.value, *reference_bounds(r)) for n, r in sorted(
            (k, v) for k, v in refs.items() if isinstance(k, int)) if n in {s.n for s in good}]
        eff_knee = next((s.n for s in good if base and s.value / (s.n * base) < plan.scaling_floor), None)
        path = plots.plot_scaling(run.out_dir / "benchmark.png", f"{plan.site}: benchmark {spec.name} per node count",
                                  [s.n for s in good], [s.value or 0.0 for s in good], spec.unit or "figure",
                                  plan.scaling_floor, None, eff_knee, reference)
        run.attachments.append(str(path))


def _bench_step(run: Any, hosts: list[str], gpus: int, shape: str | None) -> bench.BenchmarkStep:
    assert run.plan.benchmark is not None
    started = time.monotonic()
    step = bench.run_step(run.fleet, run.plan, run.plan.benchmark.spec, hosts, gpus, shape)
    step.seconds = time.monotonic() - started
    return step


def _bench_efficiency(base: float | None, step: bench.BenchmarkStep) -> float | None:
    """E(n) of a whole-node step against the one-node figure; None for a shape or without a figure."""
    return step.value / (step.n * base) if base and step.value is not None and step.shape is None else None


def _bench_margin(plan: SmokePlan, refs: dict, base: float | None, step: bench.BenchmarkStep) -> float:
    """How far a step's figure is past its mark: its reference, else E(n) against the scaling floor."""
    if step.value is None:
        return -1.0
    ref = refs.get(step.shape or step.n)
    if ref is not None:
        return reference_margin(step.value, ref)
    eff = _bench_efficiency(base, step)
    return eff - plan.scaling_floor if eff is not None else 0.0


def _bench_result(plan: SmokePlan, refs: dict, base: float | None, step: bench.BenchmarkStep) -> Result:
    assert plan.benchmark is not None
    spec = plan.benchmark.spec
    check = f"benchmark/{spec.name}/{step.label}"
    what = f"{step.shape} (nodes x GPUs)" if step.shape else f"{step.n} node(s)"
    if step.value is None:
        return Result("cluster", check, "benchmark", Status.ERROR, f"{spec.name} on {what}: {step.error}",
                      seconds=step.seconds)
    eff = _bench_efficiency(base, step)
    message = (f"{spec.name} on {what} via {spec.launcher}: {step.value:.4g} {spec.unit}"
               + (f", E = {eff:.3f}" if eff is not None else ""))
    data = {"nodes": step.n, "shape": step.shape, "hosts": step.hosts, "value": step.value,
            "per_node": step.per_node, "efficiency": eff,
            "metrics": [metric(f"benchmark.{spec.name}.{step.label}", step.value, spec.unit)]}
    result = reference_result("cluster", check, "benchmark", step.value, spec.unit, refs.get(step.shape or step.n),
                              message, data, f"no acceptance.references.{spec.name} for {step.shape or step.n}")
    if result.status is Status.SKIP and eff is not None:  # no reference: its scaling is still judged
        ok = eff >= plan.scaling_floor
        result = Result(result.target, check, "benchmark", Status.PASS if ok else Status.FAIL,
                        f"{message} (no reference for {step.n} node(s): judged on scaling, "
                        f"E >= {plan.scaling_floor:g})", f"E({step.n}) >= {plan.scaling_floor:g}",
                        f"E({step.n}) = {eff:.3f}", data=data)
    return replace(result, seconds=step.seconds)
