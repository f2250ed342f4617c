"""`racfg drift --accept` refuses what it cannot do before it reads anything.

Off a terminal nobody can answer its question, and a limited read cannot be a whole site's
baseline: both are usage errors (exit 2) that leave no run record and read no host, so they need
no lab (the lab suite, tests/drift/test_drift_lab.py, accepts for real).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("args", "message"), [
    (["--accept"], "--accept replaces the baseline; confirm with --yes when not on a terminal"),
    (["--accept", "--yes", "--limit", "dgx01"], "--accept records the whole site's facts; it takes no --limit"),
])
def test_accept_refuses_before_reading_anything(tmp_path: Path, args: list[str], message: str):
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if k != "RACFG_YES"}  # --yes's variable: only as given here
    proc = subprocess.run([sys.executable, "-m", "racfg", "drift", "inventory/lab.yaml", *args],
                          capture_output=True, text=True, cwd=REPO, stdin=subprocess.DEVNULL, timeout=60,
                          env={**env, "RACFG_STATE_DIR": str(state), "RACFG_PLAIN": "1"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"racfg: error: {message}" in proc.stderr and "Traceback" not in proc.stderr
    assert not (state / "runs").exists()  # no drift ran: nothing was read
