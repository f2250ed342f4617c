"""Run records of runs started together: each gets a directory of its own (racfg/run_record.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from racfg import run_record
from racfg.run_record import RunRecord


def test_a_run_started_in_the_same_second_as_another_gets_its_own_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another racfg (another site's deploy from the same project) creates the directory this run
    was about to take, between this run's choice of the name and its mkdir."""
    monkeypatch.setattr(run_record.time, "strftime", lambda _format: "20261124-030000")
    (tmp_path / "runs").mkdir()
    real_mkdir = Path.mkdir

    def mkdir_after_the_other_run(self: Path, *args: object, **kwargs: object) -> None:
        if self.name == "20261124-030000-deploy" and not self.exists():
            os.mkdir(self)  # the other run, first by a hair
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir_after_the_other_run)
    record = RunRecord.create("deploy", tmp_path)
    assert record.path.name == "20261124-030000-deploy-2"
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        "20261124-030000-deploy", "20261124-030000-deploy-2"]
