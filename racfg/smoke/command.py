"""One smoke run: plan, lock, connect, measure phase by phase, judge, plot, record.

The site's deploy lock is held for the whole measurement, so a deploy cannot change the cluster
under a measurement (and smoke refuses to start while a deploy runs). Every remote process is
bounded and stopped on the way out, whatever ends the run (an error, a lost host, Ctrl-C).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.inventory.cluster import Cluster
from racfg.locking import site_lock
from racfg.paths import state_dir
from racfg.policy.budget import bandwidth_budget
from racfg.results import Report, Result, Status
from racfg.smoke import benchmark as bench
from racfg.smoke import fio, nccl, perftest, plots
from racfg.smoke.errors import MeasurementError
from racfg.smoke.judge import (
    LinkMeasurement,
    StepMeasurement,
    counter_results,
    equivalence_result,
    judge_scaling,
    link_result,
    outlier_results,
    reference_result,
    step_capacity,
)
from racfg.smoke.metrics import metric, reference_bounds
from racfg.smoke.plan import SmokePlan, build_plan, shape_of
from racfg.smoke.probes import Probes, StepProbe, SwitchCounters
from racfg.smoke.remote import Fleet
from racfg.smoke.tcp import plan_flows, run_load
from racfg.smoke.units import bytes_rate_text, rate_text

PHASES = ("links", "scaling", "storage", "rdma", "benchmark", "nccl")
Progress = Callable[[int, int, str], None]  # (done, total, what now)


@dataclass
class SmokeOptions:
    hosts: list[str] | None = None  # dgx hosts to measure (default all)
    skip: frozenset[str] = frozenset()
    progress: Progress | None = None


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
        if self.options.progress:
            self.options.progress(self.done, self.total, text)
        self.done += 1


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
        lock = site_lock(state_dir() / "locks", cluster.name, "deploy", holder="smoke")
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
    report.notes = list(plan.notes)
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


def _load(run: _Run, label: str, clients: list, direction: str):
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
    for link in run.plan.clients:
        for direction in ("read", "write"):
            run.tick(f"link {direction} {link.key}")
            load, probe = _load(run, f"link/{direction}/{link.key}", [link], direction)
            measurement = LinkMeasurement(link, direction, load, probe)
            run.links.append(measurement)
            run.results.append(link_result(run.plan, measurement))
    run.results += outlier_results(run.plan, run.links)
    rows = [{"link": m.link.key, "direction": m.direction, "share": m.share, "ceiling": m.link.tcp_ceiling,
             "measured_text": rate_text(m.bits)} for m in run.links]
    outliers = {r.check.split("/", 1)[1].replace("/", ":", 1) for r in run.results
                if r.check.startswith("outlier/") and r.status is Status.FAIL}
    if rows:
        path = plots.plot_links(run.out_dir / "links.png", run.plan.site, rows, run.plan.saturation_floor, outliers)
        run.attachments.append(str(path))


def _predicted(plan: SmokePlan, hosts: list[str]) -> float:
    """The budget's view of a step: client links, storage links (both at its NIC efficiency), storage nodes."""
    eff = plan.budget.nic_efficiency
    clients = sum(link.rate_mbit for host in hosts for link in plan.links_of(host)) * 1e6 * eff
    storage_links = sum(s.rate_mbit for s in plan.storage) * 1e6 * eff
    storage_nodes = len(plan.storage_hosts) * plan.budget.storage_node_gbytes_per_s * 8e9
    return min(clients, storage_links, storage_nodes)


def _scaling(run: _Run) -> None:
    plan = run.plan
    steps = []
    for n in plan.steps:
        hosts = plan.client_hosts[:n]
        clients = [link for host in hosts for link in plan.links_of(host)]
        run.tick(f"scaling: {n} client(s)")
        reuse = next((m for m in run.links if n == 1 and len(clients) == 1 and m.link == clients[0]
                      and m.direction == "read"), None)
        if reuse is not None:
            load, probe = reuse.load, reuse.probe
        else:
            load, probe = _load(run, f"scaling/{n}", clients, "read")
        steps.append(StepMeasurement(n, hosts, load, _predicted(plan, hosts), probe,
                                     capacity_bits=step_capacity(plan, hosts)))
    verdict, results = judge_scaling(plan, steps)
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
    run.tick(f"storage: fio on {targets[0].host}")
    single = fio.run_fio(run.fleet, targets[:1], plan.fio_runtime_s)
    run.tick(f"storage: fio on {len(targets)} {side} hosts at once")
    together = fio.run_fio(run.fleet, targets, plan.fio_runtime_s) if len(targets) > 1 else single
    refs = plan.references.get(key, {})
    for label, runs in (("one", single), ("all", together)):
        n = len(runs)
        failed = [r for r in runs if r.result is None]
        if failed:
            run.results.append(Result(failed[0].target.host, f"storage/{label}", "storage", Status.ERROR,
                                      f"fio failed on {failed[0].target.host}: {failed[0].error}"))
            continue
        seq = sum(r.seq_bytes_per_s for r in runs)
        iops = sum(r.rand_iops for r in runs)
        message = (f"{what}, {n} host(s) at once: sequential 1 MiB reads {bytes_rate_text(seq)}, "
                   f"4 KiB random reads {iops:,.0f} IOPS")
        data = {"side": side, "hosts": [r.target.host for r in runs], "seq_bytes_per_s": round(seq),
                "rand_iops": round(iops), "per_host": {r.target.host: {"seq_bytes_per_s": round(r.seq_bytes_per_s),
                                                                       "rand_iops": round(r.rand_iops)} for r in runs},
                "metrics": [metric(f"storage.{side}.seq.n{n}", seq / 1e9, "GB/s"),
                            metric(f"storage.{side}.randiops.n{n}", iops, "IOPS")]}
        ref = refs.get(n)
        if ref is None and side == "client" and n == 1:
            from racfg.inventory.model import Reference

            ref = Reference(value=run.cluster.inventory.acceptance.client_storage_gbytes_per_s, unit="GB/s")
        reason = (f"no acceptance.references.{key} for {n} node(s)" if side == "client" else
                  f"a drive-side figure (no shared filesystem mounted); give acceptance.references.{key} to judge it")
        run.results.append(reference_result(f"{side}s" if n > 1 else runs[0].target.host, f"storage/{side}/n{n}",
                                            "storage", seq / 1e9, "GB/s", ref, message, data, reason))
        iops_ref = plan.references.get("fio_randread_iops", {}).get(n) if side == "client" else None
        if iops_ref is not None:
            run.results.append(reference_result(f"{side}s" if n > 1 else runs[0].target.host,
                                                f"storage/{side}/iops/n{n}", "storage", iops, "IOPS", iops_ref,
                                                message, {"rand_iops": round(iops)}, ""))
        if len(targets) == 1:
            break


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
            result = perftest.run_perftest(run.fleet, tool, link, dev, target, storage_dev[target.key] or "",
                                           plan.duration_s)
            share = result.average_gbits * 1000 / link.rate_mbit
            ok = share >= plan.saturation_floor
            run.results.append(Result(
                link.key, f"rdma/{tool}/{link.key}", "rdma", Status.PASS if ok else Status.FAIL,
                f"{tool} {dev} <- {target.host}: {result.average_gbits:.2f} Gb/s = {share:.1%} of line rate",
                f">= {plan.saturation_floor:.0%} of {rate_text(link.rate_mbit * 1e6)}",
                f"{result.average_gbits:.2f} Gb/s", data={**result.as_dict(), "metrics": [
                    metric(f"rdma.{tool}.{link.key}", result.average_gbits, "Gb/s")]}))


def _benchmark(run: _Run) -> None:
    plan = run.plan
    if plan.benchmark is None:
        return
    spec = plan.benchmark.spec
    all_steps = []
    for planned in plan.benchmark.steps:
        n, gpus = shape_of(planned, plan.benchmark.gpus_per_node)
        hosts = plan.client_hosts[:n]
        shape = planned if isinstance(planned, str) else None
        run.tick(f"benchmark {spec.name}: {shape or n} node(s)")
        started = time.monotonic()
        step = bench.run_step(run.fleet, plan, spec, hosts, gpus, shape)
        step.seconds = time.monotonic() - started
        all_steps.append(step)
    refs = plan.references.get(spec.name, {})
    steps = [s for s in all_steps if s.shape is None]  # whole-node steps: their scaling is judged
    base = next((s.value for s in steps if s.n == 1 and s.value), None)
    for step in all_steps:
        check = f"benchmark/{spec.name}/{step.label}"
        what = f"{step.shape} (nodes x GPUs)" if step.shape else f"{step.n} node(s)"
        if step.value is None:
            run.results.append(Result("cluster", check, "benchmark", Status.ERROR,
                                      f"{spec.name} on {what}: {step.error}", seconds=step.seconds))
            continue
        eff = step.value / (step.n * base) if base and step.shape is None else None
        message = (f"{spec.name} on {what} via {spec.launcher}: {step.value:.4g} {spec.unit}"
                   + (f", E = {eff:.3f}" if eff is not None else ""))
        data = {"nodes": step.n, "shape": step.shape, "hosts": step.hosts, "value": step.value,
                "per_node": step.per_node, "efficiency": eff,
                "metrics": [metric(f"benchmark.{spec.name}.{step.label}", step.value, spec.unit)]}
        ref = refs.get(step.shape or step.n)
        result = reference_result("cluster", check, "benchmark", step.value, spec.unit, ref, message,
                                  data, f"no acceptance.references.{spec.name} for {step.shape or step.n}")
        if result.status is Status.SKIP and eff is not None:  # no reference: its scaling is still judged
            ok = eff >= plan.scaling_floor
            result = Result(result.target, check, "benchmark", Status.PASS if ok else Status.FAIL,
                            f"{message} (no reference for {step.n} node(s): judged on scaling, "
                            f"E >= {plan.scaling_floor:g})", f"E({step.n}) >= {plan.scaling_floor:g}",
                            f"E({step.n}) = {eff:.3f}", data=data)
        run.results.append(replace(result, seconds=step.seconds))
    by_shape = {s.shape: s.value for s in all_steps if s.shape}
    for group in spec.equivalent:
        values = {shape: by_shape.get(shape) for shape in group.shapes}
        if any(shape not in by_shape for shape in group.shapes):
            run.results.append(Result("cluster", f"benchmark/{spec.name}/equivalent/{'='.join(group.shapes)}",
                                      "benchmark", Status.SKIP, "not every shape ran (more nodes than clients): "
                                      + ", ".join(s for s in group.shapes if s not in by_shape)))
            continue
        run.results.append(equivalence_result(spec.name, spec.unit, group.band, values))
    good = [s for s in steps if s.value is not None]
    if len(good) > 1:
        reference = [(n, r.value, *reference_bounds(r)) for n, r in sorted(
            (k, v) for k, v in refs.items() if isinstance(k, int)) if n in {s.n for s in good}]
        eff_knee = next((s.n for s in good if base and s.value / (s.n * base) < plan.scaling_floor), None)
        path = plots.plot_scaling(run.out_dir / "benchmark.png", f"{plan.site}: benchmark {spec.name} per node count",
                                  [s.n for s in good], [s.value or 0.0 for s in good], spec.unit or "figure",
                                  plan.scaling_floor, None, eff_knee, reference)
        run.attachments.append(str(path))


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
