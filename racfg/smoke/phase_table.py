"""The phases of a smoke run, in the order they run: the one place that says what a smoke run is made of.

A phase is one module of racfg.smoke.phases holding its plan (``steps``: the progress steps it counts
for a plan), the commands it runs and its measurement (``measure(run)``), and its pure verdicts
(``VERDICTS``: functions over plain data, racfg.smoke.measured); a row here runs it. A new phase is
one new module and one row (docs/development.md shows one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from racfg.results import Result, Status
from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.phases import (
    link_saturation,
    nccl_allreduce,
    rdma_bandwidth,
    read_scaling,
    storage_throughput,
    user_benchmark,
)
from racfg.smoke.run_state import SmokeRun
from racfg.smoke.smoke_plan import SmokePlan


class PhaseModule(Protocol):
    """What a phase module of racfg.smoke.phases holds: its plan (``steps``: the progress steps it counts
    for a plan), its commands and measurement (``measure``: adds its results to the run), and its pure
    verdicts (``VERDICTS``: over plain data, racfg.smoke.measured; tests/structure holds that)."""

    VERDICTS: tuple[Callable[..., Any], ...]

    def steps(self, plan: SmokePlan) -> int: ...

    def measure(self, run: SmokeRun) -> None: ...


@dataclass(frozen=True)
class Phase:
    """One row of the table: the phase's name (``--skip``), its module, and whether it loads links from
    storage hosts (skipped, saying why, on a site without one)."""

    name: str
    module: PhaseModule
    needs_storage: bool = False


# The phases, in the order they run; the one place that says what a smoke run is made of.
PHASE_TABLE: tuple[Phase, ...] = (
    Phase("links", link_saturation, needs_storage=True),
    Phase("scaling", read_scaling, needs_storage=True),
    Phase("storage", storage_throughput),
    Phase("rdma", rdma_bandwidth, needs_storage=True),
    Phase("benchmark", user_benchmark),
    Phase("nccl", nccl_allreduce),  # GPU all-reduce: needs no storage host
)
PHASES = tuple(phase.name for phase in PHASE_TABLE)


def count_steps(plan: SmokePlan, skip: frozenset[str], table: Sequence[Phase] = PHASE_TABLE) -> int:
    """The progress bar's total: what each phase that runs says it counts."""
    return sum(phase.module.steps(plan) for phase in table if phase.name not in skip)


def measure_phases(run: SmokeRun, table: Sequence[Phase] = PHASE_TABLE) -> None:
    """Every phase of the table in turn, but those skipped; a phase that cannot measure says why."""
    for phase in table:
        if phase.name in run.options.skip:
            continue
        if phase.needs_storage and not run.plan.storage:
            run.results.append(without_storage(phase.name))
            continue
        try:
            phase.module.measure(run)
        except MeasurementError as exc:
            run.results.append(not_measured(phase.name, exc.message))


def without_storage(phase: str) -> Result:
    """A phase that loads links from storage hosts, on a site whose storage is an external array."""
    return Result("cluster", f"{phase}/run", phase, Status.SKIP,
                  f"{phase}: no storage host to load the links from (the external array is not a host smoke "
                  "can run iperf3 or perftest on)")


def not_measured(phase: str, reason: str) -> Result:
    """A phase that started and could not finish measuring (a lost host, a tool that failed)."""
    return Result("cluster", f"{phase}/run", phase, Status.ERROR, f"{phase}: could not measure: {reason}")
