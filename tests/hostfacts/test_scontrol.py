"""``scontrol show node -o`` as Slurm 22.05.8 printed it in the lab (tests/recordings/slurm, with
SOURCES.md): states and flags, racfg's and others' reasons without Slurm's ``[user@time]``, a
reason with ``=`` in it kept whole, values with spaces (OS=), and what is not its output refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from racfg.hostfacts import ParseError
from racfg.hostfacts.scontrol import parse_scontrol_nodes

SLURM = Path(__file__).parents[1] / "recordings" / "slurm"


def nodes(name: str):
    return {n.name: n for n in parse_scontrol_nodes((SLURM / name).read_text())}


def test_every_node_idle():
    read = nodes("scontrol-show-node-idle.txt")
    assert list(read) == ["dgx01", "dgx02", "stor01", "stor02"]
    assert all(n.state == "IDLE" and not n.flags and n.reason is None and not n.drained for n in read.values())
    assert read["dgx01"].partitions == ("gpu",) and read["stor02"].partitions == ("storage",)


def test_racfgs_drain_and_someone_elses_with_an_equals_sign_in_its_reason():
    read = nodes("scontrol-show-node-gate-drained.txt")
    dgx02, stor02 = read["dgx02"], read["stor02"]
    assert dgx02.drained and dgx02.state == "IDLE" and dgx02.state_text == "IDLE+DRAIN"
    assert dgx02.reason == ("racfg: host_mtu:dgx02:data0 +2 more fix: racfg deploy inventory/lab.yaml "
                            "--limit dgx02 --tags fabric")
    assert dgx02.reason_user == "root"
    assert stor02.drained and stor02.reason == "bad DIMM, ticket 4711 key=value"
    assert not read["dgx01"].drained and read["dgx01"].reason is None


def test_the_slurmlab_recording_of_a_drain():
    read = nodes("scontrol-show-node-drained.txt")
    assert read["dgx02"].reason == "racfg:DRIFT-MTU data0 mtu 1500 want 9000; fix: racfg deploy --limit dgx02"
    assert read["stor02"].reason == "maintenance by ops" and read["stor02"].drained


def test_a_node_set_down_is_down_not_drained():
    stor01 = nodes("scontrol-show-node-down.txt")["stor01"]
    assert stor01.down and not stor01.drained and stor01.reason == "slurmd-stopped-by-test"


def test_an_older_star_for_not_responding_and_no_nodes():
    (node,) = parse_scontrol_nodes("NodeName=n1 State=DOWN*+DRAIN Partitions=a,b Reason=Not responding "
                                   "[slurm@2026-01-01T00:00:00]\n")
    assert node.down and node.drained and "NOT_RESPONDING" in node.flags and node.partitions == ("a", "b")
    assert node.reason == "Not responding" and node.reason_user == "slurm"
    assert parse_scontrol_nodes("No nodes in the system\n") == []


@pytest.mark.parametrize("text", ["", "slurm_load_node error: Unable to contact slurm controller (connect failure)\n",
                                  "NodeName=dgx01 Arch=x86_64 CoresPerSocket=1\n"])
def test_what_is_not_its_output_is_a_parse_error(text: str):
    with pytest.raises(ParseError):
        parse_scontrol_nodes(text)
