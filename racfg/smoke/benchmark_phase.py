"""Smoke's benchmark phase: the user's benchmark on each node-count step, each step re-measured below its
mark and judged on its reference (else on its scaling), scale-out against scale-up, and its plot."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from racfg.smoke import benchmark as bench
from racfg.smoke import plots
from racfg.smoke.judge.benchmark import equivalence_result, equivalence_unrun, step_margin, step_result
from racfg.smoke.judge.readings import Reading, deciding_reading, with_readings
from racfg.smoke.measured import BenchmarkStep
from racfg.smoke.metrics import reference_bounds
from racfg.smoke.plan import SmokePlan, shape_of
from racfg.smoke.remeasure import until_met


def measure(run: Any) -> None:
    """The benchmark phase of a smoke run (``run``: racfg.smoke.command's run of it)."""
    plan = run.plan
    if plan.benchmark is None:
        return
    spec = plan.benchmark.spec
    refs = plan.references.get(spec.name, {})
    all_steps: list[BenchmarkStep] = []
    base = None  # T(1): the one-node whole-node step's deciding figure; it comes first of the whole-node steps
    for planned in plan.benchmark.steps:
        n, gpus = shape_of(planned, plan.benchmark.gpus_per_node)
        shape = planned if isinstance(planned, str) else None
        run.tick(f"benchmark {spec.name}: {shape or n} node(s)")
        take = partial(_bench_step, run, plan.client_hosts[:n], gpus, shape)
        readings = until_met([take()], take, partial(_margin, plan, refs, base), run.options.remeasure,
                             run.announce, f"benchmark {spec.name}: {shape or n} node(s)")
        step = readings[deciding_reading([_margin(plan, refs, base, r) for r in readings])]
        if shape is None and n == 1:
            base = step.value
        all_steps.append(step)
        result = step_result(spec.name, spec.unit, spec.launcher, refs, base, step, plan.scaling_floor)
        run.results.append(with_readings(result, [
            Reading(r.value or 0.0, spec.unit, _margin(plan, refs, base, r),
                    f"{r.value:.4g} {spec.unit}" if r.value is not None else f"no figure ({r.error})")
            for r in readings], run.options.remeasure))
    by_shape = {s.shape: s.value for s in all_steps if s.shape}
    for group in spec.equivalent:
        values = {shape: by_shape.get(shape) for shape in group.shapes}
        if any(shape not in by_shape for shape in group.shapes):
            run.results.append(equivalence_unrun(spec.name, group.shapes,
                                                 [s for s in group.shapes if s not in by_shape]))
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


def _bench_step(run: Any, hosts: list[str], gpus: int, shape: str | None) -> BenchmarkStep:
    assert run.plan.benchmark is not None
    started = time.monotonic()
    step = bench.run_step(run.fleet, run.plan, run.plan.benchmark.spec, hosts, gpus, shape)
    step.seconds = time.monotonic() - started
    return step


def _margin(plan: SmokePlan, refs: dict, base: float | None, step: BenchmarkStep) -> float:
    return step_margin(refs, base, step, plan.scaling_floor)
