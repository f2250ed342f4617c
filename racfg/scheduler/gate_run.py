"""``racfg gate``: read the site (drift's read layers, which run validate's checks as their state
layer; with ``performance`` also drift's quick performance layer), decide each node
(racfg.scheduler.gate_plan) and, unless it is a dry run, drain and resume through Slurm.

Slurm is asked first: a controller that cannot be reached stops the run (exit 3) before the site is
read. Each drain or resume is one ``scontrol update``; one that fails is reported and the others
still run (exit 3). The plan and what was done are kept beside drift's record as ``gate.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racfg.connection import ConnectionOverrides
from racfg.drift.drift_run import READ_LAYERS, DriftOptions, run_drift
from racfg.errors import ExitCode
from racfg.inventory import Cluster
from racfg.inventory.partitions import partition_hosts
from racfg.scheduler.gate_plan import Action, GatePlan, plan_gate
from racfg.scheduler.node_health import site_health
from racfg.slurm.client import SlurmError, controller_slurm


@dataclass
class GateOptions:
    max_drain: float | None = None  # None: scheduler.max_drain
    dry_run: bool = False
    performance: bool = False
    forks: int = 20


@dataclass
class GateRun:
    plan: GatePlan
    slurm: str  # where Slurm was asked
    dry_run: bool
    elsewhere: list[str]  # findings on no node
    drift_exit: int
    record: Path
    done: list[str] = field(default_factory=list)  # "drain dgx01", "resume dgx02"
    failed: list[str] = field(default_factory=list)  # what Slurm refused, with its reason

    def exit_code(self) -> ExitCode:
        code = self.plan.exit_code()
        if self.failed and code is ExitCode.OK:
            return ExitCode.CANNOT_RUN
        return code

    def as_dict(self) -> dict[str, Any]:
        return {"slurm": self.slurm, "dry_run": self.dry_run, "max_drain": self.plan.max_drain,
                "exit_code": int(self.exit_code()), "drift_exit_code": self.drift_exit, "run": str(self.record),
                "nodes": [d.as_dict() for d in self.plan.decisions],
                "breaker": [{"partition": t.partition, "size": t.size, "cap": t.cap, "kept": list(t.kept),
                             "would_drain": list(t.would_drain), "message": t.sentence()} for t in self.plan.trips],
                "elsewhere": self.elsewhere, "done": self.done, "failed": self.failed}


def run_gate(cluster: Cluster, options: GateOptions, overrides: ConnectionOverrides,
             progress: Callable[[str], None] | None = None) -> GateRun:
    scheduler = cluster.inventory.scheduler
    share = options.max_drain if options.max_drain is not None else (scheduler.max_drain if scheduler else 0.10)
    with controller_slurm(cluster, overrides) as slurm:
        slurm.nodes()  # reachable, and slurmctld answers: else exit 3 before the site is read
        layers = (*READ_LAYERS, "performance") if options.performance else READ_LAYERS
        drift = run_drift(cluster, DriftOptions(forks=options.forks, quick=True), overrides, progress, layers=layers)
        health = site_health(cluster, drift.report)
        # read again right before acting: a drain someone set while the site was read is theirs
        plan = plan_gate(partition_hosts(cluster), health.nodes, slurm.nodes(), share)
        run = GateRun(plan, slurm.where, options.dry_run, health.elsewhere, int(drift.report.exit_code()),
                      drift.record.path)
        if not options.dry_run:
            for decision in plan.of(Action.DRAIN, Action.RESUME):
                try:
                    if decision.action is Action.DRAIN:
                        slurm.drain(decision.node, decision.reason or "")
                    else:
                        slurm.resume(decision.node)
                    run.done.append(f"{decision.action} {decision.node}")
                except SlurmError as exc:
                    run.failed.append(f"{decision.action} {decision.node}: {exc}")
    drift.record.write_json("gate.json", run.as_dict())
    return run
