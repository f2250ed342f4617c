"""`racfg validate`: render the site, run validators/ through pytest's API, fold the results.

The rendered inventory is written into the run record (``.racfg/runs/<ts>-validate/inventory``)
and is what the validators are parametrised from, so a person can re-run exactly those checks
with ``pytest validators/ --rendered .racfg/runs/<ts>-validate/inventory``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.errors import UsageError
from racfg.intent import site_intent
from racfg.intent.fabric_outline import fabric_outline
from racfg.inventory import Cluster
from racfg.paths import validators_dir
from racfg.render import write_rendered
from racfg.results import Report, Result
from racfg.run_record import RunRecord
from racfg.slurm.node_step import read_nodes
from racfg.validate import CATEGORIES
from racfg.validate.collector import ResultCollector, check_id
from racfg.validate.context import ContextPlugin, RenderedSite, ValidateContext
from racfg.validate.diagnosis import diagnose, plan_cables
from racfg.validate.fabric_checks import fabric_results
from racfg.validate.fabric_diagnosis import plan_isls
from racfg.validate.transport import COMMAND_TIMEOUT

READ_VIA = ("ssh", "slurm")


@dataclass
class ValidateOptions:
    limit: str | None = None  # hosts, switches or groups (dgx, storage, switches), comma separated
    checks: list[str] = field(default_factory=list)  # globs on check ids
    categories: list[str] = field(default_factory=list)
    deep: bool = False  # the GPU checks run DCGM's level-2 diagnostic (minutes) instead of level 1
    read_via: str = "ssh"  # "slurm": every host's read as one Slurm job step per partition (issue 55)


def select(cluster: Cluster, limit: str | None) -> tuple[list[str] | None, list[str] | None]:
    """--limit as Ansible reads it (names and groups, comma or colon separated) -> hosts, switches."""
    if not limit:
        return None, None
    tokens = {t.strip() for part in limit.split(",") for t in part.split(":")} - {""}
    hosts, switches = [], []
    for token in sorted(tokens):
        matched = False
        for h in cluster.hosts:
            if token in ("all", "cluster", h.role) or fnmatch.fnmatch(h.name, token):
                hosts.append(h.name)
                matched = True
        for name in cluster.switches:
            if token in ("all", "switches") or fnmatch.fnmatch(name, token):
                switches.append(name)
                matched = True
        if not matched:
            raise UsageError(f"--limit {token}: no host, switch or group of site {cluster.name} matches",
                             hint="groups: dgx, storage, cluster, switches, all")
    return sorted(set(hosts)), sorted(set(switches))


class _Filter:
    """Deselects items by --check globs and --category before they run."""

    def __init__(self, options: ValidateOptions) -> None:
        self.options = options

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        keep, drop = [], []
        for item in items:
            _, cid, category = check_id(item)
            ok = (not self.options.categories or category in self.options.categories) and (
                not self.options.checks or any(fnmatch.fnmatch(cid, g) for g in self.options.checks))
            (keep if ok else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


def run_checks(ctx: ValidateContext, options: ValidateOptions,
               on_result: Callable[[Result], None] | None = None) -> list[Result]:
    """Run validators/ with a prepared context through pytest's API; one Result per check."""
    collector = ResultCollector(on_result)
    vdir = validators_dir()
    # no terminal output, no output capture (validate may run in a thread beside other work, and
    # pytest's fd-level capture would swallow their output), no cache written next to validators/
    args = [str(vdir), "-c", str(vdir / "pytest.ini"), "--rootdir", str(vdir), "-p", "no:terminal",
            "-p", "no:cacheprovider", "--capture=no", "-p", "no:faulthandler"]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        code = pytest.main(args, plugins=[ContextPlugin(ctx), collector, _Filter(options)])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        raise RuntimeError(f"the validators did not run (pytest exit {int(code)}): {sink.getvalue().strip()[-500:]}")
    return collector.results


def run_validate(cluster: Cluster, options: ValidateOptions, overrides: ConnectionOverrides = NO_OVERRIDES, *,
                 on_result: Callable[[Result], None] | None = None,
                 on_progress: Callable[[str, str], None] | None = None,
                 switches_read: Callable[[], dict[str, Any]] | None = None,
                 rendered: Path | None = None) -> tuple[Report, RunRecord]:
    """Run every selected check; returns the report (also kept in the run record).

    ``switches_read``: the switches as the caller read them already (ValidateContext.switches_read);
    ``rendered``: the inventory the caller rendered already in this run (drift renders once)."""
    for category in options.categories:
        if category not in CATEGORIES:
            raise UsageError(f"--category {category}: unknown", hint="categories: " + ", ".join(CATEGORIES))
    if options.read_via not in READ_VIA:
        raise UsageError(f"validate: --read-via {options.read_via}: unknown", hint="one of: " + ", ".join(READ_VIA))
    if options.read_via == "slurm" and cluster.inventory.scheduler is None:
        raise UsageError(f"validate: --read-via slurm: site {cluster.name} declares no scheduler",
                         hint="declare scheduler: {type: slurm, controller, partitions} (docs/gate.md), "
                              "or read over SSH (the default)")
    hosts, switches = select(cluster, options.limit)
    start = time.monotonic()
    record = RunRecord.create("validate")
    if rendered is None:
        rendered = record.path / "inventory"
        write_rendered(cluster, rendered, inventory_only=True)
    ctx = ValidateContext(RenderedSite.load(rendered), inventory_display=cluster.display, overrides=overrides,
                          hosts_selected=hosts, switches_selected=switches, on_progress=on_progress,
                          switches_read=switches_read)
    if options.read_via == "slurm":
        ctx.read_through = partial(read_nodes, cluster, overrides, timeout=COMMAND_TIMEOUT)
    if options.deep:  # read by validators/test_gpu.py (its COMMANDS and checks)
        ctx.site.group_vars["racfg_validate_deep"] = True
    results = run_checks(ctx, options, on_result)
    fabric = fabric_results(cluster, ctx.switch_facts, ctx.switch_names, options.checks, options.categories)
    for result in fabric:
        if on_result:
            on_result(result)
    results += fabric
    checked = time.monotonic()
    problems, results = diagnose(results, plan_cables(ctx.site.switches), plan_isls(site_intent(cluster)))
    report = Report("validate", cluster.name, results, elapsed=time.monotonic() - start,
                    meta=_meta(cluster, record, overrides, options), problems=problems)
    report.meta["diagnosis_seconds"] = round(time.monotonic() - checked, 4)
    report.meta["reads"] = {**(ctx.reads.as_dict() if ctx.reads else {"via": "ssh"}),
                            "read_seconds": round(ctx.read_seconds, 3)}
    if ctx.reads is not None:
        report.notes.append(ctx.reads.describe())
    if overrides.substitutions:
        report.notes += [f"{overrides.provider}: {s}" for s in overrides.substitutions]
    record.write_json("results.json", report.as_dict())
    return report, record


def _meta(cluster: Cluster, record: RunRecord, overrides: ConnectionOverrides,
          options: ValidateOptions) -> dict[str, Any]:
    return {"inventory": cluster.display, "run": str(record.path), "provider": overrides.provider or None,
            "limit": options.limit, "checks": options.checks or None, "categories": options.categories or None,
            "fabric": fabric_outline(site_intent(cluster))}
