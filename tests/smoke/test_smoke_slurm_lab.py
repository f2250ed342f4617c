"""Issue 55 point 4 on a lab of its own: where the site runs Slurm, smoke's TCP and storage steps run as
Slurm job steps on the nodes they measure (srun in a job that holds them), a drained node is still
measured over SSH with the reason said, and the jobs end with the run.

The lab is tests/smoke/smokelab.yaml as site ``smslurm`` (198.18.89.0/24, 198.19.89.0/24) with a
scheduler section: slurmctld on ``smctl``, partitions gpu (the DGX) and storage. slurmctld is asked
what runs (``squeue --steps``) while smoke measures: the steps are Slurm's own record, not smoke's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from labsupport import LabHandle

from racfg.results import Report, Status
from tests.smoke.labnet import smokelab_as

pytestmark = [pytest.mark.lab, pytest.mark.solo]  # rates: measured with the machine to itself

RACFG = [sys.executable, "-m", "racfg"]
CONTROLLER = "smctl"
SCHEDULER = f"""
scheduler:
  type: slurm
  controller: {{name: {CONTROLLER}, address: 198.18.89.5}}
  partitions:
    - {{name: gpu, roles: [dgx]}}
    - {{name: storage, roles: [storage]}}
"""
DRAINED = "smdgx03"
REASON = "ops: cable swap"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabHandle]:
    with smokelab_as("smslurm", 89, tmp_path_factory.mktemp("smslurm"), lambda text: text + SCHEDULER) as handle:
        yield handle


def _controller(lab: LabHandle, *argv: str) -> str:
    return lab.exec(CONTROLLER, list(argv), timeout=30).stdout


def test_tcp_and_fio_run_as_job_steps_on_their_nodes_a_drained_node_over_ssh_and_the_jobs_end(
        lab: LabHandle, tmp_path: Path) -> None:
    _controller(lab, "scontrol", "update", f"NodeName={DRAINED}", "State=DRAIN", f"Reason={REASON}")
    env = {**os.environ, "RACFG_STATE_DIR": str(tmp_path / "state")}
    argv = [*RACFG, "smoke", str(lab.inventory), "--skip", "scaling,rdma,benchmark,nccl", "--format", "json",
            "--output", str(tmp_path / "out")]
    steps: set[tuple[str, str]] = set()  # (node, step name) as slurmctld lists them while smoke runs
    try:
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as smoke:
            while smoke.poll() is None:
                listed = lab.exec(CONTROLLER, ["squeue", "--steps", "--noheader", "--format=%N|%j"], check=False)
                steps |= {tuple(line.split("|", 1)) for line in listed.stdout.split() if "|" in line}
                time.sleep(0.2)
            out, err = smoke.communicate(timeout=60)
        report = Report.from_dict(json.loads(out))
        assert smoke.returncode == 0, [r.message for r in report.results if r.status is not Status.PASS] + [err[-2000:]]
        jobs = _controller(lab, "squeue", "--noheader", "--name=racfg-smoke", "--format=%i")
        drained = _controller(lab, "sinfo", "--noheader", "--Node", f"--nodes={DRAINED}", "--format=%T|%E").strip()
    finally:
        _controller(lab, "scontrol", "update", f"NodeName={DRAINED}", "State=RESUME")
    launch = report.meta["launch"]
    assert launch["launcher"] == "slurm"
    assert sorted(launch["jobs"]) == ["smdgx01", "smdgx02", "smstor01", "smstor02"], launch
    assert launch["ssh"] == {DRAINED: f"IDLE+DRAIN in Slurm ({REASON})"}, launch
    # Slurm ran the tools: iperf3 on each DGX it gave, fio on each storage node; nothing on the drained node
    assert {("smdgx01", "iperf3"), ("smdgx02", "iperf3"), ("smstor01", "fio"), ("smstor02", "fio")} <= steps, steps
    assert not [s for s in steps if s[0] == DRAINED], steps
    # the drained node was measured all the same, over SSH, and the report says which launcher ran what
    checks = {r.check: r for r in report.results}
    assert checks[f"link/read/{DRAINED}:data0"].status is Status.PASS, sorted(checks)
    assert any(note.startswith("launcher of the TCP and storage steps: Slurm job steps (srun) in job ")
               and f"SSH on {DRAINED}: IDLE+DRAIN in Slurm ({REASON})" in note for note in report.notes), report.notes
    assert jobs.strip() == ""  # the jobs ended with the run
    assert drained == f"drained|{REASON}"  # smoke never touches a drain
