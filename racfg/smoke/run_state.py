"""One smoke run as its phases see it: the plan, the sessions, the probes, and what the phases add.

Every phase module's ``measure(run)`` reads the run's plan and sessions here and appends its results,
plots and probed loads; the run's command (racfg.smoke.smoke_run) opens and closes what it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from racfg.inventory.cluster import Cluster
from racfg.results import Result
from racfg.smoke.measured import LinkMeasurement, LoadResult, StepProbe
from racfg.smoke.probes import Probes
from racfg.smoke.remeasure import REMEASURE
from racfg.smoke.remote import Fleet
from racfg.smoke.smoke_plan import Link, SmokePlan
from racfg.smoke.tcp import fan_in, plan_flows, run_load

Progress = Callable[[int, int, str], None]  # (done, total, what now)


class Measure(Protocol):
    """One load of ``clients`` in ``direction`` (``sources``: a batch's storage links per client link)."""

    def __call__(self, clients: list[Link], direction: str, label: str,
                 sources: Mapping[str, Sequence[Link]] | None = None) -> tuple[LoadResult, StepProbe]: ...


@dataclass
class SmokeOptions:
    """What the command line asks of a run: the hosts, the phases skipped, progress, the re-measure limit,
    and whether it is a brief one."""

    hosts: list[str] | None = None  # dgx hosts to measure (default all)
    skip: frozenset[str] = frozenset()
    progress: Progress | None = None
    remeasure: int = REMEASURE  # times an item whose readings all miss their mark is measured again, at most
    brief: bool = False  # every figure briefly (racfg.smoke.smoke_plan.brief_plan): drift --performance --quick


@dataclass
class SmokeRun:
    """The run the phases share: what they measure with (plan, sessions, probes) and what they add (results,
    probed loads for the switch counters' verdict, the links' readings the scaling phase reuses, plots)."""

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
        """Progress text for one step of the run, counted towards its total."""
        self.announce(text)
        self.done += 1

    def announce(self, text: str) -> None:
        """Progress text for what runs now, a step counted or not (a re-measurement is not one)."""
        if self.options.progress:
            self.options.progress(self.done, self.total, text)

    def load(self, clients: list[Link], direction: str, label: str,
              sources: Mapping[str, Sequence[Link]] | None = None) -> tuple[LoadResult, StepProbe]:
        """One load, with the probes around it (their counters are judged for the whole run)."""
        flows = plan_flows(self.plan, clients, sources)
        probe = self.probes.before()
        probe.fan_in = fan_in(flows, direction)
        omit_s, duration_s = self.plan.load_timing(len(flows))
        load = run_load(self.fleet, flows, direction, duration_s, omit_s)
        self.probes.after(probe)
        self.probed.append((label, probe))
        return load, probe
