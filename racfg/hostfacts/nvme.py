"""NVMe drives and block devices: ``lsblk -J -b`` (what validate runs: util-linux is on every host,
nvme-cli is not).

Read into :class:`Drive` (path, model, serial, size in bytes) so a validator can compare a storage
host with the inventory's declared drives (``3.2T``). Formats read: ``lsblk --json --bytes --paths``
(util-linux 2.3x, numbers and nulls). In the virtual lab storage drives are loop devices: they have
no model or serial (None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from racfg.hostfacts.common import load_json, optional_int
from racfg.hostfacts.parse_error import ParseError


@dataclass(frozen=True)
class Drive:
    """One block device. ``type`` is lsblk's (disk, part, loop, lvm)."""

    path: str
    model: str | None
    serial: str | None
    size_bytes: int | None
    type: str = "disk"
    mountpoint: str | None = None


def _clean(value: Any) -> str | None:
    """Strip the padding vendors put in MODEL/VENDOR fields; empty and null are None."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _dev_path(name: str) -> str:
    return name if name.startswith("/") else f"/dev/{name}"


# ---------------------------------------------------------------------------------------------- lsblk


def parse_lsblk_json(text: str | bytes) -> list[Drive]:
    """Parse ``lsblk -J -b`` (children flattened after their parent). Without ``--paths`` names become
    ``/dev/NAME``; without ``-b`` sizes like ``"3T"`` are read with :func:`parse_size`."""
    tool = "lsblk"
    data = load_json(text, tool)
    if not isinstance(data, dict) or not isinstance(data.get("blockdevices"), list):
        raise ParseError(tool, "-J: no 'blockdevices' list")
    drives: list[Drive] = []

    def walk(devices: list[Any]) -> None:
        for device in devices:
            if not isinstance(device, dict) or not device.get("name"):
                raise ParseError(tool, "-J: a block device without a name")
            drives.append(_lsblk_drive({key.lower(): value for key, value in device.items()}, tool))
            walk(device.get("children") or [])

    walk(data["blockdevices"])
    return drives


def _lsblk_drive(device: dict[str, Any], tool: str) -> Drive:
    size = device.get("size")
    if isinstance(size, str) and not size.strip().isdigit() and size.strip():
        size_bytes: int | None = parse_size(size)
    else:
        size_bytes = optional_int(size, tool, "SIZE")
    return Drive(
        path=_dev_path(str(device["name"])), model=_clean(device.get("model")), serial=_clean(device.get("serial")),
        size_bytes=size_bytes, type=_clean(device.get("type")) or "disk", mountpoint=_clean(device.get("mountpoint")),
    )


def disks(drives: list[Drive]) -> list[Drive]:
    """Whole drives only (lsblk types disk and loop: the lab's storage drives are loop devices)."""
    return [drive for drive in drives if drive.type in {"disk", "loop"}]


# ---------------------------------------------------------------------------------------------- sizes

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTPE]?)(i?)(B?)\s*$", re.IGNORECASE)
_POWERS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}


def parse_size(text: str, *, binary_short: bool = False) -> int:
    """``"3.2T"`` -> 3_200_000_000_000 bytes; ``"1.09 TiB"`` binary; ``"512.11  GB"``; ``"960197124096"``.

    Units without ``i`` are decimal, as drive vendors (and ``nvme list``) use them; ``binary_short``
    reads bare ``K/M/G/T`` as binary instead, the way ``lsblk`` without ``-b`` prints sizes.
    """
    match = _SIZE_RE.match(str(text))
    if match is None:
        raise ParseError("size", f"not a size: {text!r} (expected like 3.2T, 1.09 TiB or 3200631791616)")
    number, unit, binary, _byte = match.groups()
    power = _POWERS[unit.upper()]
    base = 1024 if binary or (binary_short and not _byte) else 1000
    return round(float(number) * base**power)


def sizes_match(declared: str | int, actual_bytes: int, *, tolerance: float = 0.05) -> bool:
    """True when a drive of ``actual_bytes`` is the ``declared`` size (``"3.2T"`` vs 3200631791616).

    Vendors round capacities in decimal units and namespaces are a little under or over the label, and a
    declaration may be meant as binary ("3.2T" as TiB) — so each reading is allowed ``tolerance`` (5 %).
    """
    if isinstance(declared, int):
        candidates = {declared}
    else:
        candidates = {parse_size(declared), parse_size(declared, binary_short=True)}
    return any(abs(actual_bytes - size) <= tolerance * size for size in candidates)
