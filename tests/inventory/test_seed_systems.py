"""The seeds' other two systems: HPE Apollo 6500 + DL360 WekaFS over EDR (seeds 003/004), and GPU
servers on one external NVMe array sized as in the FMS 2019 talk (seed 002). `racfg check` must
give back the seeds' own numbers: bill of materials, budget, the talk's nine and three servers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from racfg.hostfacts.mounts import mount_at, option_present, parse_proc_mounts, reported_options
from racfg.inventory import load_cluster
from racfg.policy import bandwidth_budget, evaluate
from racfg.smoke.phases.user_benchmark import equivalence_result
from racfg.summary import bill_of_materials

REPO = Path(__file__).resolve().parents[2]
APOLLO = REPO / "inventory" / "hpe-apollo-edr.yaml"
N5800 = REPO / "inventory" / "intelliflash-n5800.yaml"


def racfg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "racfg", *args], capture_output=True, text=True, cwd=REPO,
                          env={"PATH": "/usr/bin:/bin", "RACFG_PLAIN": "1"}, timeout=60)


def test_apollo_bom_is_seeds_003_004():
    rows = {(r.part, r.model): r for r in bill_of_materials(load_cluster(APOLLO))}
    assert {k: r.qty for k, r in rows.items()} == {
        ("compute", "HPE Apollo 6500 Gen10"): 4,
        ("storage", "HPE DL360 Gen10"): 8,
        ("switch", "SB7800"): 1,
        ("cables", "EDR QSFP copper (e.g. MCP1600-E003)"): 12,
    }
    assert rows[("compute", "HPE Apollo 6500 Gen10")].notes.startswith("8x Tesla V100 SXM2 16GB GPUs each")
    assert rows[("storage", "HPE DL360 Gen10")].notes.startswith("10 NVMe each")
    assert rows[("switch", "SB7800")].notes == "36 ports, mlnxos-ib"
    cluster = load_cluster(APOLLO)
    assert cluster.fabric.effective_ib_mtu == 4096 and cluster.fabric.type == "infiniband"


def test_apollo_budget_meets_seed_004_storage_reference_with_weka_minimum():
    cluster = load_cluster(APOLLO)
    assert [f for f in evaluate(cluster) if f.severity == "error"] == []
    assert not [f for f in evaluate(cluster) if f.rule in ("bandwidth", "storage")]
    budget = bandwidth_budget(cluster)
    assert budget.storage_nodes >= 8  # Weka's minimum
    assert budget.supply > 30.0  # > 30 GB/s sequential 1 MiB reads
    assert budget.supply_iops > 2.5e6  # > 2.5M 4 KiB random reads
    assert budget.as_dict()["supply_gbytes_per_s"] == pytest.approx(75.2)
    assert budget.as_dict()["supply_iops"] == 8 * 417_000
    assert budget.gpu_servers == 4 and budget.demand == pytest.approx(3.2) and budget.fed


def test_apollo_benchmark_says_scale_out_equals_scale_up():
    spec = load_cluster(APOLLO).inventory.acceptance.smoke.benchmark
    assert spec is not None and [g.shapes for g in spec.equivalent] == [["1x8", "2x4", "4x2"]]


def test_n5800_budget_reproduces_the_talks_table():
    cluster = load_cluster(N5800)
    assert [f for f in evaluate(cluster) if f.severity == "error"] == []
    budget = bandwidth_budget(cluster)
    assert budget.supply == pytest.approx(23.5 * 0.3)  # 30% of 23.5 GB/s for training
    assert budget.servers_by_workload() == {"resnet50": 9, "lenet": 3}
    assert budget.servers_fed == 9 and budget.gpu_servers == 9 and budget.fed
    rows = {(r.part, r.model): r for r in bill_of_materials(cluster)}
    array = rows[("storage array", "IntelliFlash N5800")]
    assert array.qty == 1 and "23.5 GB/s mixed I/O at 80/20 read/write" in array.notes
    assert "NFS 198.19.5.100:/export/ai on /mnt/array" in array.notes


def test_check_prints_the_table_and_json_carries_it():
    proc = racfg("check", str(N5800), "--no-topology")
    assert proc.returncode == 0, proc.stderr
    assert "30% of it for training = 7.05 GB/s" in proc.stdout
    assert "8-GPU servers it feeds for training: 9 on resnet50, 3 on lenet." in proc.stdout
    doc = json.loads(racfg("check", str(N5800), "--format", "json").stdout)
    assert doc["budget"]["servers_fed_by_workload"] == {"resnet50": 9, "lenet": 3}
    assert doc["budget"]["array"] == "IntelliFlash N5800"


def test_rules_and_schema_cover_the_new_keys():
    rules = racfg("rules").stdout
    assert "array" in rules and "benchmark-shapes" in rules
    schema = json.loads(racfg("schema").stdout)
    array = schema["$defs"]["StorageArray"]["properties"]
    assert {"model", "mixed_gbytes_per_s", "read_percent", "training_share", "protocol", "server", "export",
            "mount_point", "mount_options"} <= set(array)
    assert "equivalent" in schema["$defs"]["UserBenchmark"]["properties"]


@pytest.mark.parametrize(("old", "new", "key", "below"), [
    ("  training_share: 0.3", "  training_share: 1.5", "array.training_share", 0),
    ("  protocol: nfs", "  protocol: smb", "array.protocol", 0),
    ("  export: /export/ai", "  export: export/ai", "array.export", 0),
    ("  count: 1", "  count: 1\n  colour: red", "array.colour", 1),
])
def test_bad_array_keys_get_located_errors(tmp_path, old, new, key, below):
    text = N5800.read_text()
    line = text.splitlines().index(old) + 1 + below
    path = tmp_path / "intelliflash-n5800.yaml"
    path.write_text(text.replace(old, new, 1))
    proc = racfg("check", str(path))
    assert proc.returncode == 2
    assert f"intelliflash-n5800.yaml:{line} {key}:" in proc.stderr and "Traceback" not in proc.stderr


def test_policy_errors_on_the_array_are_located(tmp_path):
    text = N5800.read_text().replace("  server: 198.19.5.100", "  server: 198.18.5.100")
    text = text.replace("  model: IntelliFlash N5800", "  model: Unknown Box").replace(
        "  mixed_gbytes_per_s: 23.5\n", "")
    path = tmp_path / "site.yaml"
    path.write_text(text)
    proc = racfg("check", str(path), "--no-topology")
    assert proc.returncode == 1
    assert "array.server: 198.18.5.100 is outside the data subnets" in proc.stdout
    assert "array.model: unknown array model 'Unknown Box' and no mixed_gbytes_per_s" in proc.stdout


def test_shape_too_big_for_the_servers_is_an_error(tmp_path):
    text = APOLLO.read_text().replace("[1x8, 2x4, 4x2]", "[1x8, 2x4, 8x1]")
    path = tmp_path / "site.yaml"
    path.write_text(text)
    found = [f for f in evaluate(load_cluster(path)) if f.rule == "benchmark-shapes"]
    assert [(f.path, f.actual, f.expected) for f in found] == [
        ("acceptance.smoke.benchmark.equivalent[0].shapes[2]", "8x1", "<= 4x8")]


def test_equivalence_verdicts():
    ok = equivalence_result("resnet50_images", "images/s", 0.05, {"1x8": 2900.0, "2x4": 2850.0, "4x2": 2790.0})
    assert ok.status.value == "pass" and "scale-out equals scale-up" in ok.message
    bad = equivalence_result("resnet50_images", "images/s", 0.05, {"1x8": 2900.0, "2x4": 2850.0, "4x2": 2500.0})
    assert bad.status.value == "fail" and bad.actual == "largest difference 13.8% (4x2)"
    assert "Expected: 1x8 = 2x4 = 4x2 within +-5.0% of 1x8" in bad.message
    missing = equivalence_result("r", "images/s", 0.05, {"1x8": 2900.0, "2x4": None})
    assert missing.status.value == "error" and "2x4 gave no figure" in missing.message


RECORDED_MOUNTS = (
    "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
    "198.19.5.100:/export/ai /mnt/array nfs rw,relatime,vers=3,rsize=1048576,wsize=1048576,namlen=255,hard,"
    "proto=tcp,nconnect=8,timeo=600,retrans=2,sec=sys,mountaddr=198.19.5.100,mountvers=3,mountport=20048,"
    "mountproto=udp,local_lock=none,addr=198.19.5.100 0 0\n"
    "198.19.60.50:/export /mnt/with\\040space fuse.sshfs ro,nosuid,nodev,relatime,user_id=0,group_id=0,"
    "allow_other 0 0\n"
)


def test_mount_options_as_the_kernel_reports_them():
    mounts = parse_proc_mounts(RECORDED_MOUNTS)
    nfs = mount_at(mounts, "/mnt/array")
    assert nfs is not None and nfs.fstype == "nfs" and nfs.source == "198.19.5.100:/export/ai"
    shown, hidden = reported_options(["hard", "proto=tcp", "vers=3", "rsize=1048576", "nconnect=8", "_netdev"],
                                     "nfs")
    assert hidden == ["_netdev"] and all(option_present(o, nfs) for o in shown)
    assert option_present("nfsvers=3", nfs) and not option_present("vers=4", nfs)
    assert not option_present("rsize=524288", nfs)
    fuse = mount_at(mounts, "/mnt/with space")
    assert fuse is not None and fuse.fstype == "fuse.sshfs"
    shown, hidden = reported_options(["ro", "allow_other", "reconnect", "IdentityFile=/k"], "fuse.sshfs")
    assert (shown, hidden) == (["ro", "allow_other"], ["reconnect", "IdentityFile=/k"])
    assert mount_at(mounts, "/mnt/none") is None
