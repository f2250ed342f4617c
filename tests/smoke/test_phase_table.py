"""A new smoke phase is one module and one row of the phase table (racfg.smoke.phase_table): the table runs
a module it has never seen after the others, counts its steps, skips it when asked, says why on a site
without storage hosts when it needs one, and turns its MeasurementError into the phase's own error."""

from __future__ import annotations

import types
from pathlib import Path
from types import SimpleNamespace

import pytest

from racfg.results import Result, Status
from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.phase_table import PHASE_TABLE, PHASES, Phase, count_steps, measure_phases
from racfg.smoke.run_state import SmokeOptions, SmokeRun


def mtu_phase(fails: str | None = None) -> types.ModuleType:
    """A phase module as a contributor writes one: its plan, its measurement, its pure verdict."""
    module = types.ModuleType("racfg.smoke.phases.mtu_probe")

    def mtu_result(host: str, mtu: int, expected: int) -> Result:
        ok = mtu == expected
        return Result(host, f"mtu/{host}", "mtu", Status.PASS if ok else Status.FAIL, f"MTU {mtu}",
                      str(expected), str(mtu))

    def steps(plan: object) -> int:
        return 2

    def measure(run: SmokeRun) -> None:
        if fails:
            raise MeasurementError(fails)
        for host, mtu in (("dgx01", 9000), ("dgx02", 1500)):
            run.tick(f"mtu: {host}")
            run.results.append(mtu_result(host, mtu, 9000))

    module.steps, module.measure, module.VERDICTS = steps, measure, (mtu_result,)
    return module


def run_of(tmp_path: Path, skip: frozenset[str], storage: list[str]) -> SmokeRun:
    plan = SimpleNamespace(storage=storage)
    return SmokeRun(cluster=None, plan=plan, fleet=None, probes=None, out_dir=tmp_path,  # type: ignore[arg-type]
                    options=SmokeOptions(skip=skip), total=0)


def test_the_table_runs_a_new_phase_from_its_row(tmp_path: Path) -> None:
    table = (*PHASE_TABLE, Phase("mtu", mtu_phase()))
    others = frozenset(PHASES)  # the real phases skipped: only the new one runs here
    assert count_steps(SimpleNamespace(), others, table) == 2  # type: ignore[arg-type]
    run = run_of(tmp_path, others, storage=[])
    measure_phases(run, table)
    assert [(r.check, r.status) for r in run.results] == [("mtu/dgx01", Status.PASS), ("mtu/dgx02", Status.FAIL)]
    assert run.done == 2


@pytest.mark.parametrize(("row", "skip", "expected"), [
    (Phase("mtu", mtu_phase()), {"mtu"}, []),
    (Phase("mtu", mtu_phase(), needs_storage=True), set(), [("mtu/run", Status.SKIP, "no storage host")]),
    (Phase("mtu", mtu_phase("dgx02: connection lost")), set(), [("mtu/run", Status.ERROR, "dgx02: connection lost")]),
])
def test_the_table_skips_or_reports_a_phase_that_cannot_run(tmp_path: Path, row: Phase, skip: set[str],
                                                            expected: list) -> None:
    run = run_of(tmp_path, frozenset(PHASES) | skip, storage=[])
    measure_phases(run, (*PHASE_TABLE, row))
    assert [(r.check, r.status) for r in run.results] == [(check, status) for check, status, _ in expected]
    assert all(says in r.message for r, (_, _, says) in zip(run.results, expected, strict=True))
