"""The lab's Slurm without a lab: slurm.conf rendered from the inventory, the MUNGE key and units
written into machine roots, the controller's place checked, sinfo's output read (recorded from a lab)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from racfg.inventory import load_cluster
from racfg_lab import slurm
from racfg_lab.state import HostState, LabState

REPO = Path(__file__).resolve().parents[2]
RECORDINGS = REPO / "tests/recordings/slurm"


def _conf_lines(path: str) -> list[str]:
    return slurm.render_conf(load_cluster(REPO / path)).splitlines()


def test_lab_conf_names_the_controller_every_host_and_the_partitions() -> None:
    lines = _conf_lines("inventory/lab.yaml")
    assert "ClusterName=lab" in lines
    assert "SlurmctldHost=slurmctl(198.18.0.5)" in lines
    nodes = [line for line in lines if line.startswith("NodeName=")]
    assert nodes == [
        "NodeName=dgx01 NodeAddr=198.18.0.11 State=UNKNOWN", "NodeName=dgx02 NodeAddr=198.18.0.12 State=UNKNOWN",
        "NodeName=stor01 NodeAddr=198.18.0.21 State=UNKNOWN", "NodeName=stor02 NodeAddr=198.18.0.22 State=UNKNOWN",
    ]
    partitions = [line for line in lines if line.startswith("PartitionName=")]
    assert partitions == [
        "PartitionName=gpu Nodes=dgx[01-02] Default=YES MaxTime=INFINITE State=UP",
        "PartitionName=storage Nodes=stor[01-02] Default=NO MaxTime=INFINITE State=UP",
    ]


def test_conf_is_container_friendly_and_keeps_drains() -> None:
    lines = _conf_lines("inventory/lab.yaml")
    for setting in ("ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none", "AuthType=auth/munge", "ReturnToService=1",
                    f"HealthCheckProgram={slurm.NODE_CHECK}", "HealthCheckInterval=60", "HealthCheckNodeState=ANY"):
        assert setting in lines
    assert not [line for line in lines if "cgroup" in line]
    keys = [line.split("=", 1)[0] for line in lines if "=" in line and not line.startswith(("NodeName", "Partition"))]
    assert len(keys) == len(set(keys)), "a setting given twice"


def test_leafspine_conf_default_partition_and_sizes() -> None:
    lines = _conf_lines("inventory/ra-leafspine.yaml")
    assert "SlurmctldHost=slurmctl(198.18.92.9)" in lines
    assert len([line for line in lines if line.startswith("NodeName=")]) == 40
    gpu = next(line for line in lines if line.startswith("PartitionName=gpu "))
    assert gpu == "PartitionName=gpu Nodes=dgx[01-24] Default=YES MaxTime=INFINITE State=UP"


def test_hostlist_compresses_runs_of_one_width_and_keeps_order() -> None:
    assert slurm.hostlist(["dgx01", "dgx02", "dgx03", "stor01"]) == "dgx[01-03],stor01"
    names = ["n9", "n10", "a1", "a2", "a4", "login", "x001", "x002"]
    assert slurm.hostlist(names) == "n9,n10,a[1-2],a4,login,x[001-002]"
    assert slurm.hostlist(["dgx02", "dgx01"]) == "dgx02,dgx01"


def _without_scheduler(tmp_path: Path, **controller: str) -> Path:
    text = (REPO / "inventory/lab.yaml").read_text()
    head, tail = text.split("scheduler:\n", 1)
    if controller:
        ctl = ", ".join(f"{k}: {v}" for k, v in controller.items())
        tail = tail.replace("controller: {name: slurmctl, address: 198.18.0.5}", f"controller: {{{ctl}}}")
        head += "scheduler:\n"
    else:
        tail = tail.split("\n\n", 1)[1]
    path = tmp_path / "lab.yaml"
    path.write_text(head + tail)
    return path


def test_render_refuses_an_inventory_without_scheduler(tmp_path: Path) -> None:
    cluster = load_cluster(_without_scheduler(tmp_path))
    assert cluster.inventory.scheduler is None
    assert slurm.lab_problems(cluster) == []
    with pytest.raises(ValueError, match="declares no scheduler"):
        slurm.render_conf(cluster)


@pytest.mark.parametrize(("name", "address", "problem"), [
    ("dgx01", "198.18.0.5", "a host or switch has that name"),
    ("sw1", "198.18.0.5", "a host or switch has that name"),
    ("ctl", "198.18.0.11", "is another node's"),
    ("ctl", "198.18.0.1", "is another node's"),  # the management gateway
    ("ctl", "198.18.7.5", "not in the management network 198.18.0.0/24"),
])
def test_controller_the_lab_cannot_place(tmp_path: Path, name: str, address: str, problem: str) -> None:
    cluster = load_cluster(_without_scheduler(tmp_path, name=name, address=address))
    assert any(problem in p for p in slurm.lab_problems(cluster)), slurm.lab_problems(cluster)


def test_lab_yaml_controller_is_placeable() -> None:
    assert slurm.lab_problems(load_cluster(REPO / "inventory/lab.yaml")) == []
    assert slurm.lab_problems(load_cluster(REPO / "inventory/ra-leafspine.yaml")) == []
    assert slurm.lab_problems(load_cluster(REPO / "tests/vallab.yaml")) == []


def _lab_state(tmp_path: Path) -> tuple[LabState, Path]:
    image = tmp_path / "image"
    (image / "etc").mkdir(parents=True)
    (image / "etc/passwd").write_text(f"root:x:0:0::/root:/bin/sh\nmunge:x:{os.getuid()}:{os.getgid()}::/:/bin/false\n")
    state = LabState("lab", "inventory/lab.yaml", "h", "br", "198.18.0.1/24", "ethernet", 100, str(image), "repo",
                     "now")
    for name, mgmt in (("dgx01", "198.18.0.11"), ("dgx02", "198.18.0.12"), ("stor01", "198.18.0.21"),
                       ("stor02", "198.18.0.22")):
        state.hosts[name] = HostState(name, "dgx", f"rf-lab.{name}", mgmt, str(tmp_path / name / "root"))
    state.controller = HostState("slurmctl", slurm.CONTROLLER_ROLE, "rf-lab.slurmctl", "198.18.0.5",
                                 str(tmp_path / "slurmctl/root"))
    for machine in state.machines():
        (Path(machine.root) / "etc/munge").mkdir(parents=True)
        (Path(machine.root) / "etc/slurm").mkdir(parents=True)
    return state, image


def test_configure_writes_one_private_key_and_the_daemons_each_machine_runs(tmp_path: Path) -> None:
    state, image = _lab_state(tmp_path)
    slurm.configure(load_cluster(REPO / "inventory/lab.yaml"), state, image)
    keys = set()
    for machine in state.machines():
        root = Path(machine.root)
        key = root / slurm.MUNGE_KEY
        assert stat.S_IMODE(key.stat().st_mode) == 0o400 and key.stat().st_uid == os.getuid()
        keys.add(key.read_bytes())
        assert (root / slurm.CONF).read_text().startswith("# racfg lab")
        wants = sorted(p.name for p in (root / slurm.WANTS).iterdir())
        daemon = "slurmctld.service" if machine is state.controller else "slurmd.service"
        assert wants == sorted(["munge.service", daemon])
    assert len(keys) == 1 and len(keys.pop()) == slurm.MUNGE_KEY_BYTES
    hosts = (Path(state.controller.root) / "etc/hosts").read_text()
    assert "198.18.0.5\tslurmctl\n" in hosts and "198.18.0.11\tdgx01\n" in hosts and "127.0.1.1" not in hosts
    first = (Path(state.controller.root) / slurm.MUNGE_KEY).read_bytes()
    slurm.configure(load_cluster(REPO / "inventory/lab.yaml"), state, image)  # a new lab: a new key
    assert (Path(state.controller.root) / slurm.MUNGE_KEY).read_bytes() != first


def test_state_keeps_the_controller_and_reads_older_state_files() -> None:
    state = LabState("lab", "i", "h", "br", "gw", "ethernet", 100, "img", "repo", "now")
    state.hosts["dgx01"] = HostState("dgx01", "dgx", "ns1", "198.18.0.11", "/r1")
    assert [m.name for m in state.machines()] == ["dgx01"]
    state.controller = HostState("slurmctl", slurm.CONTROLLER_ROLE, "ns2", "198.18.0.5", "/r2", pid=7)
    again = LabState.from_dict(json.loads(state.to_json()))
    assert again.controller == state.controller
    assert [m.name for m in again.machines()] == ["dgx01", "slurmctl"]
    older = json.loads(state.to_json())
    del older["controller"]
    assert LabState.from_dict(older).controller is None


def test_sinfo_states_and_reasons() -> None:
    text = ("dgx01|idle|none\ndgx02|drained|racfg:DRIFT-MTU data0 mtu 1500 fix: deploy\n"
            "stor01|idle|none\nstor01|idle|none\nstor02|down*|Not responding\n")
    assert slurm.parse_sinfo(text) == {
        "dgx01": "idle", "dgx02": "drained (racfg:DRIFT-MTU data0 mtu 1500 fix: deploy)", "stor01": "idle",
        "stor02": "down* (Not responding)"}


def test_sinfo_recorded_from_a_lab() -> None:
    """What `lab status` reads, as a real slurmctld printed it (tests/recordings/slurm/SOURCES.md)."""
    text = (RECORDINGS / "sinfo-node-state-reason-drained.txt").read_text()
    assert slurm.parse_sinfo(text) == {
        "dgx01": "idle", "dgx02": "drained (racfg:DRIFT-MTU data0 mtu 1500 want 9000; fix: racfg deploy --limit dgx02)",
        "stor01": "idle", "stor02": "drained (maintenance by ops)"}
