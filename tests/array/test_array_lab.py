"""GPU servers on one external array, in the lab: deploy mounts the export on every GPU server,
validate passes the mount checks (and names precisely a mount that was removed), smoke's fio reads
through the mount.

tests/array/arraylab.yaml: 2 dgx + array01 on one Onyx switch, site ``arraylab``. This machine's
kernel has no NFS at all (client or server), so array01 serves the export as sshfs (FUSE over SFTP
on its sshd, across the data fabric): a real network filesystem through the same role, validator
and smoke path; only the protocol differs from a real array's NFS. The test plays the array's
administrator first: it puts a dataset file in the export and grants each GPU server a key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import labsupport as testing
import pytest

pytestmark = pytest.mark.lab

INVENTORY = Path(__file__).parent / "arraylab.yaml"
RACFG = [sys.executable, "-m", "racfg"]
DATASET = "/export/fio/read.dat"  # the export's file that acceptance.smoke.fio_path names on the clients
KEY = "/root/.ssh/racfg_array"  # the array's access grant, named by the inventory's IdentityFile option


class ArraySite:
    def __init__(self, lab: testing.LabHandle, state_dir: Path) -> None:
        self.lab = lab
        self.env = {**os.environ, "RACFG_STATE_DIR": str(state_dir), "RACFG_PLAIN": "1"}

    def racfg(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*RACFG, *args], capture_output=True, text=True, env=self.env, timeout=600,
                              stdin=subprocess.DEVNULL)

    def deploy(self, *args: str) -> None:
        proc = self.racfg("deploy", str(INVENTORY), "--yes", *args)
        assert proc.returncode == 0, f"deploy exit {proc.returncode}: {self._deploy_problems()}\n" + \
            proc.stdout[-1500:] + proc.stderr[-2000:]

    def _deploy_problems(self) -> str:
        """The failing hosts' problems from the last deploy's record (the recap's tail can hide them)."""
        records = sorted(Path(self.env["RACFG_STATE_DIR"]).glob("runs/*-deploy/results.json"))
        if not records:
            return "no deploy record"
        hosts = json.loads(records[-1].read_text()).get("hosts", [])
        return "; ".join(f"{h['host']}: {h['problems']}" for h in hosts if h["failed"] or h["unreachable"]) or "-"

    def report(self, command: str, *args: str) -> tuple[int, dict]:
        proc = self.racfg(command, str(INVENTORY), "--format", "json", *args)
        assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-3000:]
        return proc.returncode, json.loads(proc.stdout)

    def serve_export(self) -> None:
        """The array's side: a 64 MiB dataset in the export, and each GPU server's key authorised."""
        self.lab.ssh("array01", f"mkdir -p {Path(DATASET).parent} && "
                                f"head -c 67108864 /dev/urandom > {DATASET}")
        for host in self.lab.hosts("dgx"):
            public = self.lab.ssh(host.name, f"test -f {KEY} || ssh-keygen -q -t ed25519 -N '' -f {KEY}; "
                                             f"cat {KEY}.pub").stdout.strip()
            self.lab.ssh("array01", f"echo '{public}' >> /root/.ssh/authorized_keys")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArraySite]:
    with testing.running_lab(INVENTORY) as lab:
        site = ArraySite(lab, tmp_path_factory.mktemp("arraylab-state"))
        site.serve_export()
        site.deploy()
        yield site


def _array_results(report: dict) -> dict[str, dict]:
    return {r["check"]: r for r in report["results"] if "/array/" in r["check"]}


def test_deploy_mounts_the_export_and_validate_passes_it(site):
    for host in ("dgx01", "dgx02"):
        mounts = site.lab.ssh(host, "cat /proc/mounts").stdout
        assert "198.19.60.50:/export /mnt/array fuse.sshfs ro," in mounts
        assert "198.19.60.50:/export /mnt/array fuse.sshfs" in site.lab.ssh(host, "cat /etc/fstab").stdout
        assert site.lab.ssh(host, "stat -c %s /mnt/array/fio/read.dat").stdout.strip() == "67108864"
    code, report = site.report("validate")
    array = _array_results(report)
    assert {c for c, r in array.items() if r["status"] == "pass"} == {
        f"{h}/array/{t}" for h in ("dgx01", "dgx02") for t in ("mounted", "mount_options")}
    note = array["dgx01/array/mount_options"]["message"]
    assert "not checked: reconnect, IdentityFile=/root/.ssh/racfg_array" in note
    assert not any(c.startswith("array01/array/") for c in array), "only GPU servers mount the array"
    assert [r["check"] for r in report["results"] if r["status"] in ("fail", "error")] == []
    assert code == 0


def test_validate_names_a_removed_mount_precisely(site):
    site.lab.ssh("dgx02", "umount /mnt/array")
    try:
        code, report = site.report("validate")
        failed = [r for r in report["results"] if r["status"] in ("fail", "error")]
        assert [r["check"] for r in failed] == ["dgx02/array/mounted"]
        assert failed[0]["expected"] == "198.19.60.50:/export (fuse.sshfs) at /mnt/array"
        assert failed[0]["actual"] == "not mounted"
        assert "--limit dgx02 --tags nfs_client" in failed[0]["fix"]
        options = _array_results(report)["dgx02/array/mount_options"]
        assert options["status"] == "skip" and "not mounted" in options["message"]
        assert code == 1
    finally:
        site.deploy("--limit", "dgx02", "--tags", "nfs_client")  # the fix validate names
    assert "/mnt/array fuse.sshfs" in site.lab.ssh("dgx02", "cat /proc/mounts").stdout


def test_smoke_reads_through_the_mount_with_fio(site):
    code, report = site.report("smoke", "--skip", "links,scaling,rdma,benchmark")
    storage = {r["check"]: r for r in report["results"] if r["category"] == "storage"}
    assert set(storage) == {"storage/client/n1", "storage/client/n2"}
    for result in storage.values():
        assert result["status"] == "pass", result
        assert result["data"]["side"] == "client"
        assert "fio reading /mnt/array/fio/read.dat on the clients" in result["message"]
        assert result["data"]["seq_bytes_per_s"] > 0 and result["data"]["rand_iops"] > 0
    assert storage["storage/client/n2"]["data"]["hosts"] == ["dgx01", "dgx02"]
    assert code == 0
