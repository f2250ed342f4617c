"""What uses a declared drive (roles/common/module_utils/racfg_drive_use.py) and the reads that fail
closed (racfg_drives.py), on recorded inputs: sysfs trees laid out as the kernel lays out /sys for
LVM on a partition, md members, dm-crypt under LVM and deeper stacks; mount tables of this and
another mount namespace; /proc/swaps; lsblk's JSON of such a drive; tools that fail.

The same reads on real drives of a real lab host: tests/roles/test_wipe_guard_lab.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.roles.role_modules import load_module_utils, load_role_module

load_role_module("nvme_storage", "racfg_drive_probe")  # registers the module_utils as Ansible ships them
use = load_module_utils("racfg_drive_use")
drives = load_module_utils("racfg_drives")

LVM_UUID = "LVM-Xk2cQ0bHMmc1EyrX6DUFd2S9nG3LgbwpN8aJqS4T0fO7KjU2YlVd9dDk1tOqsmnF"
CRYPT_UUID = "CRYPT-LUKS2-3f1d9c1e0c2a4c55b8e2f4b1a9d3e7c6-luks-data"


def block(sys: Path, name: str, dev: str, parent: str | None = None, holders: tuple[str, ...] = (),
          dm: tuple[str, str] | None = None, md: str | None = None) -> None:
    """One block device as the kernel shows it: its directory under devices/ (a partition inside its
    disk's), class/block/<name> and dev/block/<major:minor> pointing at it, dev, holders/, and dm/
    (name, uuid) or md/ (level) for a device-mapper or md device."""
    disk_dir = sys / "devices/virtual/block"
    here = disk_dir / parent / name if parent else disk_dir / name
    (here / "holders").mkdir(parents=True)
    (here / "dev").write_text(dev + "\n")
    for holder in holders:
        (here / "holders" / holder).symlink_to(disk_dir / holder)
    if parent:
        (here / "partition").write_text("1\n")
    if dm:
        (here / "dm").mkdir()
        (here / "dm/name").write_text(dm[0] + "\n")
        (here / "dm/uuid").write_text(dm[1] + "\n")
    if md:
        (here / "md").mkdir()
        (here / "md/level").write_text(md + "\n")
    for link in (sys / "class/block" / name, sys / "dev/block" / dev):
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(here, link.parent))
    if not parent:
        (sys / "block").mkdir(exist_ok=True)
        (sys / "block" / name).symlink_to(os.path.relpath(here, sys / "block"))


def procfs(proc: Path, mountinfo: str, swaps: str = "", others: dict[str, tuple[str, str]] | None = None) -> None:
    """/proc with this process's mount table and namespace, /proc/swaps, and other processes
    (pid -> (mount namespace, mount table))."""
    for pid, (namespace, table) in {"self": ("mnt:[4026531841]", mountinfo), "1": ("mnt:[4026531841]", mountinfo),
                                    **(others or {})}.items():
        (proc / pid / "ns").mkdir(parents=True)
        (proc / pid / "ns/mnt").symlink_to(namespace)
        (proc / pid / "mountinfo").write_text(table)
    (proc / "swaps").write_text("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" + swaps)


ROOT_MOUNTS = ("22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
               "23 22 0:21 / /proc rw,nosuid shared:2 - proc proc rw\n")


@pytest.fixture
def host(tmp_path: Path) -> dict[str, Path]:
    """A storage host's /sys with four drives (each the stack one test plants) and a blank one."""
    sys = tmp_path / "sys"
    # nvme0n1: LVM on its first partition, the LV mounted on /srv/data
    block(sys, "nvme0n1", "259:0")
    block(sys, "nvme0n1p1", "259:1", parent="nvme0n1", holders=("dm-0",))
    block(sys, "dm-0", "253:0", dm=("vg0-lv0", LVM_UUID))
    # nvme1n1: a member of md0 (raid1), not mounted
    block(sys, "nvme1n1", "259:2", holders=("md0",))
    block(sys, "md0", "9:0", md="raid1")
    # nvme2n1: p1 under dm-crypt under LVM (btrfs: mounted by an anonymous device number), p2 swap
    block(sys, "nvme2n1", "259:3")
    block(sys, "nvme2n1p1", "259:4", parent="nvme2n1", holders=("dm-1",))
    block(sys, "nvme2n1p2", "259:5", parent="nvme2n1")
    block(sys, "dm-1", "253:1", holders=("dm-2",), dm=("luks-data", CRYPT_UUID))
    block(sys, "dm-2", "253:2", dm=("vg1-data", LVM_UUID.replace("X", "Y")))
    # nvme3n1: a plain device-mapper linear mapping over it, mounted in another mount namespace
    block(sys, "nvme3n1", "259:6", holders=("dm-3",))
    block(sys, "dm-3", "253:3", dm=("racfg-lin", ""))
    # nvme4n1: blank, nothing holds it
    block(sys, "nvme4n1", "259:7")
    proc = tmp_path / "proc"
    procfs(proc, ROOT_MOUNTS + "40 22 253:0 / /srv/data rw,relatime - xfs /dev/mapper/vg0-lv0 rw\n"
           "41 22 0:45 /@ /srv/my\\040files rw - btrfs /dev/mapper/vg1-data rw\n",
           swaps="/dev/nvme2n1p2                          partition\t8388604\t\t0\t\t-2\n",
           others={"1234": ("mnt:[4026532999]", ROOT_MOUNTS + "50 22 253:3 / /data rw - ext4 /dev/dm-3 rw\n")})
    return {"sys": sys, "proc": proc}


def drive_use(host: dict[str, Path], kname: str, tmp_path: Path) -> list[str]:
    """in_use of /dev/<kname> on this host; the path is a file here, which the kernel opens
    exclusively as it opens a block device nothing holds."""
    path = tmp_path / kname
    path.touch()
    context = use.read_use_context(str(host["proc"]))
    return use.in_use(str(path), kname, context, str(host["sys"]))


def test_lvm_on_a_partition_with_its_lv_mounted_names_the_chain(host, tmp_path: Path) -> None:
    assert drive_use(host, "nvme0n1", tmp_path) == ["/dev/nvme0n1p1 -> dm-0 (LVM vg0-lv0) mounted on /srv/data"]


def test_an_md_member_is_in_use_while_its_array_runs(host, tmp_path: Path) -> None:
    assert drive_use(host, "nvme1n1", tmp_path) == [f"{tmp_path}/nvme1n1 -> md0 (md raid1) active"]


def test_holders_are_followed_all_the_way_down_and_swap_and_anonymous_mounts_are_found(host, tmp_path) -> None:
    """dm-crypt under LVM under a partition, mounted as btrfs (whose mount table names no device
    number of its own: its source names it), and the other partition used as swap."""
    assert drive_use(host, "nvme2n1", tmp_path) == [
        "/dev/nvme2n1p1 -> dm-1 (dm-crypt luks-data) -> dm-2 (LVM vg1-data) mounted on /srv/my files",
        "/dev/nvme2n1p2 used as swap"]


def test_a_mount_in_another_mount_namespace_is_found(host, tmp_path: Path) -> None:
    assert drive_use(host, "nvme3n1", tmp_path) == [
        f"{tmp_path}/nvme3n1 -> dm-3 (device-mapper racfg-lin) mounted on /data (in the mount namespace of pid 1234)"]


def test_a_blank_drive_nothing_holds_is_not_in_use(host, tmp_path: Path) -> None:
    assert drive_use(host, "nvme4n1", tmp_path) == []


def test_the_kernel_name_comes_from_the_device_number(host, tmp_path: Path) -> None:
    """A lab's /dev/nvme0n1 is a loop device bound under that name: its device number says which."""
    node = tmp_path / "node"
    node.touch()
    rdev = os.stat(node).st_rdev
    block(host["sys"], "loop3", f"{os.major(rdev)}:{os.minor(rdev)}")
    assert use.kernel_name(str(node), str(host["sys"])) == "loop3"


@pytest.mark.parametrize("broken", ["holders of a partition", "holders of a holder", "dm name", "md level"])
def test_a_sysfs_read_that_fails_makes_the_drive_in_use(broken: str, host, tmp_path: Path) -> None:
    sys = host["sys"] / "class/block"
    target, kname = {"holders of a partition": (sys / "nvme2n1p1/holders", "nvme2n1"),
                     "holders of a holder": (sys / "dm-1/holders", "nvme2n1"),
                     "dm name": (sys / "dm-0/dm/name", "nvme0n1"),
                     "md level": (sys / "md0/md/level", "nvme1n1")}[broken]
    real = Path(os.path.realpath(target))
    if real.is_dir():
        for link in real.iterdir():
            link.unlink()
        real.rmdir()
    else:
        real.unlink()
    got = drive_use(host, kname, tmp_path)
    assert got and got[-1] == f"its holders could not be read ({target}: No such file or directory)", got


def test_holders_deeper_than_any_real_stack_are_reported_not_followed_forever(tmp_path: Path) -> None:
    sys = tmp_path / "sys"
    block(sys, "nvme0n1", "259:0", holders=("dm-1",))
    for level in range(1, 20):
        block(sys, f"dm-{level}", f"253:{level}", holders=(f"dm-{level + 1}",), dm=(f"d{level}", ""))
    procfs(tmp_path / "proc", ROOT_MOUNTS)
    got = drive_use({"sys": sys, "proc": tmp_path / "proc"}, "nvme0n1", tmp_path)
    assert len(got) == 1 and got[0].endswith(f"-> dm-{use.MAX_DEPTH + 1} (holders deeper than 16 levels)"), got


def test_an_unreadable_mount_table_or_swap_list_makes_every_drive_in_use(host, tmp_path: Path) -> None:
    (host["proc"] / "self/mountinfo").unlink()
    (host["proc"] / "swaps").unlink()
    assert drive_use(host, "nvme4n1", tmp_path) == [
        f"the mount table could not be read ({host['proc']}/self/mountinfo: No such file or directory)",
        f"the swap areas could not be read ({host['proc']}/swaps: No such file or directory)"]


def test_a_drive_the_kernel_will_not_open_exclusively_is_in_use(tmp_path: Path) -> None:
    """No holder or mount names it (a mount in a namespace this module cannot see): the kernel's
    answer alone refuses it. Here: a path that cannot be opened at all."""
    gone = tmp_path / "gone"
    assert use.exclusive_open(str(gone)).startswith(f"{gone} could not be opened exclusively to see whether")


def test_mount_table_and_swaps_parse_escaped_paths() -> None:
    assert use.parse_mountinfo("36 35 98:0 /mnt1 /mnt/with\\040blank rw,noatime master:1 - ext3 /dev/root rw\n") == [
        ("98:0", "/dev/root", "/mnt/with blank")]
    assert use.parse_swaps("Filename Type Size Used Priority\n/swap\\040file file 1024 0 -2\n") == ["/swap file"]


# lsblk --json --bytes -o NAME,KNAME,TYPE,SIZE,MODEL,SERIAL,MOUNTPOINT of a drive with LVM on its
# first partition (util-linux 2.38): the LV is a child of the partition, not of the drive.
LSBLK_LVM = """{
   "blockdevices": [
      {"name":"nvme0n1", "kname":"nvme0n1", "type":"disk", "size":3840755982336, "model":"SAMSUNG MZQL23T8HCLS-00A07",
       "serial":"S64HNE0R123456", "mountpoint":null,
         "children": [
            {"name":"nvme0n1p1", "kname":"nvme0n1p1", "type":"part", "size":3840754933760, "model":null,
             "serial":null, "mountpoint":null,
               "children": [
                  {"name":"vg0-lv0", "kname":"dm-0", "type":"lvm", "size":3840753885184, "model":null,
                   "serial":null, "mountpoint":"/srv/data"}
               ]
            }
         ]
      }
   ]
}"""


def fake_tools(monkeypatch: pytest.MonkeyPatch, answers: dict[str, tuple[int, str, str]]) -> list[list[str]]:
    """racfg_drives' processes answered by tool name (rc, stdout, stderr); returns what ran."""
    ran: list[list[str]] = []

    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        ran.append(argv)
        rc, out, err = answers[os.path.basename(argv[0])]
        if rc == -1:
            raise subprocess.TimeoutExpired(argv, 60)
        return subprocess.CompletedProcess(argv, rc, out, err)

    monkeypatch.setattr(drives, "_run", run)
    monkeypatch.setattr(drives, "is_block_device", lambda path: True)
    monkeypatch.setattr(drives, "kernel_name", lambda path: "nvme0n1")
    monkeypatch.setattr(drives, "in_use", lambda path, kname, context: [])
    return ran


GOOD: dict[str, tuple[int, str, str]] = {"lsblk": (0, LSBLK_LVM, ""), "blkid": (0, "PTTYPE=gpt\n", ""),
                                         "partx": (0, "0FC63DAF-8483-4772-8E79-3D69D8477DE4\n", "")}


def test_a_drive_whose_reads_succeed_is_summarised(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_tools(monkeypatch, GOOD)
    facts = drives.read_drive("/dev/nvme0n1", use.UseContext())
    assert facts["in_use"] == [] and facts["partitions"] == ["nvme0n1p1"] and facts["signatures"] == ["PTTYPE=gpt"]
    assert facts["partition_types"] == ["0fc63daf-8483-4772-8e79-3d69d8477de4"]


FAILURES: dict[str, tuple[str, tuple[int, str, str], str]] = {
    "partx fails": ("partx", (1, "", "partx: /dev/nvme0n1: failed to read partition table"),
                    "its partition table could not be read (partx exited 1: partx: /dev/nvme0n1: failed to read "
                    "partition table)"),
    "blkid fails": ("blkid", (4, "", "blkid: error: /dev/nvme0n1: Input/output error"),
                    "its signatures could not be read (blkid exited 4: blkid: error: /dev/nvme0n1: Input/output "
                    "error)"),
    "lsblk times out": ("lsblk", (-1, "", ""), "its identity and partitions could not be read (lsblk timed out "
                                               "after 60 s)"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_a_read_that_fails_makes_the_drive_in_use_never_free(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tool, answer, reason = FAILURES[case]
    fake_tools(monkeypatch, {**GOOD, tool: answer})
    assert reason in drives.read_drive("/dev/nvme0n1", use.UseContext())["in_use"]


def test_partx_runs_only_where_blkid_found_a_partition_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """partx fails on a drive without a table: it is not asked there (one process less on a blank
    drive), and a drive with one whose partx fails is in use (above)."""
    ran = fake_tools(monkeypatch, {**GOOD, "blkid": (2, "", ""), "partx": (1, "", "no table")})
    facts = drives.read_drive("/dev/nvme0n1", use.UseContext())
    assert facts["in_use"] == [] and facts["signatures"] == [] and [a[0] for a in ran] == ["lsblk", "blkid"]


def test_ambivalent_signatures_carry_data(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_tools(monkeypatch, {**GOOD, "blkid": (8, "", "")})
    assert drives.read_drive("/dev/nvme0n1", use.UseContext())["signatures"] == ["ambivalent signatures (blkid exit 8)"]


def stand_in_weka(tmp_path: Path, body: str) -> str:
    weka = tmp_path / "weka"
    weka.write_text("#!/bin/sh\n" + body + "\n")
    weka.chmod(0o755)
    return str(weka)


@pytest.mark.parametrize(("body", "state"), [
    ("echo 'error: not logged in' >&2; exit 1", "weka cluster drive -J exited 1: error: not logged in"),
    ("echo 'Cluster is not formed'",
     "weka cluster drive -J printed no JSON: Expecting value: line 1 column 1 (char 0)"),
    ("echo '\"nothing\"'", "weka cluster drive -J printed no drive list: \"nothing\""),
])
def test_an_unreadable_weka_drive_list_makes_every_drive_weka_s(body: str, state: str, tmp_path: Path) -> None:
    """Weka installed, its list unreadable: a present drive may be Weka's as much as one Weka took
    from the kernel (before, only the absent one was)."""
    listing, got = drives.read_weka_drive_list(stand_in_weka(tmp_path, body))
    assert listing is None and got == state, got
    for present in (True, False):
        drive: dict[str, Any] = {"path": "/dev/nvme0n1", "present": present, "serial": "S1", "partition_types": []}
        assert drives.weka_owner(drive, set(), set(), got, True, drives.WEKA_PARTITION_TYPE) == (
            f"Weka is installed here and its drive list is unreadable ({got}): it may be Weka's")
