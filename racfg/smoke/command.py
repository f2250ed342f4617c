"""One smoke run: plan, lock, connect, measure phase by phase, judge, plot, record.

The site's deploy lock is held for the whole measurement, so a deploy cannot change the cluster
under a measurement (and smoke refuses to start while a deploy runs). Every remote process is
bounded and stopped on the way out, whatever ends the run (an error, a lost host, Ctrl-C).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.inventory.cluster import Cluster
from racfg.lock.local import site_change_lock
from racfg.policy.budget import bandwidth_budget
from racfg.results import Report, Result, Status
from racfg.smoke import benchmark_phase, fio, nccl, perftest, plots
from racfg.smoke.errors import MeasurementError
from racfg.smoke.judge import phases
from racfg.smoke.judge.counters import counter_results
from racfg.smoke.judge.figures import rdma_result, rdma_share, rdma_unmeasured
from racfg.smoke.judge.links import LinkMeasurement
from racfg.smoke.judge.readings import REMEASURE, Reading, remeasure_notes, with_readings
from racfg.smoke.judge.spine import ecmp_results, spine_tier_result
from racfg.smoke.judge.storage import FioSide, nothing_to_read
from racfg.smoke.links import measure_links
from racfg.smoke.measured import FioTarget, LoadResult, StepProbe
from racfg.smoke.plan import Link, SmokePlan, build_plan
from racfg.smoke.probes import Probes, SwitchCounters
from racfg.smoke.remeasure import until_met
from racfg.smoke.remote import Fleet
from racfg.smoke.scaling import measure_scaling, spine_tier_bits
from racfg.smoke.storage import measure_storage
from racfg.smoke.tcp import fan_in, plan_flows, run_load
from racfg.smoke.units import rate_text

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
    """The progress bar's total: what each phase that runs says it counts (PHASE_TABLE)."""
    return sum(phase.steps(plan) for phase in PHASE_TABLE if phase.name not in skip)


@contextmanager
def _measuring_lock(cluster: Cluster, overrides: ConnectionOverrides) -> Iterator[None]:
    """The site's lock for the whole measurement: a deploy cannot change the cluster under it."""
    try:
        lock = site_change_lock(cluster, overrides, holder="smoke")
        lock.__enter__()
    except CannotRunError as exc:
        raise CannotRunError(f"smoke refused: {exc.message}", hint="a deploy changes the cluster under a "
                             "measurement; wait for it to finish") from None
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


def run_smoke(cluster: Cluster, overrides: ConnectionOverrides, options: SmokeOptions, out_dir: Path) -> Report:
    """Measure the site and return its report (results, series, plots as attachments)."""
    plan = build_plan(cluster, overrides, hosts=options.hosts)
    report = Report(command="smoke", site=cluster.name)
    started = time.monotonic()
    with _measuring_lock(cluster, overrides):
        hosts = [h for h in cluster.hosts if h.name in {*plan.client_hosts, *plan.storage_hosts}]
        with Fleet(hosts, overrides) as fleet:
            plan = _nic_rates(plan, fleet)
            switches = SwitchCounters(cluster, overrides, {link.switch for link in [*plan.clients, *plan.storage]})
            switches.open()
            try:
                if plan.routed:  # which uplinks are down before any load: a leaf that lost one is the first suspect
                    plan = replace(plan, uplinks_down=switches.ports_down([(u.leaf, u.port) for u in plan.uplinks]))
                run = _Run(cluster, plan, fleet, Probes(fleet, switches, [h.name for h in hosts]), out_dir, options,
                           count_steps(plan, options.skip))
                _measure(run)
                ports = {(link.switch, link.port): link for link in [*plan.clients, *plan.storage] if link.port}
                run.results += counter_results(run.probed, switches.problem, ports)
            finally:
                switches.close()
        if options.progress:
            options.progress(run.total, run.total, "done")
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
            speed = shlex.quote(f"/sys/class/net/{link.nic}/speed")
            text = fleet[link.host].run(f"cat {speed} 2>/dev/null", timeout=10).stdout.strip()
        except MeasurementError:
            continue
        if text.isdigit() and 0 < int(text) < 10_000_000:
            rates[link.key] = (float(text), "NIC")
    return plan.with_rates(rates)


def _measure(run: _Run) -> None:
    for phase in PHASE_TABLE:
        if phase.name in run.options.skip:
            continue
        if phase.needs_storage and not run.plan.storage:
            run.results.append(phases.without_storage(phase.name))
            continue
        try:
            phase.measure(run)
        except MeasurementError as exc:
            run.results.append(phases.not_measured(phase.name, exc.message))


def _load(run: _Run, clients: list[Link], direction: str, label: str,
          sources: Mapping[str, Sequence[Link]] | None = None) -> tuple[LoadResult, StepProbe]:
    """One load, with the probes around it (their counters are judged for the whole run)."""
    flows = plan_flows(run.plan, clients, sources)
    probe = run.probes.before()
    probe.fan_in = fan_in(flows, direction)
    load = run_load(run.fleet, flows, direction, run.plan.duration_s, run.plan.omit_s)
    run.probes.after(probe)
    run.probed.append((label, probe))
    return load, probe


def _links(run: _Run) -> None:
    run.results += [phases.unreached_link(link) for link in run.plan.unreached]
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


def _storage(run: _Run) -> None:
    plan = run.plan
    shared = plan.weka_mount or plan.array_mount  # the filesystem the clients read through
    clients_mounted = fio.mounted(run.fleet, plan.client_hosts, shared) if shared else []
    storage = [h for h in run.cluster.role("storage") if h.name in plan.storage_hosts and h.drives]
    cannot = nothing_to_read(plan.array_mount if not plan.weka_mount else None, shared, len(clients_mounted),
                             plan.fio_path, len(storage))
    if cannot is not None:
        run.done += 2
        run.results.append(cannot)
        return
    if clients_mounted:
        targets = [FioTarget(h, [plan.fio_path or ""]) for h in clients_mounted]
        side, key, what = "client", "fio_read_gbytes_per_s", f"fio reading {plan.fio_path} on the clients"
    else:
        targets = [FioTarget(h.name, [d.path for d in h.drives]) for h in storage]
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
            run.results.append(rdma_unmeasured(link, dev is not None))
            continue
        for tool in ("ib_write_bw", "ib_read_bw"):
            run.results.append(_rdma_tool(run, tool, link, dev, target, storage_dev[target.key] or ""))


def _rdma_tool(run: _Run, tool: str, link: Link, dev: str, target: Link, target_dev: str) -> Result:
    """One perftest tool on one link, measured again while below the saturation floor; its best reading decides."""
    floor = run.plan.saturation_floor
    take = partial(perftest.run_perftest, run.fleet, tool, link, dev, target, target_dev, run.plan.duration_s)
    readings = until_met([take()], take, lambda r: rdma_share(link, r) - floor, run.options.remeasure,
                         run.announce, f"rdma {tool} {link.key}")
    best = max(readings, key=partial(rdma_share, link))
    return with_readings(rdma_result(tool, link, dev, target.host, best, floor),
                         [Reading(r.average_gbits, "Gb/s", rdma_share(link, r) - floor, f"{r.average_gbits:.2f} Gb/s")
                          for r in readings], run.options.remeasure)


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


@dataclass(frozen=True)
class Phase:
    """One phase of a smoke run: its name (``--skip``), how many progress steps it counts for a plan,
    what measures it, and whether it loads links from storage hosts (skipped, saying why, without one)."""

    name: str
    steps: Callable[[SmokePlan], int]
    measure: Callable[[_Run], None]
    needs_storage: bool = False


# The phases, in the order they run; the one place that says what a smoke run is made of.
PHASE_TABLE: tuple[Phase, ...] = (
    Phase("links", lambda plan: 2 * len(plan.clients), _links, needs_storage=True),
    Phase("scaling", lambda plan: len(plan.steps), _scaling, needs_storage=True),
    Phase("storage", lambda plan: 2, _storage),
    Phase("rdma", lambda plan: 1, _rdma, needs_storage=True),
    Phase("benchmark", lambda plan: len(plan.benchmark.steps) if plan.benchmark else 0, benchmark_phase.measure),
    Phase("nccl", lambda plan: 0, nccl.measure),  # GPU all-reduce (racfg.smoke.nccl): needs no storage host
)
PHASES = tuple(phase.name for phase in PHASE_TABLE)
