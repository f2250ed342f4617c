"""One smoke run: plan, lock, connect, measure phase by phase (racfg.smoke.phase_table), judge, record.

The site's deploy lock is held for the whole measurement, so a deploy cannot change the cluster
under a measurement (and smoke refuses to start while a deploy runs). Every remote process is
bounded and stopped on the way out, whatever ends the run (an error, a lost host, Ctrl-C).
"""

from __future__ import annotations

import hashlib
import json
import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from racfg import __version__
from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.history.figure_trends import site_trends
from racfg.intent import site_intent
from racfg.intent.fabric_outline import fabric_outline
from racfg.inventory.cluster import Cluster
from racfg.lock.local import site_change_lock
from racfg.paths import state_dir
from racfg.policy.budget import bandwidth_budget
from racfg.results import Report
from racfg.smoke.counter_verdicts import counter_results
from racfg.smoke.launch import launched
from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.peer_stragglers import peer_heatmap, straggler_results
from racfg.smoke.phase_table import PHASES, count_steps, measure_phases
from racfg.smoke.probes import Probes, SwitchCounters
from racfg.smoke.remeasure import remeasure_notes
from racfg.smoke.remote import Fleet
from racfg.smoke.run_state import SmokeOptions, SmokeRun
from racfg.smoke.smoke_plan import SmokePlan, brief_plan, build_plan

__all__ = ["PHASES", "SmokeOptions", "run_smoke"]  # what the smoke and demo commands import from here


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
    if options.brief:
        plan = brief_plan(plan)
    report = Report(command="smoke", site=cluster.name)
    started = time.monotonic()
    with _measuring_lock(cluster, overrides):
        hosts = [h for h in cluster.hosts if h.name in {*plan.client_hosts, *plan.storage_hosts}]
        with Fleet(hosts, overrides) as fleet, launched(cluster, overrides, [h.name for h in hosts]) as launch:
            fleet.launch = launch
            plan = _nic_rates(plan, fleet)
            switches = SwitchCounters(cluster, overrides, {link.switch for link in [*plan.clients, *plan.storage]})
            switches.open()
            try:
                if plan.routed:  # which uplinks are down before any load: a leaf that lost one is the first suspect
                    plan = replace(plan, uplinks_down=switches.ports_down([(u.leaf, u.port) for u in plan.uplinks]))
                run = SmokeRun(cluster, plan, fleet, Probes(fleet, switches, [h.name for h in hosts]), out_dir, options,
                           count_steps(plan, options.skip))
                measure_phases(run)
                ports = {(link.switch, link.port): link for link in [*plan.clients, *plan.storage] if link.port}
                run.results += counter_results(run.probed, switches.problem, ports)
            finally:
                switches.close()
        if options.progress:
            options.progress(run.total, run.total, "done")
    # each figure against its peers'
    report.results = run.results + straggler_results(run.results, cluster.inventory.acceptance.noise.by_kind())
    report.attachments = run.attachments
    report.elapsed = time.monotonic() - started
    report.meta = _meta(cluster, plan)
    report.meta["remeasure"] = options.remeasure
    report.meta["launch"] = launch.as_dict()
    # a full run? (a baseline's)
    report.meta["options"] = {"skip": sorted(options.skip), "hosts": options.hosts, "brief": options.brief}
    report.meta["peer_heatmap"] = peer_heatmap(run.results)
    report.meta["trends"] = site_trends(state_dir() / "runs", cluster.name, run.results)
    report.notes = [*plan.notes, launch.describe(), *remeasure_notes(run.results)]
    return report


def inventory_digest(cluster: Cluster) -> str:
    """sha256 of the inventory as racfg reads it (validated, values left at their defaults left out): a
    comment or a reordered key leaves it alone, a changed value does not, and neither does a racfg that
    adds a setting the inventory does not give. A performance baseline keeps it as a condition."""
    text = json.dumps(cluster.inventory.model_dump(mode="json", exclude_defaults=True), sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


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


def _meta(cluster: Cluster, plan: SmokePlan) -> dict:
    return {
        "inventory": cluster.display, "inventory_digest": inventory_digest(cluster), "racfg_version": __version__,
        "lab": plan.lab, "duration_s": plan.duration_s, "omit_s": plan.omit_s,
        "fio_runtime_s": plan.fio_runtime_s, "steps": plan.steps,
        "links": {link.key: {"rate_mbit": link.rate_mbit, "rate_source": link.rate_source, "mtu": link.mtu,
                             "tcp_ceiling": round(link.tcp_ceiling, 5), "processes": plan.processes_for(link)}
                  for link in plan.clients},
        "storage_links": {link.key: {"rate_mbit": link.rate_mbit, "rate_source": link.rate_source}
                          for link in plan.storage},
        "budget": bandwidth_budget(cluster).as_dict(),
        "fabric": fabric_outline(site_intent(cluster)),
    }

