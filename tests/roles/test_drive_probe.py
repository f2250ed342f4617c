"""The drives' read (roles/common/module_utils/racfg_drives.py, run by racfg_drive_probe and by
racfg_probe's drives option): which drives it says Weka owns, and why.

The Weka signature is written by tests/roles/weka_signature.py into a real image file and read
back by the real partx/blkid, the tools the module runs on a host.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.roles import weka_signature
from tests.roles.role_modules import load_module_utils, load_role_module

load_role_module("nvme_storage", "racfg_drive_probe")  # registers the module_utils as Ansible ships them
probe = load_module_utils("racfg_drives")

CLUSTER = uuid.UUID("83fc8ec1-b7e7-4288-bc6f-1b9df281ebc1")


def drive(path: str = "/dev/nvme0n1", present: bool = True, serial: str = "S1", types: list[str] | None = None):
    return {"path": path, "present": present, "serial": serial, "partition_types": types or []}


@pytest.fixture
def signed_image(tmp_path: Path) -> Path:
    image = tmp_path / "drive.img"
    with open(image, "wb") as f:
        f.truncate(64 * 2**20)
    weka_signature.write_to_file(str(image), weka_signature.weka_signed_chunks(64 * 2**20, CLUSTER))
    return image


@pytest.mark.skipif(shutil.which("partx") is None, reason="partx (util-linux) not installed")
def test_weka_signed_drive_is_recognised_from_its_partition_table(signed_image: Path) -> None:
    out = subprocess.run(["partx", "--show", "--noheadings", "--output", "TYPE", str(signed_image)],
                         capture_output=True, text=True, check=True).stdout
    facts = drive(types=probe.parse_partx_types(out))
    assert probe.weka_owner(facts, set(), set(), "none", False, probe.WEKA_PARTITION_TYPE) == (
        "carries a Weka partition (GPT type 993ec906-b4e2-11e7-a205-a0a8cd3ea1de)")
    blkid = subprocess.run(["blkid", "--probe", "--output", "export", str(signed_image)],
                           capture_output=True, text=True).stdout
    assert probe.parse_blkid_export(blkid) == ["PTTYPE=gpt"]  # what a wipe would erase
    assert signed_image.read_bytes()[2048 * 512 + 8:2048 * 512 + 24] == CLUSTER.bytes


def test_drives_in_the_cluster_list_are_owned_by_path_or_serial() -> None:
    listing = [{"hostname": "stor01", "device_path": "/dev/nvme0n1", "serial_number": "S1"},
               {"hostname": "stor02", "device_path": "/dev/nvme1n1", "serial_number": "S9"},
               {"host_name": "stor01.example", "path": "/dev/nvme2n1"}]
    paths, serials = probe.weka_drives_of_host(listing, "stor01")
    assert paths == {"/dev/nvme0n1", "/dev/nvme2n1"} and serials == {"S1"}
    assert probe.weka_owner(drive("/dev/nvme0n1"), paths, serials, "read", True, probe.WEKA_PARTITION_TYPE) == (
        "in the Weka cluster's drive list")
    assert probe.weka_owner(drive("/dev/nvme5n1", serial="S1"), paths, serials, "read", True,
                            probe.WEKA_PARTITION_TYPE) == "in the Weka cluster's drive list"
    # a drive of another host at the same path is not this host's
    assert probe.weka_owner(drive("/dev/nvme1n1", serial="X"), paths, serials, "read", True,
                            probe.WEKA_PARTITION_TYPE) == ""


def test_a_drive_gone_from_the_kernel_is_weka_s_only_when_weka_can_have_taken_it() -> None:
    gone = drive("/dev/nvme3n1", present=False, serial="")
    assert probe.weka_owner(gone, {"/dev/nvme3n1"}, set(), "read", True, probe.WEKA_PARTITION_TYPE)
    assert "unreadable" in probe.weka_owner(gone, set(), set(), "weka cluster drive -J exited 1: x", True,
                                            probe.WEKA_PARTITION_TYPE)
    # no Weka here, or Weka says it is not its drive: a missing drive stays a failure (not owned)
    assert probe.weka_owner(gone, set(), set(), "none", False, probe.WEKA_PARTITION_TYPE) == ""
    assert probe.weka_owner(gone, set(), set(), "read", True, probe.WEKA_PARTITION_TYPE) == ""


def test_a_blank_drive_is_free() -> None:
    assert probe.weka_owner(drive(types=["0fc63daf-8483-4772-8e79-3d69d8477de4"]), set(), set(), "none", False,
                            probe.WEKA_PARTITION_TYPE) == ""


def test_lsblk_answer_is_summarised() -> None:
    text = ('{"blockdevices": [{"name": "nvme0n1", "kname": "nvme0n1", "type": "disk", "size": 3840755982336,'
            ' "model": "Micron_9200_MTFDHAL3T8TCT  ", "serial": " 18201C2D ", "mountpoint": null,'
            ' "children": [{"name": "nvme0n1p1", "kname": "nvme0n1p1", "type": "part", "size": 1,'
            ' "model": null, "serial": null, "mountpoint": "/data"}]}]}')
    assert probe.parse_lsblk(text) == {"kname": "nvme0n1", "size_bytes": 3840755982336,
                                       "model": "Micron_9200_MTFDHAL3T8TCT", "serial": "18201C2D",
                                       "mounts": ["/data"], "partitions": ["nvme0n1p1"]}


def read(path: str, kname: str, weka: str = "", model: str = "M", serial: str = "S") -> dict:
    return {"path": path, "kname": kname, "weka": weka, "model": model, "serial": serial, "size_bytes": 2**30}


def test_the_drives_record_is_what_to_nice_json_wrote_before_the_probe_made_it() -> None:
    """A record written by the role before this module made it must compare equal: else every
    converged storage host would rewrite it once."""
    from ansible.plugins.filter.core import to_nice_json

    drives = [read("/dev/nvme0n1", "nvme0n1"), read("/dev/nvme1n1", "nvme1n1", weka="in the Weka cluster's drive list")]
    rows = [{"path": d["path"], "model": d["model"], "serial": d["serial"], "size_bytes": d["size_bytes"],
             "owner": "weka" if d["weka"] else None} for d in drives]
    assert probe.drives_record(drives) == to_nice_json(rows)
    assert '"owner": "weka"' in probe.drives_record(drives) and '"owner": null' in probe.drives_record(drives)


@pytest.fixture
def converged(tmp_path: Path) -> tuple[dict, list[dict]]:
    """A host whose free drive runs the wanted scheduler, with the rule and record in place."""
    drives = [read("/dev/nvme0n1", "nvme0n1"), read("/dev/nvme1n1", "nvme1n1", weka="carries a Weka partition")]
    (tmp_path / "rules.d").mkdir()
    rule = tmp_path / "rules.d" / "60-sched.rules"
    rule.write_text("ACTION==add\n")
    record = tmp_path / "drives.json"
    record.write_text(probe.drives_record(drives))
    spec = {"scheduler": "none", "record": {"path": str(record)},
            "files": [{"path": str(rule), "content": "ACTION==add\n"}],
            "directories": [{"path": str(tmp_path / "rules.d")}], "diffs": True}
    return spec, drives


def sysfs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, schedulers: dict[str, str]) -> None:
    """Point the module's /sys/block at files under tmp_path holding each drive's scheduler line."""
    for kname, line in schedulers.items():
        (tmp_path / "sys" / kname / "queue").mkdir(parents=True)
        (tmp_path / "sys" / kname / "queue" / "scheduler").write_text(line + "\n")
    monkeypatch.setattr(probe, "SYS_BLOCK", str(tmp_path / "sys"))


# What one compare_state run finds: (change to the converged host, its differs, whether a diff is shown)
STATE_ROWS = {
    "converged": ({}, [], False),
    "scheduler": ({"sched": "[mq-deadline] none"}, ["{sys}/nvme0n1/queue/scheduler does not match \\[none\\]"], False),
    "rule content": ({"rule": "old\n"}, ["file {rule} content"], True),
    "record": ({"record": "[]"}, ["file {record} content"], True),
    "rule missing": ({"rule": None}, ["file {rule} missing"], True),
}


@pytest.mark.parametrize("case", sorted(STATE_ROWS))
def test_the_free_drives_state_is_compared_in_the_same_run(case: str, converged, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    spec, drives = converged
    change, want, diffed = STATE_ROWS[case]
    sysfs(monkeypatch, tmp_path, {"nvme0n1": change.get("sched", "[none] mq-deadline")})
    rule, record = spec["files"][0]["path"], spec["record"]["path"]
    for key, path in (("rule", rule), ("record", record)):
        if key in change:
            Path(path).unlink() if change[key] is None else Path(path).write_text(change[key])
    got = probe.compare_state(spec, drives)
    names = {"sys": str(tmp_path / "sys"), "rule": rule, "record": record}
    assert got["state"]["differs"] == [line.format(**names) for line in want]
    # only the free drive's scheduler is read: the one Weka owns is left alone
    assert got["state"]["exists"] == {f"{tmp_path}/sys/nvme0n1/queue/scheduler": True}
    assert bool(got["diff"]) is diffed


def test_a_free_drive_without_its_scheduler_file_is_not_converged(converged, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    spec, drives = converged
    sysfs(monkeypatch, tmp_path, {})
    assert probe.compare_state(spec, drives)["state"]["exists"] == {f"{tmp_path}/sys/nvme0n1/queue/scheduler": False}
