"""One smoke run: plan, lock, connect, measure phase by phase, judge, plot, record.

The site's deploy lock is held for the whole measurement, so a deploy cannot change the cluster
under a measurement (and smoke refuses to start while a deploy runs). Every remote process is
bounded and stopped on the way out, whatever ends the run (an error, a lost host, Ctrl-C).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.inventory.cluster import Cluster
from racfg.locking import site_change_lock
from racfg.policy.budget import bandwidth_budget
from racfg.results import Report, Result, Status
from racfg.smoke import benchmark as bench
from racfg.smoke import fio, nccl, perftest, plots
from racfg.smoke.errors import MeasurementError
from racfg.smoke.judge import (
    REMEASURE,
    LinkMeasurement,
    Reading,
    counter_results,
    deciding_reading,
    equivalence_result,
    reference_result,
    remeasure_notes,
    with_readings,
)
from racfg.smoke.links import measure_links
from racfg.smoke.metrics import metric, reference_bounds, reference_margin
from racfg.smoke.perftest_output import PerftestResult
from racfg.smoke.plan import Link, SmokePlan, build_plan, shape_of
from racfg.smoke.probes import Probes, StepProbe, SwitchCounters
from racfg.smoke.remeasure import until_met
from racfg.smoke.remote import Fleet
from racfg.smoke.scaling import measure_scaling
from racfg.smoke.storage import FioSide, measure_storage
from racfg.smoke.tcp import LoadResult, plan_flows, run_load
from racfg.smoke.units import rate_text

PHASES = ("links", "scaling", "storage", "rdma", "benchmark", "nccl")
Progress = Callable[[int, int, str], None]  # (done, total, what now)


@dataclass
class SmokeOptions:
    hosts: list[str] | None = None  # dgx hosts to measure (default all)
    skip: frozenset[str] = frozenset()
    progress: Progress | None = None
    remeasure: int = REMEASURE  # times an item whose readings all miss their mark is measured again, at most


@dataclass
class _Run:
    cluster: Cluster
    plan: SmokePlan
    fleet: Fleet
    probes: Probes
    out_dir: Path
    options: SmokeOptions
    total: int
    done: int = 0
    results: list[Result] = field(default_factory=list)
    probed: list[tuple[str, StepProbe]] = field(default_factory=list)
    links: list[LinkMeasurement] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)

    def tick(self, text: str) -> None:
        self.announce(text)
        self.done += 1

    def announce(self, text: str) -> None:
        """Progress text for what runs now, a step counted or not (a re-measurement is not one)."""
        if self.options.progress:
            self.options.progress(self.done, self.total, text)


def count_steps(plan: SmokePlan, skip: frozenset[str]) -> int:
    total = 0
    if "links" not in skip:
        total += 2 * len(plan.clients)
    if "scaling" not in skip:
        total += len(plan.steps)
    if "storage" not in skip:
        total += 2
    if "rdma" not in skip:
        total += 1
    if "benchmark" not in skip and plan.benchmark:
        total += len(plan.benchmark.steps)
    return total


def run_smoke(cluster: Cluster, overrides: ConnectionOverrides, options: SmokeOptions, out_dir: Path) -> Report:
    """Measure the site and return its report (results, series, plots as attachments)."""
    plan = build_plan(cluster, overrides, hosts=options.hosts)
    report = Report(command="smoke", site=cluster.name)
    started = time.monotonic()
    try:
        lock = site_change_lock(cluster, overrides, holder="smoke")
        lock.__enter__()
    except CannotRunError as exc:
        raise CannotRunError(f"smoke refused: {exc.message}", hint="a deploy changes the cluster under a "
                             "measurement; wait for it to finish") from None
    try:
        hosts = [h for h in cluster.hosts if h.name in {*plan.client_hosts, *plan.storage_hosts}]
        with Fleet(hosts, overrides) as fleet:
            plan = _nic_rates(plan, fleet)
            switches = SwitchCounters(cluster, overrides, {link.switch for link in [*plan.clients, *plan.storage]})
            switches.open()
            try:
                run = _Run(cluster, plan, fleet, Probes(fleet, switches, [h.name for h in hosts]), out_dir, options,
                           count_steps(plan, options.skip))
                _measure(run)
                ports = {(link.switch, link.port): link.key for link in [*plan.clients, *plan.storage] if link.port}
                run.results += counter_results(run.probed, switches.problem, ports)
            finally:
                switches.close()
        if options.progress:
            options.progress(run.total, run.total, "done")
    finally:
        lock.__exit__(None, None, None)
    report.results = run.results
    report.attachments = run.attachments
    report.elapsed = time.monotonic() - started
    report.meta = _meta(cluster, plan)
    report.meta["remeasure"] = options.remeasure
    report.notes = [*plan.notes, *remeasure_notes(run.results)]
    return report


def _nic_rates(plan: SmokePlan, fleet: Fleet) -> SmokePlan:
    """Links with no provider rate are judged against what their NIC reports, when it reports one."""
    rates = {}
    for link in [*plan.clients, *plan.storage]:
        if link.rate_source != "inventory":
            continue
        try:
            text = fleet[link.host].run(f"cat /sys/class/net/{link.nic}/speed 2>/dev/null", timeout=10).stdout.strip()
        except MeasurementError:
            continue
        if text.isdigit() and 0 < int(text) < 10_000_000:
            rates[link.key] = (float(text), "NIC")
    return plan.with_rates(rates)


def _measure(run: _Run) -> None:
    phases = {"links": _links, "scaling": _scaling, "storage": _storage, "rdma": _rdma, "benchmark": _benchmark}
    phases["nccl"] = nccl.measure  # GPU all-reduce (racfg.smoke.nccl): needs no storage host
    for name in PHASES:
        if name in run.options.skip:
            continue
        if name in ("links", "scaling", "rdma") and not run.plan.storage:
            run.results.append(Result("cluster", f"{name}/run", name, Status.SKIP,
                                      f"{name}: no storage host to load the links from (the external array is "
                                      "not a host smoke can run iperf3 or perftest on)"))
            continue
        try:
            phases[name](run)
        except MeasurementError as exc:
            run.results.append(Result("cluster", f"{name}/run", name, Status.ERROR,
                                      f"{name}: could not measure: {exc.message}"))


def _load(run: _Run, clients: list[Link], direction: str, label: str) -> tuple[LoadResult, StepProbe]:
    """One load, with the probes around it (their counters are judged for the whole run)."""
    probe = run.probes.before()
    load = run_load(run.fleet, plan_flows(run.plan, clients), direction, run.plan.duration_s, run.plan.omit_s)
    run.probes.after(probe)
    run.probed.append((label, probe))
    return load, probe


def _links(run: _Run) -> None:
    for link in run.plan.unreached:
        run.results.append(Result(link.key, f"link/{link.key}", "link saturation", Status.SKIP,
                                  f"not measured: no storage link on its subnet {link.network}; smoke loads a "
                                  "dgx link from the storage links on its own subnet (data subnets are not routed)"))
    run.links, results = measure_links(run.plan, partial(_load, run), run.options.remeasure, run.tick,
                                       run.announce)
    run.results += results
    rows = [{"link": m.link.key, "direction": m.direction, "share": m.share, "ceiling": m.link.tcp_ceiling,
             "measured_text": rate_text(m.bits)} for m in run.links]
    outliers = {r.check.split("/", 1)[1].replace("/", ":", 1) for r in run.results
                if r.check.startswith("outlier/") and r.status is Status.FAIL}
    if rows:
        path = plots.plot_links(run.out_dir / "links.png", run.plan.site, rows, run.plan.saturation_floor, outliers)
        run.attachments.append(str(path))


def _scaling(run: _Run) -> None:
    plan = run.plan
    verdict, results = measure_scaling(plan, partial(_load, run), run.links, run.options.remeasure,
                                       run.tick, run.announce)
    steps = verdict.steps
    run.results += results
    if len(steps) > 1:
        path = plots.plot_scaling(
            run.out_dir / "scaling.png", f"{plan.site}: read scaling (storage -> n clients, iperf3 TCP)",
            [s.n for s in steps], [s.total / 1e6 for s in steps], "Mbit/s", plan.scaling_floor,
            [s.predicted_bits / 1e6 for s in steps], verdict.knee,
            capacity=("storage link capacity", sum(s.rate_mbit for s in plan.storage)))
        run.attachments.append(str(path))


def _storage(run: _Run) -> None:
    plan = run.plan
    shared = plan.weka_mount or plan.array_mount  # the filesystem the clients read through
    clients_mounted = fio.mounted(run.fleet, plan.client_hosts, shared) if shared else []
    if plan.array_mount and not plan.weka_mount and not clients_mounted:
        run.done += 2
        run.results.append(Result("cluster", "storage/fio", "storage", Status.FAIL,
                                  f"the array's export is mounted at {plan.array_mount} on no client",
                                  f"{plan.array_mount} mounted", "not mounted",
                                  fix="racfg deploy --tags nfs_client, then racfg validate"))
        return
    if clients_mounted and not plan.fio_path:
        run.done += 2
        run.results.append(Result("cluster", "storage/fio", "storage", Status.SKIP,
                                  f"{shared} is mounted on {len(clients_mounted)} clients, but "
                                  "acceptance.smoke.fio_path names no file for fio to read (smoke writes nothing)"))
        return
    if clients_mounted:
        targets = [fio.FioTarget(h, [plan.fio_path or ""]) for h in clients_mounted]
        side, key, what = "client", "fio_read_gbytes_per_s", f"fio reading {plan.fio_path} on the clients"
    else:
        storage = [h for h in run.cluster.role("storage") if h.name in plan.storage_hosts and h.drives]
        if not storage:
            run.done += 2
            run.results.append(Result("cluster", "storage/fio", "storage", Status.SKIP,
                                      "no shared filesystem mounted and no storage host declares drives"))
            return
        targets = [fio.FioTarget(h.name, [d.path for d in h.drives]) for h in storage]
        side, key, what = "drive", "fio_drive_read_gbytes_per_s", "drive-side: fio on the storage hosts' drives"
    client_ref = run.cluster.inventory.acceptance.client_storage_gbytes_per_s
    run.results += measure_storage(plan, run.fleet, targets, FioSide(side, key, what, client_ref),
                                   run.options.remeasure, run.tick, run.announce)


def _rdma(run: _Run) -> None:
    plan = run.plan
    run.tick("rdma: perftest")
    storage_dev = {}
    for link in plan.storage:
        storage_dev[link.key] = perftest.rdma_device(run.fleet, link)
    for link in plan.clients:
        dev = perftest.rdma_device(run.fleet, link)
        target = next((s for s in plan.targets_for(link) if storage_dev.get(s.key)), None)
        if dev is None or target is None:
            side = f"{link.key} has no RDMA device" if dev is None else "no storage link with an RDMA device"
            run.results.append(Result(link.key, f"rdma/{link.key}", "rdma", Status.SKIP,
                                      f"RDMA bandwidth not measured: {side} "
                                      f"(/sys/class/net/{link.nic}/device/infiniband)"))
            continue
        for tool in ("ib_write_bw", "ib_read_bw"):
            run.results.append(_rdma_tool(run, tool, link, dev, target, storage_dev[target.key] or ""))


def _rdma_tool(run: _Run, tool: str, link: Link, dev: str, target: Link, target_dev: str) -> Result:
    """One perftest tool on one link, measured again while below the saturation floor; its best reading decides."""
    plan = run.plan

    def share(r: PerftestResult) -> float:
        return r.average_gbits * 1000 / link.rate_mbit

    take = partial(perftest.run_perftest, run.fleet, tool, link, dev, target, target_dev, plan.duration_s)
    readings = until_met([take()], take, lambda r: share(r) - plan.saturation_floor, run.options.remeasure,
                         run.announce, f"rdma {tool} {link.key}")
    result = max(readings, key=share)
    ok = share(result) >= plan.saturation_floor
    return with_readings(Result(
        link.key, f"rdma/{tool}/{link.key}", "rdma", Status.PASS if ok else Status.FAIL,
        f"{tool} {dev} <- {target.host}: {result.average_gbits:.2f} Gb/s = {share(result):.1%} of line rate",
        f">= {plan.saturation_floor:.0%} of {rate_text(link.rate_mbit * 1e6)}",
        f"{result.average_gbits:.2f} Gb/s", data={**result.as_dict(), "metrics": [
            metric(f"rdma.{tool}.{link.key}", result.average_gbits, "Gb/s")]}),
        [Reading(r.average_gbits, "Gb/s", share(r) - plan.saturation_floor, f"{r.average_gbits:.2f} Gb/s")
         for r in readings], run.options.remeasure)


def _benchmark(run: _Run) -> None:
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


def _bench_step(run: _Run, hosts: list[str], gpus: int, shape: str | None) -> bench.BenchmarkStep:
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


def _meta(cluster: Cluster, plan: SmokePlan) -> dict:
    return {
        "inventory": cluster.display, "lab": plan.lab, "duration_s": plan.duration_s, "omit_s": plan.omit_s,
        "fio_runtime_s": plan.fio_runtime_s, "steps": plan.steps,
        "links": {link.key: {"rate_mbit": link.rate_mbit, "rate_source": link.rate_source, "mtu": link.mtu,
                             "tcp_ceiling": round(link.tcp_ceiling, 5), "processes": plan.processes_for(link)}
                  for link in plan.clients},
        "storage_links": {link.key: {"rate_mbit": link.rate_mbit, "rate_source": link.rate_source}
                          for link in plan.storage},
        "budget": bandwidth_budget(cluster).as_dict(),
    }
