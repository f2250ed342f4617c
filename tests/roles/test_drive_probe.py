"""roles/nvme_storage/library/racfg_drive_probe.py: which drives it says Weka owns, and why.

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
from tests.roles.role_modules import load_role_module

probe = load_role_module("nvme_storage", "racfg_drive_probe")

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
