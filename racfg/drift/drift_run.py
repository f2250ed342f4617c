"""`racfg drift`: what changed since the last good state, on three layers at once, read-only; a fourth,
performance, on request.

- config: what a deploy would change now (racfg.drift.config: the roles' own reads, or with
  ``--full-check`` site.yml in check + diff mode), per host and switch, with diffs;
- state: the validate checks that fail now;
- environment: the hosts' and switches' facts now against the baseline of the last good deploy
  (or the last ``--accept``).
state runs beside config (the config run on the main thread, which owns signal handling).
environment follows config: the config run reads the facts now as it goes (its common probe
reads each host's baseline document), and each switch is read once for all three layers, so only
what it could not read is read again. Drift takes the site lock as a reader: it refuses while a
deploy runs, and never blocks another drift.
- performance (``--performance``, it loads the fabric): the site's performance baseline measured
  now (racfg.drift.performance_layer), after the other three, whose findings name each drop's cause.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racfg.baseline.collect import collect_facts
from racfg.baseline.store import commit_baseline, list_baselines, load_baseline, read_facts_dir
from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.deploy.switch_read import SwitchesRead, read_switches
from racfg.drift.config import ANSIBLE_STOPPED, FactsRead, config_layer, deploy_fix
from racfg.drift.environment import Change, host_changes, switch_changes
from racfg.drift.fabric_environment import fabric_changes, fabric_view
from racfg.drift.performance_layer import performance_layer
from racfg.intent import site_intent
from racfg.intent.fabric_outline import fabric_outline
from racfg.inventory import Cluster
from racfg.lock.local import site_change_lock
from racfg.render import write_rendered
from racfg.render.connection_options import connection_options
from racfg.results import Report, Result, Status
from racfg.run_record import RunRecord

Progress = Callable[[str], None]
READ_LAYERS = ("config", "state", "environment")  # read-only; "performance" loads the fabric, on request
LAYERS = (*READ_LAYERS, "performance")


@dataclass
class DriftOptions:
    limit: str | None = None
    baseline_id: str | None = None
    forks: int = 20
    # the config layer as a check-mode run of every role instead of the roles' reads (racfg.drift.config)
    full_check: bool = False
    quick: bool = False  # the performance layer's brief form (racfg.drift.performance_layer)


@dataclass
class DriftRun:
    """A drift run's report, its record, and the facts read now (what ``--accept`` would keep)."""

    report: Report
    record: RunRecord
    facts_now: Path | None = None
    changes: list[Change] = field(default_factory=list)

# --- state -------------------------------------------------------------------------------------

def state_layer(cluster: Cluster, options: DriftOptions, overrides: ConnectionOverrides,
                switches: Callable[[], SwitchesRead] | None = None, rendered: Path | None = None) -> list[Result]:
    """validate's checks; a failing one is state drift. ``switches``: the run's one read of them;
    ``rendered``: its one render of the inventory."""
    from racfg.validate.validate_run import ValidateOptions, run_validate

    report, _ = run_validate(cluster, ValidateOptions(limit=options.limit), overrides,
                             switches_read=(lambda: switches().for_validate()) if switches else None,
                             rendered=rendered)
    out = []
    for r in report.results:
        target, _, rest = r.check.partition("/")
        data = {**r.data, "sign": "~", "validate_check": r.check}
        problem = report.problem_of(r)  # validate's diagnosis: the plan shows problems first
        if problem is not None:
            data["problem"] = {"id": problem.id, "cause": problem.cause, "fix": problem.fix, "root": problem.root}
        message = r.message if r.status is not Status.FAIL else f"{rest}: {r.message}"
        out.append(Result(r.target, f"{target}/state/{rest}", "state", r.status, message, r.expected, r.actual,
                          r.fix, r.seconds, data, cause=r.cause))
    return out


# --- environment -------------------------------------------------------------------------------

def read_facts_now(cluster: Cluster, record: RunRecord, overrides: ConnectionOverrides,
                   forks: int = 20, read: FactsRead | None = None) -> tuple[Path | None, str | None]:
    """Every host's and switch's facts now: ``read`` (what the config layer's run read) and
    whatever it lacks, read here (playbooks/facts.yml for hosts, the drivers for switches), with
    the inventory rendered in ``record`` (run_drift's one render, or this call's)."""
    read = read or FactsRead()
    inventory = rendered_inventory(cluster, record)
    return collect_facts(cluster, inventory / "hosts.yml", connection_options(overrides, cluster.known_hosts_file),
                         record.path / "facts",
                         overrides, forks=forks, host_facts=read.hosts, switch_facts=read.switches)


def rendered_inventory(cluster: Cluster, record: RunRecord) -> Path:
    """The run's rendered inventory, written once: every layer of a drift run reads this one."""
    inventory = record.path / "inventory"
    if not (inventory / "hosts.yml").exists():
        write_rendered(cluster, inventory, inventory_only=True)
    return inventory


def environment_layer(cluster: Cluster, options: DriftOptions, overrides: ConnectionOverrides,
                      record: RunRecord, read: FactsRead | None = None,
                      ) -> tuple[list[Result], Path | None, list[Change], dict[str, Any] | None]:
    baseline = load_baseline(cluster.name, options.baseline_id)
    facts_dir, error = read_facts_now(cluster, record, overrides, options.forks, read)
    if facts_dir is None:
        return [Result("cluster", "cluster/environment/facts", "environment", Status.ERROR,
                       f"facts could not be read now: {error}")], None, [], baseline
    now = read_facts_dir(facts_dir)
    if baseline is None:
        return [Result("cluster", "cluster/environment/baseline", "environment", Status.SKIP,
                       "no baseline yet: a full, successful `racfg deploy` records one, or accept the current "
                       f"facts with `racfg drift {cluster.display} --accept`")], facts_dir, [], None
    from racfg.validate.validate_run import select

    hosts, switches = select(cluster, options.limit)
    meta = baseline["meta"]
    since = f"since {str(meta.get('recorded', '?'))[:16].replace('T', ' ')} ({meta.get('source') or meta.get('id')})"
    changes: list[Change] = []
    results: list[Result] = []
    for host in cluster.hosts:
        if hosts is not None and host.name not in hosts:
            continue
        before, after = baseline["hosts"].get(host.name), now["hosts"].get(host.name)
        if before is None:
            results.append(Result(host.name, f"{host.name}/environment/baseline", "environment", Status.SKIP,
                                  "not in the baseline (added to the inventory since): accept it with --accept"))
            continue
        changes += host_changes(host.name, before, after or {})
    fabric = fabric_view(cluster, f"racfg deploy {cluster.display}")
    for name in cluster.switches:
        if switches is not None and name not in switches:
            continue
        before, after = baseline["switches"].get(name), now["switches"].get(name)
        if before is not None and after is not None:
            changes += switch_changes(name, before, after, fabric.isl_ports(name) if fabric else frozenset())
    if fabric is not None:  # ISLs, BGP sessions, routes: compared site-wide to name each change's cause
        changes += fabric_changes(fabric, baseline["switches"], now["switches"], switches)
    for c in changes:
        results.append(Result(
            c.target, f"{c.target}/environment/{c.key}", "environment", Status.FAIL, f"{c.sentence()} {since}",
            expected=c.before, actual=c.after,
            fix=f"racfg drift {cluster.display} --accept (if intended), else "
                f"{c.repair or c.by_hand() or deploy_fix(cluster, c.target)}",
            data={"sign": c.sign}))
    changed = {c.target for c in changes}
    for target in [*(h.name for h in cluster.hosts), *cluster.switches]:
        if target not in changed and ((hosts is None or target in hosts) or (switches and target in switches)):
            results.append(Result(target, f"{target}/environment/facts", "environment", Status.PASS,
                                  f"as in the baseline {meta.get('id')}"))
    return results, facts_dir, changes, baseline


# --- the run -----------------------------------------------------------------------------------

def run_drift(cluster: Cluster, options: DriftOptions, overrides: ConnectionOverrides = NO_OVERRIDES,
              progress: Progress | None = None, *, layers: tuple[str, ...] = READ_LAYERS,
              ) -> DriftRun:
    say = progress or (lambda _text: None)
    start = time.monotonic()
    timings: dict[str, float] = {}

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        t0 = time.monotonic()
        say(f"{name}: started")
        try:
            return fn()
        finally:
            timings[name] = round(time.monotonic() - t0, 2)
            say(f"{name}: done in {timings[name]:.1f} s")

    results: list[Result] = []
    env: tuple[list[Result], Path | None, list[Change], dict[str, Any] | None] = ([], None, [], None)
    reading = bool(set(layers) & set(READ_LAYERS))
    # the read layers under the site lock as a reader (a drift it refuses records nothing); the performance
    # layer after it, under smoke's own hold of the lock
    with site_change_lock(cluster, overrides, shared=True, holder="drift") if reading else nullcontext():
        record = RunRecord.create("drift")
        if reading:
            results, env = _read_layers(cluster, options, overrides, record, layers, timed)
    performance = None
    if "performance" in layers:
        performance = timed("performance", lambda: performance_layer(
            cluster, overrides, record.path / "performance", quick=options.quick, others=results,
            layers_ran=reading, say=say))
        results = [*results, *performance.results]
    baseline = env[3]
    switches = list(cluster.switches)
    report = Report("drift", cluster.name, results, elapsed=time.monotonic() - start, meta={
        "inventory": cluster.display, "run": str(record.path), "layers_seconds": timings, "switches": switches,
        "baseline": (baseline or {}).get("meta", {}).get("id"), "layers": list(layers),
        "baseline_label": _label(baseline), "limit": options.limit, "fabric": fabric_outline(site_intent(cluster)),
    })
    if baseline is None and "environment" in layers:
        report.notes.append("no baseline yet: environment drift needs one (a full, successful deploy records it, "
                            f"or `racfg drift {cluster.display} --accept`)")
    if performance is not None:
        report.meta["performance"] = performance.meta
        report.notes += performance.notes
    report.notes += [f"{overrides.provider}: {s}" for s in overrides.substitutions]
    record.write_json("results.json", report.as_dict())
    return DriftRun(report, record, env[1], env[2])


ReadLayers = tuple[list[Result], tuple[list[Result], Path | None, list[Change], dict[str, Any] | None]]


def _read_layers(cluster: Cluster, options: DriftOptions, overrides: ConnectionOverrides, record: RunRecord,
                 layers: tuple[str, ...], timed: Callable[[str, Callable[[], Any]], Any]) -> ReadLayers:
    """config, state and environment (the caller holds the site lock as a reader); each switch read once
    for all three."""
    rendered = rendered_inventory(cluster, record)
    results: list[Result] = []
    read: FactsRead | None = None
    env: tuple[list[Result], Path | None, list[Change], dict[str, Any] | None] = ([], None, [], None)
    with ThreadPoolExecutor(max_workers=2) as pool:
        # each switch read once, for all three layers (racfg.deploy.switch_read), beside the hosts' probes
        switches_f = pool.submit(timed, "switches", lambda: read_switches(
            cluster, switches_to_read(cluster, options, layers), overrides))
        state_f = pool.submit(timed, "state", lambda: state_layer(
            cluster, options, overrides, switches_f.result, rendered)) if "state" in layers else None
        if "config" in layers:
            config, read = timed("config", lambda: config_layer(
                cluster, options.limit, options.forks, overrides, switches_f.result, rendered,
                full_check=options.full_check))
            results += config
        stopped = any(r.check == ANSIBLE_STOPPED for r in results)  # drift unknown: the error alone
        if "environment" in layers and not stopped:
            read = read or FactsRead()
            read.switches = {**switches_f.result().as_dicts(), **read.switches}
            env = timed("environment", lambda: environment_layer(cluster, options, overrides, record, read))
        if state_f is not None:
            results += [] if stopped else state_f.result()
        results += env[0]
    return results, env


def switches_to_read(cluster: Cluster, options: DriftOptions, layers: tuple[str, ...]) -> list[str]:
    """Every switch when the environment layer runs (its facts now are the whole site's, what
    ``--accept`` keeps); else those the limit selects."""
    from racfg.validate.validate_run import select

    selected = None if "environment" in layers else select(cluster, options.limit)[1]
    return list(cluster.switches) if selected is None else selected


def _label(baseline: dict[str, Any] | None) -> str | None:
    if not baseline:
        return None
    meta = baseline["meta"]
    return f"baseline {meta.get('id')} ({meta.get('source') or 'deploy'}, {str(meta.get('recorded', '?'))[:16]})"


def accept(cluster: Cluster, run: DriftRun) -> Path:
    """Make the facts read by ``run`` the new baseline (the old one goes to the history)."""
    assert run.facts_now is not None
    return commit_baseline(cluster.name, run.facts_now, {"site": cluster.name, "run": str(run.record.path),
                                                         "inventory": str(cluster.path),
                                                         "source": f"drift --accept {run.record.path.name}"})


__all__ = ["DriftOptions", "DriftRun", "accept", "list_baselines", "run_drift"]
