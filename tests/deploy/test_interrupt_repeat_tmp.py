"""TEMPORARY (removed before hand-back): the interrupt test 10 times in a row on one converged lab."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from labsupport import LabHandle

from deploy.test_deploy_lab import deploy, test_interrupt_keeps_record_and_releases_lock  # type: ignore[import-not-found]

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("racfg-state")


@pytest.fixture(scope="module")
def converged(lab: LabHandle, state_dir: Path) -> Path:
    first = deploy(state_dir, "--format", "json")
    assert first.returncode == 0, first.stderr[-2000:]
    return state_dir


@pytest.mark.parametrize("attempt", range(int(os.environ.get("REPEAT", "10"))))
def test_interrupt_again(lab: LabHandle, converged: Path, attempt: int) -> None:
    test_interrupt_keeps_record_and_releases_lock(lab, converged)
