"""Storage drives as real block devices: sparse files on loop devices, bound into the machine.

Validators and roles look for the inventory's NVMe paths (``/dev/nvme0n1`` ...) and expect
block devices they can ``fio`` and ``lsblk``; a loop device on a sparse file is one, costs no
disk until written, and ``systemd-nspawn --bind=/dev/loopN:/dev/nvme0n1`` shows it under the
inventory's name. It is not an NVMe controller: ``nvme list`` will not see it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from racfg_lab import names
from racfg_lab.sh import ok, run

DEFAULT_SIZE = os.environ.get("RACFG_LAB_DRIVE_SIZE", "1G")
_UNITS = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def size_bytes(text: str | None) -> int:
    """``1G`` / ``512M`` / ``3.84T`` -> bytes (binary units; the lab only needs an order of magnitude)."""
    raw = (text or DEFAULT_SIZE).strip().upper().removesuffix("B").removesuffix("I")
    if raw and raw[-1] in _UNITS:
        return int(float(raw[:-1]) * _UNITS[raw[-1]])
    return int(float(raw))


def drive_file(site_dir: Path, host: str, path: str) -> Path:
    return site_dir / "drives" / f"{host}-{Path(path).name}{names.DRIVE_SUFFIX}"


def attach(backing: Path, size: int) -> str:
    """Create the sparse file (if new) and a loop device on it; returns ``/dev/loopN``."""
    backing.parent.mkdir(parents=True, exist_ok=True)
    existing = loops_by_file().get(str(backing))
    if existing:
        return existing
    with open(backing, "ab") as handle:
        if handle.tell() < size:
            handle.truncate(size)
    return run(["losetup", "--find", "--show", str(backing)]).stdout.strip()


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
        ok(["losetup", "-d", device])
        gone.append(device)
    return gone
