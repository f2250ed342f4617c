"""What the in-process command tests share: a fresh state directory and lab root per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def isolated_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh state directory and lab root, the user's RACFG_* settings left out, plain wide output:
    a command run in-process reads nothing of the developer's own runs."""
    for name in [k for k in os.environ if k.startswith("RACFG_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("RACFG_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("RACFG_LAB_DIR", str(tmp_path / "lab"))
    monkeypatch.setenv("RACFG_PLAIN", "1")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
