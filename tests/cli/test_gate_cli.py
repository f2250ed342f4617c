"""`racfg gate`'s refusals and "could not run", before anything is read: no scheduler section and a
bad --max-drain are exit 2; a controller that cannot be reached, or no scontrol where racfg runs
(``commands: local``), is exit 3 naming it, and nothing is read (no drift record)."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
import yaml

from racfg.cli import invoke

REPO = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("isolated_cli")


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    def run(*argv: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["racfg", "gate", *argv])
        code = invoke()
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return run


def site(tmp_path: Path, scheduler: dict | None) -> Path:
    """inventory/lab.yaml under a site name no lab has, with ``scheduler``, an empty known_hosts (a
    controller that answers is still refused: its key is unknown)."""
    data = yaml.safe_load((REPO / "inventory" / "lab.yaml").read_text())
    data["site"]["name"] = f"nolab-{uuid.uuid4().hex[:8]}"
    (tmp_path / "known_hosts").write_text("")
    data["site"]["known_hosts"] = "known_hosts"
    data.pop("scheduler", None)
    if scheduler is not None:
        data["scheduler"] = scheduler
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def scheduler(**extra) -> dict:
    return {"type": "slurm", "controller": {"name": "slurmctl", "address": "127.0.0.1"},
            "partitions": [{"name": "gpu", "roles": ["dgx"]}, {"name": "storage", "hosts": ["stor[01:02]"]}], **extra}


def test_no_scheduler_section_is_exit_2_with_a_clear_message(tmp_path: Path, gate):
    code, _, err = gate(str(site(tmp_path, None)))
    assert code == 2, err
    assert "declares no scheduler" in err and "Traceback" not in err


@pytest.mark.parametrize("share", ["0", "150%", "abc", "-0.1", "1.5"])
def test_a_max_drain_outside_0_to_100_percent_is_exit_2(tmp_path: Path, gate, share: str):
    code, _, err = gate(str(site(tmp_path, scheduler())), "--max-drain", share)
    assert code == 2, err
    assert f"--max-drain {share}" in err and "Traceback" not in err


def test_an_unreachable_controller_is_exit_3_naming_it_and_nothing_is_read(tmp_path: Path, gate):
    code, _, err = gate(str(site(tmp_path, scheduler())))
    assert code == 3, err
    assert "slurmctld on slurmctl (127.0.0.1): cannot be reached" in err, err
    assert not list((tmp_path / "state").glob("runs/*-drift*")), "drift ran although Slurm could not be asked"


def test_no_scontrol_where_racfg_runs_is_exit_3(tmp_path: Path, gate, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, _, err = gate(str(site(tmp_path, scheduler(commands="local"))), "--dry-run")
    assert code == 3, err
    assert "scontrol is not installed where racfg runs" in err


def test_help_documents_the_exit_codes(gate):
    code, out, _ = gate("--help")
    assert code == 0
    text = " ".join(out.split())
    for part in ("Exit codes: 0", "1 a node is broken", "2 bad command line", "3 could not run", "--max-drain",
                 "--dry-run"):
        assert part in text, part
