"""`racfg drift` where nothing can be reached says so (exit 3), never "deploy refused" nor "no drift".

Both sites here answer at once: the lab inventory's site has no lab (its switch password comes
from a running lab, so drift stops before connecting), and the other site's hosts and switch are
on loopback ports where nothing listens (connection refused, no timeout to wait for).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def drift(tmp_path: Path, inventory: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RACFG_")}
    return subprocess.run([sys.executable, "-m", "racfg", "drift", str(inventory)], capture_output=True, text=True,
                          cwd=tmp_path, stdin=subprocess.DEVNULL, timeout=120,
                          env={**clean, "RACFG_STATE_DIR": str(tmp_path / "state"), "RACFG_PLAIN": "1", **env})


def lab_inventory(tmp_path: Path) -> tuple[Path, dict]:
    """inventory/lab.yaml under a site name no lab on this machine has (a lab test may have one up)."""
    data = yaml.safe_load((REPO / "inventory" / "lab.yaml").read_text())
    data["site"]["name"] = f"nolab-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path, data


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_drift_of_a_lab_inventory_with_no_lab_up_could_not_run(tmp_path: Path):
    inventory, data = lab_inventory(tmp_path)
    proc = drift(tmp_path, inventory)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 3, text
    assert "drift: could not run, nothing was read" in proc.stderr, text
    assert f"no running lab of site '{data['site']['name']}' supplies its password" in proc.stderr, text
    assert "deploy refused" not in text and "Traceback" not in text, text
    assert not (tmp_path / "state" / "runs").exists(), "drift started a run it could not do"


def test_drift_of_a_site_whose_hosts_do_not_answer_says_it_could_not_reach_them(tmp_path: Path):
    inventory, data = lab_inventory(tmp_path)
    port = closed_port()
    data["site"]["time_sources"] = ["127.0.0.1"]
    data["fabric"]["mgmt_subnet"] = "127.0.0.0/24"
    data["switches"][0].update(mgmt="127.0.0.2", ssh_port=port,
                               credentials={"username": "admin", "password_env": "UNIT_SWITCH_PASSWORD"})
    data["defaults"]["all"]["ssh_port"] = port
    data["hosts"] = [{"name": "dgx[01:02]", "role": "dgx", "mgmt": "127.0.0.11"},
                     {"name": "stor[01:02]", "role": "storage", "mgmt": "127.0.0.21"}]
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    proc = drift(tmp_path, inventory, UNIT_SWITCH_PASSWORD="not-used")
    text = proc.stdout + proc.stderr
    assert proc.returncode == 3, text
    assert "cannot reach" in text or "unreachable" in text, text
    assert "deploy refused" not in text and "no drift" not in text and "Traceback" not in text, text


def test_a_plan_whose_targets_could_not_be_read_is_not_no_drift():
    from racfg.drift.plan_text import render_plan, total_line
    from racfg.results import Report, Result, Status

    report = Report("drift", "lab", [
        Result("dgx01", "dgx01/config/plan", "config", Status.ERROR, "could not plan this host: unreachable"),
        Result("sw1", "sw1/state/ports", "state", Status.ERROR, "cannot reach 198.18.0.2:22 over SSH"),
        Result("dgx02", "dgx02/config/plan", "config", Status.PASS, "nothing would change"),
        Result("cluster", "cluster/environment/facts", "environment", Status.ERROR, "facts could not be read now"),
    ], meta={"switches": ["sw1"]})
    assert total_line(report) == "drift unknown: 1 host and 1 switch could not be read (errors above)"
    assert "Plan: drift unknown" in render_plan(report)
    assert report.exit_code() == 3
