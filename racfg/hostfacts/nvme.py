"""NVMe drives and block devices: ``nvme list`` (JSON and text), ``lsblk -J -b`` and ``lsblk -P``.

All normalise to :class:`Drive` (path, model, serial, size in bytes) so a validator can compare a
storage host with the inventory's declared drives (``3.2T``) whatever tool answered. Formats read:
``nvme list -o json`` of nvme-cli 2.3 (flat ``Devices[]``), 2.11 (``Devices[].Subsystems[].Controllers[]
.Namespaces[]``) and an empty list; ``nvme list`` text of nvme-cli 1.x; ``lsblk --json --bytes --paths``
(util-linux 2.3x, numbers and nulls) and ``lsblk -P`` KEY="value" pairs (space-padded MODEL). In the
virtual lab storage drives are loop devices: they have no model or serial (None).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from racfg.hostfacts.common import lines, load_json, optional_int, require_text
from racfg.hostfacts.errors import ParseError


@dataclass(frozen=True)
class Drive:
    """One block device. ``type`` is lsblk's (disk, part, loop, lvm); ``nvme list`` drives are "disk"."""

    path: str
    model: str | None
    serial: str | None
    size_bytes: int | None
    type: str = "disk"
    firmware: str | None = None
    mountpoint: str | None = None


def _clean(value: Any) -> str | None:
    """Strip the padding vendors put in MODEL/VENDOR fields; empty and null are None."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _dev_path(name: str) -> str:
    return name if name.startswith("/") else f"/dev/{name}"


# ---------------------------------------------------------------------------------------------- nvme list


def parse_nvme_list_json(text: str | bytes) -> list[Drive]:
    """Parse ``nvme list -o json`` in the flat (nvme-cli 1.x-2.3) or subsystem (2.11+) format."""
    tool = "nvme list"
    data = load_json(text, tool)
    if not isinstance(data, dict) or not isinstance(data.get("Devices"), list):
        raise ParseError(tool, "-o json: no 'Devices' list")
    drives: list[Drive] = []
    for device in data["Devices"]:
        if not isinstance(device, dict):
            raise ParseError(tool, "-o json: a device entry is not an object")
        if "Subsystems" in device:
            drives.extend(_subsystem_drives(device["Subsystems"], tool))
        elif "DevicePath" in device:
            drives.append(Drive(
                path=device["DevicePath"], model=_clean(device.get("ModelNumber")),
                serial=_clean(device.get("SerialNumber")), firmware=_clean(device.get("Firmware")),
                size_bytes=optional_int(device.get("PhysicalSize"), tool, "PhysicalSize"),
            ))
        else:
            raise ParseError(tool, f"-o json: device without DevicePath or Subsystems ({sorted(device)[:5]})")
    return drives


def _subsystem_drives(subsystems: Any, tool: str) -> list[Drive]:
    drives: list[Drive] = []
    for subsystem in subsystems or []:
        for controller in subsystem.get("Controllers", []):
            for namespace in controller.get("Namespaces", []):
                drives.append(Drive(
                    path=_dev_path(namespace["NameSpace"]), model=_clean(controller.get("ModelNumber")),
                    serial=_clean(controller.get("SerialNumber")), firmware=_clean(controller.get("Firmware")),
                    size_bytes=optional_int(namespace.get("PhysicalSize"), tool, "PhysicalSize"),
                ))
        # Multipath namespaces hang off the subsystem instead of a controller.
        for namespace in subsystem.get("Namespaces", []):
            drives.append(Drive(
                path=_dev_path(namespace["NameSpace"]), model=None, serial=None,
                size_bytes=optional_int(namespace.get("PhysicalSize"), tool, "PhysicalSize"),
            ))
    return drives


def parse_nvme_list_text(text: str | bytes) -> list[Drive]:
    """Parse the ``nvme list`` table (nvme-cli 1.x; 2.x adds a Generic column, read by header position).

    The size is the namespace capacity (``512.11  GB`` right of the slash in Usage), in decimal units.
    """
    tool = "nvme list"
    text_lines = [line for line in require_text(text, tool) if line.strip()]
    if len(text_lines) < 2 or not text_lines[0].startswith("Node") or not set(text_lines[1]) <= {"-", " "}:
        raise ParseError(tool, "expected the 'Node ... SN ... Model' table header")
    # Column starts from the dashes line: header words (e.g. "FW Rev") may contain spaces.
    starts = [match.start() for match in re.finditer(r"-+", text_lines[1])]
    names = [text_lines[0][start:end].strip() for start, end in zip(starts, [*starts[1:], None], strict=True)]
    drives = []
    for line in text_lines[2:]:
        cells = dict(zip(names, _cut(line, starts), strict=True))
        usage = cells.get("Usage", "")
        capacity = usage.split("/")[-1].strip() if "/" in usage else None
        if not cells.get("Node", "").startswith("/dev/"):
            raise ParseError(tool, f"unexpected row {line.strip()[:80]!r}")
        drives.append(Drive(
            path=cells["Node"], model=_clean(cells.get("Model")), serial=_clean(cells.get("SN")),
            firmware=_clean(cells.get("FW Rev")), size_bytes=parse_size(capacity) if capacity else None,
        ))
    return drives


def _cut(line: str, starts: list[int]) -> list[str]:
    return [line[start:end].strip() for start, end in zip(starts, [*starts[1:], None], strict=True)]


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


def parse_lsblk_pairs(text: str | bytes) -> list[Drive]:
    """Parse ``lsblk -P`` / ``--pairs`` (``NAME="/dev/nvme0n1" SIZE="3200631791616" MODEL="..."``)."""
    tool = "lsblk"
    drives = []
    for line in lines(text):
        if not line.strip():
            continue
        try:
            words = shlex.split(line)
        except ValueError:
            raise ParseError(tool, f"-P: unbalanced quotes in {line.strip()[:80]!r}") from None
        pairs = [word.partition("=") for word in words]
        if not all(sep for _, sep, _ in pairs):
            raise ParseError(tool, f"-P: expected KEY=\"value\" pairs, got {line.strip()[:80]!r}")
        device = {key.lower(): value for key, _, value in pairs}
        if not device.get("name"):
            raise ParseError(tool, f"-P: no NAME in {line.strip()[:80]!r}")
        drives.append(_lsblk_drive(device, tool))
    if not drives:
        raise ParseError(tool, "no output")
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
