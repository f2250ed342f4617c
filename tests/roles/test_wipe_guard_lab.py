"""The drive-wipe guard on real lab hosts: drives something uses, or that cannot be read, are
refused by a deploy that is allowed to wipe (``racfg_wipe_drives`` true), each named with what
holds it, and not one byte of their data changes (sha256 before and after).

One lab (tests/roles/wipelab.yaml), one deploy run (site.yml --tags nvme_storage) over both
hosts, each fault on its own drive:

- wipe01 /dev/nvme0n1: a GPT partition holding ext4, mounted inside the host on /srv/data;
- wipe01 /dev/nvme1n1: ext4 mounted in the machine's root namespace only: no mount table the host
  can read shows it, the kernel's refusal of an exclusive open does;
- wipe01 /dev/nvme2n1: a GPT that partx cannot read (a stand-in partx fails for this drive);
- wipe01 /dev/nvme3n1: LVM on a GPT partition, its LV mounted inside the host on /srv/lvm;
- wipe01 /dev/nvme4n1: a member of a running md raid1;
- wipe01 /dev/nvme5n1: under a plain device-mapper linear mapping (``dmsetup create``; not
  dm-crypt: a linear mapping needs no cipher module, and the guard reads every device-mapper
  holder alike);
- wipe02: Weka installed (a stand-in weka CLI) and its drive list unreadable: every drive is left
  alone as possibly Weka's, /dev/nvme0n1 with a swap signature on it.

LVM, md and device-mapper need the kernel's device-mapper or md and their tools (lvm2, mdadm,
dmsetup). The machine this project's lab runs on has neither in its kernel (CONFIG_MD is not set:
no /proc/mdstat, no device-mapper in /proc/misc), so those three skip there and say so; the unit
tests (test_drive_use.py) hold the same chains on sysfs trees laid out as the kernel lays them out.

The faults are planted from the root namespace (partitions with partx -a, filesystems, LVM, md,
dm) and mounted inside the host (nsenter, as ``racfg lab exec`` does), where the module reads its
mount table. LVM runs with a filter that sees only its own partition and without udev, and every
step is undone at the end, whatever failed (unmounted, deactivated, stopped, removed, signatures
erased, partitions deleted) before the lab goes: nothing is left for the machine's LVM, md or udev
to pick up, and no lab loop device stays held.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import labsupport as testing
import pytest

from racfg_lab.api import connection_overrides
from tests.roles import weka_signature

pytestmark = pytest.mark.lab

INVENTORY = Path(__file__).with_name("wipelab.yaml")
MIB = 1 << 20


def root(*argv: str) -> str:
    """A command in the machine's root namespace (where the lab's loop devices are)."""
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=120).stdout.strip()


def sha256(device: str, start: int = 0, length: int | None = None) -> str:
    with open(device, "rb") as handle:
        handle.seek(start)
        return hashlib.sha256(handle.read(length if length is not None else -1)).hexdigest()


def kernel_name(path: str) -> str:
    rdev = os.stat(path).st_rdev
    return os.path.basename(os.readlink(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}"))


class Unavailable(Exception):
    """This machine cannot plant the fault (its kernel or tools lack what it needs)."""


@dataclass
class Fault:
    host: str
    drive: str  # the inventory's path of the drive on the host
    named: str  # what the refusal (or the left-alone line) says of it
    digest: Callable[[], str]  # sha256 of its data, read again after the deploy


class Planter:
    """Plants faults on the lab's drives; each step's undo goes on ``undo``, run in reverse."""

    def __init__(self, lab: testing.LabHandle, undo: ExitStack, scratch: Path) -> None:
        self.lab, self.undo, self.scratch = lab, undo, scratch

    def loop(self, host: str, drive: str) -> str:
        return self.lab.state.hosts[host].drives[drive]

    def in_host(self, host: str, command: str) -> str:
        return self.lab.exec(host, ["sh", "-c", command]).stdout.strip()

    def host_file_digest(self, host: str, path: str) -> Callable[[], str]:
        return lambda: self.in_host(host, f"sha256sum {path}").split()[0]

    @staticmethod
    def needs(feature: str, *tools: str) -> None:
        present = {"device-mapper": lambda: "device-mapper" in Path("/proc/misc").read_text(),
                   "md": lambda: Path("/proc/mdstat").exists()}[feature]()
        if not present:
            evidence = "no device-mapper in /proc/misc" if feature == "device-mapper" else "no /proc/mdstat"
            raise Unavailable(f"this machine's kernel has no {feature} ({evidence}: neither built in nor loaded); "
                              "tests/roles/test_drive_use.py holds the same chain on a recorded sysfs tree")
        missing = [tool for tool in tools if shutil.which(tool) is None]
        if missing:
            raise Unavailable(f"{', '.join(missing)} not installed on this machine")

    def node(self, kname: str) -> str:
        """The root namespace's node of a block device (made where no devtmpfs or udev made it)."""
        path = f"/dev/{kname}"
        if not os.path.exists(path):
            major, minor = Path(f"/sys/class/block/{kname}/dev").read_text().split(":")
            os.mknod(path, 0o600 | 0o060000, os.makedev(int(major), int(minor)))
            self.undo.callback(os.unlink, path)
        return path

    def partition(self, loop: str) -> str:
        """A GPT with one Linux partition on ``loop``, told to the kernel; its kernel name."""
        size = int(root("blockdev", "--getsize64", loop))
        weka_signature.write_to_file(loop, weka_signature.gpt_chunks(size, uuid.uuid4(),
                                                                     weka_signature.LINUX_FILESYSTEM, "data"))
        root("partx", "--add", loop)
        self.undo.callback(root, "partx", "--delete", loop)
        part = f"{os.path.basename(loop)}p1"
        self.node(part)
        return part

    def mount_in_host(self, host: str, kname: str, point: str) -> None:
        """Mount device ``kname`` on ``point`` inside the host (a node of its own in the host's /dev)."""
        major, minor = Path(f"/sys/class/block/{kname}/dev").read_text().strip().split(":")
        self.in_host(host, f"mknod /dev/{kname} b {major} {minor} && mkdir -p {point} && mount /dev/{kname} {point}")
        self.undo.callback(self.in_host, host, f"umount {point}; rm -f /dev/{kname}")
        self.in_host(host, f"head -c {MIB} /dev/urandom > {point}/payload && sync")

    def mounted_partition(self) -> Fault:
        loop = self.loop("wipe01", "/dev/nvme0n1")
        part = self.partition(loop)
        root("mkfs.ext4", "-q", f"/dev/{part}")
        self.mount_in_host("wipe01", part, "/srv/data")
        payload = self.host_file_digest("wipe01", "/srv/data/payload")
        return Fault("wipe01", "/dev/nvme0n1", f"/dev/{part} mounted on /srv/data",
                     lambda: sha256(loop, 0, MIB) + payload())  # the partition table and the data

    def mounted_where_the_host_cannot_see(self) -> Fault:
        loop, point = self.loop("wipe01", "/dev/nvme1n1"), self.scratch / "nvme1n1"
        root("mkfs.ext4", "-q", loop)
        point.mkdir()
        root("mount", loop, str(point))
        self.undo.callback(root, "umount", str(point))
        (point / "payload").write_bytes(os.urandom(MIB))
        root("sync")
        return Fault("wipe01", "/dev/nvme1n1", "/dev/nvme1n1 is busy: the kernel refuses to open it exclusively",
                     lambda: hashlib.sha256((point / "payload").read_bytes()).hexdigest()
                     + root("blkid", "-p", "-o", "value", "-s", "TYPE", loop))

    def unreadable_partition_table(self) -> Fault:
        loop = self.loop("wipe01", "/dev/nvme2n1")
        size = int(root("blockdev", "--getsize64", loop))
        weka_signature.write_to_file(loop, weka_signature.gpt_chunks(size, uuid.uuid4(),
                                                                     weka_signature.LINUX_FILESYSTEM, "data"))
        real = self.in_host("wipe01", "command -v partx")
        self.in_host("wipe01", "cat > /usr/local/sbin/partx <<'EOF'\n" + FAILING_PARTX.format(real=real)
                     + "EOF\nchmod +x /usr/local/sbin/partx")
        self.undo.callback(self.in_host, "wipe01", "rm -f /usr/local/sbin/partx")
        return Fault("wipe01", "/dev/nvme2n1", "its partition table could not be read (partx exited 1: partx: "
                     "/dev/nvme2n1: failed to read partition table)", lambda: sha256(loop))

    def lvm_on_a_partition(self) -> Fault:
        self.needs("device-mapper", "lvm", "dmsetup")
        loop = self.loop("wipe01", "/dev/nvme3n1")
        part = self.partition(loop)
        config = ["--config", LVM_CONFIG.replace("PART", part)]
        root("lvm", "pvcreate", "-qq", *config, f"/dev/{part}")
        self.undo.callback(root, "wipefs", "--all", "--quiet", f"/dev/{part}")
        root("lvm", "vgcreate", "-qq", *config, "racfgwipe", f"/dev/{part}")
        self.undo.callback(root, "lvm", "vgchange", "-qq", *config, "--activate", "n", "racfgwipe")
        root("lvm", "lvcreate", "-qq", "-y", *config, "--name", "lv0", "--size", "16M", "racfgwipe")
        lv = kernel_name("/dev/mapper/racfgwipe-lv0")
        root("mkfs.ext4", "-q", "/dev/mapper/racfgwipe-lv0")
        self.mount_in_host("wipe01", lv, "/srv/lvm")
        payload = self.host_file_digest("wipe01", "/srv/lvm/payload")
        return Fault("wipe01", "/dev/nvme3n1", f"/dev/{part} -> {lv} (LVM racfgwipe-lv0) mounted on /srv/lvm",
                     lambda: sha256(loop, 0, MIB) + payload())

    def md_member(self) -> Fault:
        self.needs("md", "mdadm")
        loop = self.loop("wipe01", "/dev/nvme4n1")
        root("mdadm", "--create", "/dev/md/racfgwipe", "--run", "--quiet", "--level=1", "--raid-devices=2",
             "--metadata=1.2", loop, "missing")
        self.undo.callback(root, "mdadm", "--zero-superblock", loop)
        self.undo.callback(root, "mdadm", "--stop", "/dev/md/racfgwipe")
        md = kernel_name("/dev/md/racfgwipe")
        root("dd", "if=/dev/urandom", "of=/dev/md/racfgwipe", f"bs={MIB}", "count=1", "oflag=direct", "status=none")
        return Fault("wipe01", "/dev/nvme4n1", f"/dev/nvme4n1 -> {md} (md raid1) active",
                     lambda: sha256("/dev/md/racfgwipe", 0, MIB))

    def device_mapper_holder(self) -> Fault:
        self.needs("device-mapper", "dmsetup")
        loop = self.loop("wipe01", "/dev/nvme5n1")
        sectors = root("blockdev", "--getsz", loop)
        root("dmsetup", "create", "racfgwipe-lin", "--noudevsync", "--noudevrules", "--table",
             f"0 {sectors} linear {loop} 0")
        self.undo.callback(root, "dmsetup", "remove", "--noudevsync", "racfgwipe-lin")
        dm = kernel_name("/dev/mapper/racfgwipe-lin")
        root("dd", "if=/dev/urandom", "of=/dev/mapper/racfgwipe-lin", f"bs={MIB}", "count=1", "oflag=direct",
             "status=none")
        return Fault("wipe01", "/dev/nvme5n1", f"/dev/nvme5n1 -> {dm} (device-mapper racfgwipe-lin) active",
                     lambda: sha256(loop))

    def weka_list_unreadable(self) -> Fault:
        loop = self.loop("wipe02", "/dev/nvme0n1")
        self.in_host("wipe02", "mkswap /dev/nvme0n1 >/dev/null && cat > /usr/local/bin/weka <<'EOF'\n"
                     + UNREADABLE_WEKA + "EOF\nchmod +x /usr/local/bin/weka")
        self.undo.callback(self.in_host, "wipe02", "rm -f /usr/local/bin/weka")
        return Fault("wipe02", "/dev/nvme0n1", "/dev/nvme0n1: Weka is installed here and its drive list is "
                     "unreadable (weka cluster drive -J exited 1: error: cannot reach the cluster): it may be Weka's",
                     lambda: sha256(loop))


FAILING_PARTX = """#!/bin/sh
# racfg's wipe guard test: the partition table of /dev/nvme2n1 cannot be read
for arg; do last=$arg; done
if [ "$last" = /dev/nvme2n1 ]; then echo "partx: /dev/nvme2n1: failed to read partition table" >&2; exit 1; fi
exec {real} "$@"
"""
UNREADABLE_WEKA = """#!/bin/sh
# racfg's wipe guard test: Weka installed, its cluster unreachable
echo "error: cannot reach the cluster" >&2
exit 1
"""
# LVM sees only the planted partition (never the machine's other devices nor other lab drives) and
# leaves udev alone.
LVM_CONFIG = ('devices { filter = [ "a|^/dev/PART$|", "r|.*|" ] use_devicesfile = 0 } '
              'activation { udev_sync = 0 udev_rules = 0 monitoring = 0 }')
FAULTS = ("mounted_partition", "mounted_where_the_host_cannot_see", "unreadable_partition_table",
          "lvm_on_a_partition", "md_member", "device_mapper_holder", "weka_list_unreadable")


@pytest.fixture(scope="module")
def wipe_lab() -> Iterator[testing.LabHandle]:
    with testing.running_lab(INVENTORY) as handle:
        yield handle


@pytest.fixture(scope="module")
def planted(wipe_lab: testing.LabHandle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Fault | str]]:
    """Every fault this machine can plant (by name), or why not; all undone after the module's tests."""
    with ExitStack() as undo:
        planter = Planter(wipe_lab, undo, tmp_path_factory.mktemp("wipe-guard"))
        faults: dict[str, Fault | str] = {}
        for name in FAULTS:
            try:
                faults[name] = getattr(planter, name)()
            except Unavailable as why:
                faults[name] = str(why)
        yield faults


@pytest.fixture(scope="module")
def deployed(planted: dict[str, Fault | str], tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[testing.PlaybookResult, dict[str, str], dict[str, str]]:
    """One deploy of the storage role, allowed to wipe, over both hosts; each fault's digest before
    and after."""
    faults = {name: fault for name, fault in planted.items() if isinstance(fault, Fault)}
    before = {name: fault.digest() for name, fault in faults.items()}
    rendered = tmp_path_factory.mktemp("rendered")
    root(str(Path(sys.executable).parent / "racfg"), "render", str(INVENTORY), "--out", str(rendered))
    run = testing.run_playbook(rendered, "site.yml", "--tags", "nvme_storage", "-e", "racfg_wipe_drives=true",
                               overrides=connection_overrides("wipelab"))
    print(f"\nthe wipe guard's deploy on the wipelab lab: {run.seconds:.1f} s ({len(faults)} faults planted)")
    print("\n".join(line for line in run.output.splitlines() if line.startswith(("fatal:", "        \"skipped: "))))
    return run, before, {name: fault.digest() for name, fault in faults.items()}


def refused_drives(run: testing.PlaybookResult, host: str) -> dict[str, str]:
    """Each drive the host's check refused as in use, with what it said of it."""
    failed = re.search(rf"^fatal: \[{host}\]: FAILED! => (\{{.*\}})$", run.output, re.M)
    assert failed, run.output[-4000:]
    message = json.loads(failed.group(1))["msg"]
    return dict(re.findall(r"(/dev/nvme\dn1): Expected: not in use Actual: (.*?)(?=; /dev/nvme\dn1: |\. In use: )",
                           message))


@pytest.mark.parametrize("name", [n for n in FAULTS if n != "weka_list_unreadable"])
def test_a_drive_in_use_or_unreadable_is_refused_naming_why_and_keeps_its_data(name: str, planted, deployed) -> None:
    fault = planted[name]
    if isinstance(fault, str):
        pytest.skip(fault)
    run, before, after = deployed
    assert run.recap["wipe01"]["failed"] == 1, run.output[-4000:]
    refused = refused_drives(run, "wipe01")
    assert fault.named in refused.get(fault.drive, ""), refused
    assert after[name] == before[name]


def test_only_the_planted_drives_are_refused_and_nothing_was_wiped(planted, deployed) -> None:
    run, _, _ = deployed
    refused = refused_drives(run, "wipe01")
    assert sorted(refused) == sorted(f.drive for f in planted.values() if isinstance(f, Fault) and f.host == "wipe01")
    assert "TASK [nvme_storage : Erase the signatures" not in run.output  # the wipe ran on no host


def test_every_drive_is_left_alone_where_weka_is_installed_and_its_drive_list_unreadable(planted, deployed) -> None:
    """A present drive with a swap signature, wiping allowed: left alone as possibly Weka's (before,
    only a drive gone from the kernel was), byte for byte; the host's run does not fail."""
    fault = planted["weka_list_unreadable"]
    assert isinstance(fault, Fault)
    run, before, after = deployed
    assert run.recap["wipe02"]["failed"] == 0, run.output[-4000:]
    assert "skipped: drives owned by Weka left alone (no wipe, no scheduler): " + fault.named in run.output
    assert "/dev/nvme5n1: Weka is installed here" in run.output  # every drive, not only the one carrying data
    assert after["weka_list_unreadable"] == before["weka_list_unreadable"]
