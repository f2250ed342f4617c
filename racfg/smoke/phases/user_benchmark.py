"""The benchmark phase (``benchmark``): the user's own benchmark on each node-count step, through the
launcher the user names, each step re-measured below its mark.

``ssh``: the command runs on every node of the step at once (over the run's SSH sessions) and
their figures are added. ``torchrun``: it runs on every node with a rendezvous on the first,
and the first node's figure counts. ``mpirun`` / ``horovodrun`` / ``srun``: launched once, on
the first node, which starts the rest. Placeholders: {host} (this node), {hosts} (the step's
nodes, comma separated), {nodes} (their count), {address} (this node's first data address),
{gpus} (GPUs per node: a NODESxGPUS step's, else the node's), {total_gpus}, {storage} (the storage
hosts' data addresses), {duration} (seconds, the run's TCP duration).

Verdicts (``VERDICTS``, pure): each step against its reference, else on its scaling, and scale-out
against scale-up (seed 004); the phase plots the whole-node steps.
"""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import replace
from functools import partial

from racfg.errors import UsageError
from racfg.inventory.model import Reference, UserBenchmark
from racfg.results import Result, Status, expected_actual
from racfg.smoke import plots
from racfg.smoke.gpu_presence import gpus_missing, gpus_of
from racfg.smoke.measured import BenchmarkStep
from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.metrics import metric, reference_bounds, reference_margin, reference_result
from racfg.smoke.remeasure import Reading, deciding_reading, until_met, with_readings
from racfg.smoke.remote import Completed, Fleet
from racfg.smoke.run_state import SmokeRun
from racfg.smoke.smoke_plan import SmokePlan, shape_of
from racfg.smoke.tcp import stop_unfinished
from racfg.smoke.units import pct

LAUNCHERS = {
    "mpirun": "mpirun -np {nodes} -H {hosts} ",
    "horovodrun": "horovodrun -np {nodes} -H {hosts_slots} ",
    "srun": "srun -N {nodes} ",
    "torchrun": "torchrun --nnodes={nodes} --rdzv_backend=c10d --rdzv_endpoint={first}:29400 ",
}


def _fields(plan: SmokePlan, hosts: list[str], host: str, gpus: int = 0) -> dict[str, str]:
    links = plan.links_of(host)
    return {"host": host, "hosts": ",".join(hosts), "nodes": str(len(hosts)), "gpus": str(gpus),
            "total_gpus": str(gpus * len(hosts)),
            "hosts_slots": ",".join(f"{h}:1" for h in hosts), "first": hosts[0],
            "address": links[0].ip if links else "", "storage": ",".join(s.ip for s in plan.storage),
            "duration": str(plan.duration_s)}


def render(spec: UserBenchmark, fields: dict[str, str]) -> str:
    """The benchmark's shell command: the inventory's command (a command by design, see
    UserBenchmark.command) with each placeholder's value quoted, so a value is one word."""
    quoted = {key: shlex.quote(value) for key, value in fields.items()}
    try:
        command = spec.command.format(**quoted)
        prefix = LAUNCHERS.get(spec.launcher, "").format(**quoted)
    except (KeyError, IndexError, ValueError) as exc:
        raise UsageError(f"acceptance.smoke.benchmark.command: unknown placeholder {exc}",
                         hint="placeholders: " + ", ".join(f"{{{k}}}" for k in sorted(fields))) from None
    return prefix + command


def figure(spec: UserBenchmark, output: str) -> float | None:
    match = re.search(spec.regex, output, re.M)
    if match is None:
        return None
    try:
        return float(match.group(1))
    except ValueError:
        return None


def run_step(fleet: Fleet, plan: SmokePlan, spec: UserBenchmark, hosts: list[str], gpus: int = 0,
             shape: str | None = None) -> BenchmarkStep:
    """One step: launch, collect, cut out the figure(s). Processes end by the step's timeout or the finally.
    ``gpus`` is the step's GPUs per node ({gpus}); ``shape`` names a NODESxGPUS step."""
    runners = hosts if spec.launcher in ("ssh", "torchrun") else hosts[:1]
    procs = []
    try:
        for host in runners:
            command = render(spec, _fields(plan, hosts, host, gpus))
            procs.append((host, fleet[host].start(["sh", "-c", command], spec.timeout_s)))
        for _, proc in procs:
            proc.started()
        outputs: dict[str, Completed] = {host: proc.wait() for host, proc in procs}
    except MeasurementError as exc:
        return BenchmarkStep(len(hosts), hosts, None, {}, exc.message, shape=shape)
    finally:
        stop_unfinished([p for _, p in procs])
    per_node: dict[str, float] = {}
    problems = []
    for host, done in outputs.items():
        value = figure(spec, done.stdout)
        if value is None:
            tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
            problems.append(f"{host}: exit {done.rc}, no match for {spec.regex!r} ({shlex.quote(tail[0])[:160]})")
        else:
            per_node[host] = value
    if problems:
        return BenchmarkStep(len(hosts), hosts, None, per_node, "; ".join(problems), shape=shape)
    value = sum(per_node.values()) if spec.launcher == "ssh" else per_node[hosts[0]]
    return BenchmarkStep(len(hosts), hosts, value, per_node, shape=shape)


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


def steps(plan: SmokePlan) -> int:
    """The progress steps the phase counts for ``plan``: one per benchmark step."""
    return len(plan.benchmark.steps) if plan.benchmark else 0


def measure(run: SmokeRun) -> None:
    """The benchmark phase of a smoke run (``run``: racfg.smoke.run_state's)."""
    plan = run.plan
    if plan.benchmark is None:
        return
    spec = plan.benchmark.spec
    if spec.gpus:
        absent = _without_gpus(run, spec.name)
        if absent is not None:
            run.results.append(absent)
            return
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


def _without_gpus(run: SmokeRun, name: str) -> Result | None:
    """The benchmark's clients without their GPUs: why it does not run (racfg.smoke.gpu_presence)."""
    plan = run.plan.benchmark
    nodes = [shape_of(p, plan.gpus_per_node)[0] for p in plan.steps] if plan else []
    names = run.plan.client_hosts[:max(nodes, default=0)]
    _, missing, required = gpus_of(run, [h for h in run.cluster.hosts if h.name in names])
    return gpus_missing(missing, required, f"benchmark/{name}/run", "benchmark", f"benchmark {name}")


def _bench_step(run: SmokeRun, hosts: list[str], gpus: int, shape: str | None) -> BenchmarkStep:
    assert run.plan.benchmark is not None
    started = time.monotonic()
    step = run_step(run.fleet, run.plan, run.plan.benchmark.spec, hosts, gpus, shape)
    step.seconds = time.monotonic() - started
    return step


def _margin(plan: SmokePlan, refs: dict, base: float | None, step: BenchmarkStep) -> float:
    return step_margin(refs, base, step, plan.scaling_floor)


# The phase's pure verdicts: plain data in (racfg.smoke.measured, the plan), results out.
VERDICTS = (step_result, equivalence_result, equivalence_unrun)
