"""smoke's launcher (racfg.smoke.launch) on real ``scontrol show node -o`` output of the lab's Slurm:
which hosts' TCP and storage steps run as Slurm job steps, which go over SSH and why, and the srun
line each tool is started with. The lab proof is tests/smoke/test_smoke_slurm_lab.py."""

from __future__ import annotations

import shlex
from pathlib import Path

from racfg.hostfacts.scontrol import parse_scontrol_nodes
from racfg.slurm.placement import allocations
from racfg.smoke.launch import Launch

SLURM = Path(__file__).parents[1] / "recordings" / "slurm"
HOSTS = ["dgx01", "dgx02", "stor01", "stor02"]


def nodes(recording: str) -> dict:
    return {n.name: n for n in parse_scontrol_nodes((SLURM / recording).read_text())}


def test_idle_nodes_are_allocated_one_job_per_partition() -> None:
    groups, ssh = allocations(HOSTS, nodes("scontrol-show-node-idle.txt"))
    assert groups == {"gpu": ["dgx01", "dgx02"], "storage": ["stor01", "stor02"]} and ssh == {}


def test_a_drained_or_down_node_or_one_slurm_lacks_is_measured_over_ssh_saying_why() -> None:
    groups, ssh = allocations([*HOSTS, "dgx09"], nodes("scontrol-show-node-drained.txt"))
    assert groups == {"gpu": ["dgx01"], "storage": ["stor01"]}
    assert ssh == {"dgx02": "IDLE+DRAIN in Slurm (racfg:DRIFT-MTU data0 mtu 1500 want 9000; fix: racfg deploy "
                            "--limit dgx02)",
                   "stor02": "IDLE+DRAIN in Slurm (maintenance by ops)",
                   "dgx09": "not a node of the site's Slurm"}
    groups, ssh = allocations(HOSTS, nodes("scontrol-show-node-down.txt"))
    assert groups == {"gpu": ["dgx01", "dgx02"], "storage": ["stor02"]}
    assert ssh == {"stor01": "DOWN in Slurm (slurmd-stopped-by-test)"}


def test_a_tool_of_an_allocated_host_is_one_job_step_on_that_node_and_the_rest_run_as_they_are() -> None:
    launch = Launch(jobs={"dgx01": "12", "stor01": "13"}, ssh={"dgx02": "IDLE+DRAIN in Slurm (maintenance by ops)"})
    iperf = ["iperf3", "-s", "-1", "-p", "5201", "-B", "198.19.0.11"]
    assert shlex.join(launch.argv("dgx01", iperf)) == ("srun --jobid=12 --overlap --nodes=1 --ntasks=1 "
                                                       "--nodelist=dgx01 --quiet -- " + shlex.join(iperf))
    assert launch.argv("dgx02", iperf) == iperf
    assert launch.describe() == ("launcher of the TCP and storage steps: Slurm job steps (srun) in job 12 (dgx01); "
                                 "job 13 (stor01); SSH on dgx02: IDLE+DRAIN in Slurm (maintenance by ops)")
    assert launch.as_dict()["launcher"] == "slurm"
    none = Launch(ssh=dict.fromkeys(HOSTS, "the site declares no scheduler"))
    assert none.argv("dgx01", iperf) == iperf and none.as_dict()["launcher"] == "ssh"
    assert none.describe().endswith("SSH on dgx01, dgx02, stor01, stor02: the site declares no scheduler")
