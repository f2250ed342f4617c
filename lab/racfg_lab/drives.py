"""Storage drives as real block devices: sparse files on loop devices, bound into the machine.

Validators and roles look for the inventory's NVMe paths (``/dev/nvme0n1`` ...) and expect
block devices they can ``fio`` and ``lsblk``; a loop device on a sparse file is one, costs no
disk until written, and ``systemd-nspawn --bind=/dev/loopN:/dev/nvme0n1`` shows it under the
inventory's name. It is not an NVMe controller: ``nvme list`` will not see it.

Each drive's reads are shaped (``shaping``) by the kernel's block throttle, as the lab's links are
shaped: an unshaped loop device reads page cache as fast as the CPUs copy it, so two healthy drives
read at once differ by what the scheduler gave each (0.89-1.00 of each other, measured on this lab's
two CPUs under load), while shaped ones read 0.99-1.00 of each other. The lab's drives share one
budget (``LAB_READ_BYTES_PER_S``, ``LAB_READ_IOPS``), so fio on every storage host at once stays far
from the CPUs' limit however many drives the site declares. A drive slowed on purpose
(racfg_lab.api.throttle_drive) is shaped lower.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from racfg_lab import names
from racfg_lab.sh import ok, run

DEFAULT_SIZE = os.environ.get("RACFG_LAB_DRIVE_SIZE", "1G")
LAB_READ_BYTES_PER_S = 2_000_000_000  # every drive of a lab at once: a fifth of what two CPUs copy
LAB_READ_IOPS = 40_000  # their random reads, 4 KiB each
DRIVE_READ_BYTES_PER_S = 250_000_000  # one drive's at most (a lab of few drives)
DRIVE_READ_IOPS = 10_000
BLKIO = Path("/sys/fs/cgroup/blkio")  # the cgroup v1 block throttle (the lab machine's hybrid hierarchy)
UNSHAPED = (f"drives are not shaped (no cgroup v1 block throttle at {BLKIO}): they read as fast as the CPUs copy, "
            "and smoke's storage figures are the CPUs'")
_UNITS = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def size_bytes(text: str | None) -> int:
    """``1G`` / ``512M`` / ``3.84T`` -> bytes (binary units; the lab only needs an order of magnitude)."""
    raw = (text or DEFAULT_SIZE).strip().upper().removesuffix("B").removesuffix("I")
    if raw and raw[-1] in _UNITS:
        return int(float(raw[:-1]) * _UNITS[raw[-1]])
    return int(float(raw))


def drive_file(site_dir: Path, host: str, path: str) -> Path:
    return site_dir / "drives" / f"{host}-{Path(path).name}{names.DRIVE_SUFFIX}"


def attach(backing: Path, size: int, drive_count: int) -> str:
    """Create the sparse file (if new) and a loop device on it, its reads shaped as one of the lab's
    ``drive_count`` drives where the kernel can (``shaping``); returns ``/dev/loopN``."""
    backing.parent.mkdir(parents=True, exist_ok=True)
    device = loops_by_file().get(str(backing))
    if device is None:
        with open(backing, "ab") as handle:
            if handle.tell() < size:
                handle.truncate(size)
        device = run(["losetup", "--find", "--show", str(backing)]).stdout.strip()
    if can_shape():
        shape(device, *shaping(drive_count))
    return device


def can_shape() -> bool:
    return (BLKIO / "blkio.throttle.read_bps_device").exists()


def shaping(drive_count: int) -> tuple[int, int]:
    """Each drive's read rate and IOPS in a lab of ``drive_count`` drives: the lab's budget shared."""
    count = max(1, drive_count)
    return min(DRIVE_READ_BYTES_PER_S, LAB_READ_BYTES_PER_S // count), min(DRIVE_READ_IOPS, LAB_READ_IOPS // count)


def shape(device: str, read_bytes_per_s: int, read_iops: int) -> None:
    """Hold the reads of ``device`` to ``read_bytes_per_s`` and ``read_iops`` (0, 0: unshaped); a rule per
    device number, so it touches no other device. Raises OSError where the kernel has no cgroup v1
    block throttle."""
    rdev = Path(device).stat().st_rdev
    number = f"{os.major(rdev)}:{os.minor(rdev)}"
    (BLKIO / "blkio.throttle.read_bps_device").write_text(f"{number} {read_bytes_per_s}\n")
    (BLKIO / "blkio.throttle.read_iops_device").write_text(f"{number} {read_iops}\n")


def loops_by_file() -> dict[str, str]:
    """Every loop device this machine has, by backing file."""
    proc = run(["losetup", "-J", "-l"], check=False, quiet=True)
    try:
        devices = json.loads(proc.stdout or "{}").get("loopdevices", [])
    except ValueError:
        return {}
    return {d["back-file"].removesuffix(" (deleted)"): d["name"] for d in devices if d.get("back-file")}


def detach_lab_loops(site_dir: Path | None) -> list[str]:
    """Detach loop devices backed by lab drive files (of one site dir, or of any lab when None)."""
    gone = []
    for backing, device in loops_by_file().items():
        if not backing.endswith(names.DRIVE_SUFFIX):
            continue
        if site_dir is not None and not backing.startswith(str(site_dir) + "/"):
            continue
        if can_shape():  # the rule outlives the detach (the loop device stays): the next user gets it unshaped
            shape(device, 0, 0)
        ok(["losetup", "-d", device])
        gone.append(device)
    return gone
