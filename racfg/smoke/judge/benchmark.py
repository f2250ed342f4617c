"""Verdicts on the user's benchmark: each step against its reference, else on its scaling, and scale-out
against scale-up (seed 004)."""

from __future__ import annotations

from dataclasses import replace

from racfg.inventory.model import Reference
from racfg.results import Result, Status, expected_actual
from racfg.smoke.judge.figures import reference_result
from racfg.smoke.measured import BenchmarkStep
from racfg.smoke.metrics import metric, reference_margin
from racfg.smoke.units import pct


def step_efficiency(base: float | None, step: BenchmarkStep) -> float | None:
    """E(n) of a whole-node step against the one-node figure; None for a shape or without a figure."""
    return step.value / (step.n * base) if base and step.value is not None and step.shape is None else None


def step_margin(refs: dict[int | str, Reference], base: float | None, step: BenchmarkStep, floor: float) -> float:
    """How far a step's figure is past its mark: its reference, else E(n) against the scaling floor."""
    if step.value is None:
        return -1.0
    ref = refs.get(step.shape or step.n)
    if ref is not None:
        return reference_margin(step.value, ref)
    eff = step_efficiency(base, step)
    return eff - floor if eff is not None else 0.0


def step_result(name: str, unit: str, launcher: str, refs: dict[int | str, Reference], base: float | None,
                step: BenchmarkStep, floor: float) -> Result:
    """One step of benchmark ``name``: against its reference; without one, a whole-node step on E(n)."""
    check = f"benchmark/{name}/{step.label}"
    what = f"{step.shape} (nodes x GPUs)" if step.shape else f"{step.n} node(s)"
    if step.value is None:
        return Result("cluster", check, "benchmark", Status.ERROR, f"{name} on {what}: {step.error}",
                      seconds=step.seconds)
    eff = step_efficiency(base, step)
    message = (f"{name} on {what} via {launcher}: {step.value:.4g} {unit}"
               + (f", E = {eff:.3f}" if eff is not None else ""))
    data = {"nodes": step.n, "shape": step.shape, "hosts": step.hosts, "value": step.value,
            "per_node": step.per_node, "efficiency": eff,
            "metrics": [metric(f"benchmark.{name}.{step.label}", step.value, unit)]}
    result = reference_result("cluster", check, "benchmark", step.value, unit, refs.get(step.shape or step.n),
                              message, data, f"no acceptance.references.{name} for {step.shape or step.n}")
    if result.status is Status.SKIP and eff is not None:  # no reference: its scaling is still judged
        ok = eff >= floor
        result = Result(result.target, check, "benchmark", Status.PASS if ok else Status.FAIL,
                        f"{message} (no reference for {step.n} node(s): judged on scaling, E >= {floor:g})",
                        f"E({step.n}) >= {floor:g}", f"E({step.n}) = {eff:.3f}", data=data)
    return replace(result, seconds=step.seconds)


def equivalence_unrun(benchmark: str, shapes: list[str], missing: list[str]) -> Result:
    """A scale-out = scale-up group with a shape that did not run (more nodes than the clients measured)."""
    return Result("cluster", f"benchmark/{benchmark}/equivalent/{'='.join(shapes)}", "benchmark", Status.SKIP,
                  "not every shape ran (more nodes than clients): " + ", ".join(missing))


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
