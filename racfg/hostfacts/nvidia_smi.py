"""``nvidia-smi``: driver, GPUs, persistence and ECC (``-q -x``), NVLink (``nvlink --status``).

Formats read (recordings in tests/hostfacts/fixtures): ``nvidia-smi -q -x`` with DTD ``nvsmi_device_v11``
(drivers 460.73.01 V100S, 510.47.03 P100, 515.105.01 T4), ``nvsmi_device_v12`` (535.54.03 A100, whose
ECC counters are ``sram_*``/``dram_*`` instead of ``single_bit``/``double_bit``) and ``nvsmi_device_v13``
(580.159.04 H100, tests/recordings/h100-device: SRAM uncorrectable split in parity and SECDED); ``nvidia-smi nvlink
--status`` of a DGX-1 (410-era driver; newer drivers add ``(UUID: ...)`` and print ``<inactive>`` links).
From ``-q -x`` also the
health the acceptance checks read: the PCIe link, clock slowdown reasons (``clocks_throttle_reasons``
before driver 530, ``clocks_event_reasons`` after), retired pages (Volta and older) and remapped rows
(Ampere and later; "N/A" on the others).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from racfg.hostfacts.common import absent, optional_int, require_text
from racfg.hostfacts.parse_error import ParseError

TOOL = "nvidia-smi"


@dataclass(frozen=True)
class EccErrors:
    """Uncorrectable (and correctable) ECC error totals; None where the GPU reports "N/A"."""

    volatile_uncorrectable: int | None
    aggregate_uncorrectable: int | None
    volatile_correctable: int | None = None
    aggregate_correctable: int | None = None


@dataclass(frozen=True)
class PcieLink:
    """The GPU's PCIe link: the generation and width it can train at (max) and is running at now.
    The current generation drops at idle to save power, the width does not."""

    max_gen: int | None
    current_gen: int | None
    max_width: int | None
    current_width: int | None


@dataclass(frozen=True)
class MemoryHealth:
    """Retired pages (pending: retired at the next reset) and remapped rows (pending / failed).
    None where the GPU has no such mechanism (N/A)."""

    retired_sbe: int | None = None
    retired_dbe: int | None = None
    retirement_pending: bool | None = None
    remap_correctable: int | None = None
    remap_uncorrectable: int | None = None
    remap_pending: bool | None = None
    remap_failed: bool | None = None


# Clock slowdown reasons that mean heat or power (or the board's slowdown signal) hold the clocks back.
SLOWDOWN_REASONS = ("sw_power_cap", "hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
                    "sw_thermal_slowdown")


@dataclass(frozen=True)
class Gpu:
    """One ``<gpu>`` of ``nvidia-smi -q -x``. Modes are True/False, None when "N/A" (no such feature)."""

    bus_id: str
    product_name: str
    uuid: str | None
    persistence_mode: bool | None
    ecc_mode: bool | None  # current, not pending: what the GPU runs with now
    ecc_mode_pending: bool | None
    ecc_errors: EccErrors | None
    pcie: PcieLink | None = None
    clock_reasons: dict[str, bool] = field(default_factory=dict)  # "hw_slowdown" -> active
    memory: MemoryHealth = field(default_factory=MemoryHealth)
    utilization: int | None = None  # percent busy now ("gpu_util"); 0 at idle

    @property
    def slowdowns(self) -> list[str]:
        """The heat or power slowdown reasons active now."""
        return [r for r in SLOWDOWN_REASONS if self.clock_reasons.get(r)]


@dataclass(frozen=True)
class NvidiaSmiLog:
    """``nvidia-smi -q -x``. ``attached_gpus`` is what the driver counts; ``gpus`` the elements present."""

    driver_version: str
    cuda_version: str | None
    attached_gpus: int | None
    gpus: tuple[Gpu, ...]


def parse_query_xml(text: str | bytes) -> NvidiaSmiLog:
    """Parse ``nvidia-smi -q -x`` (DTD v11, v12 and v13)."""
    body = "\n".join(require_text(text, TOOL))
    start = body.find("<")
    try:
        root = ET.fromstring(body[start:] if start >= 0 else body)
    except ET.ParseError as exc:
        raise ParseError(TOOL, f"-q -x output is not XML ({exc})") from None
    if root.tag != "nvidia_smi_log":
        raise ParseError(TOOL, f"-q -x: root element is <{root.tag}>, expected <nvidia_smi_log>")
    driver = _text(root, "driver_version")
    if not driver:
        raise ParseError(TOOL, "-q -x: no <driver_version>")
    gpus = tuple(_gpu(element) for element in root.findall("gpu"))
    return NvidiaSmiLog(
        driver_version=driver,
        cuda_version=_text(root, "cuda_version"),
        attached_gpus=optional_int(_text(root, "attached_gpus"), TOOL, "attached_gpus"),
        gpus=gpus,
    )


def _text(element: ET.Element, path: str) -> str | None:
    found = element.find(path)
    if found is None or found.text is None:
        return None
    value = found.text.strip()
    return None if absent(value) else value


def _enabled(element: ET.Element, path: str) -> bool | None:
    value = _text(element, path)
    if value is None:
        return None
    if value.lower() not in {"enabled", "disabled"}:
        raise ParseError(TOOL, f"-q -x: <{path}> is {value!r}, expected Enabled or Disabled")
    return value.lower() == "enabled"


def _gpu(element: ET.Element) -> Gpu:
    bus_id = _text(element, "pci/pci_bus_id") or element.get("id")
    name = _text(element, "product_name")
    if not bus_id or not name:
        raise ParseError(TOOL, "-q -x: a <gpu> without bus id or product name")
    return Gpu(
        bus_id=bus_id,
        product_name=name,
        uuid=_text(element, "uuid"),
        persistence_mode=_enabled(element, "persistence_mode"),
        ecc_mode=_enabled(element, "ecc_mode/current_ecc"),
        ecc_mode_pending=_enabled(element, "ecc_mode/pending_ecc"),
        ecc_errors=_ecc_errors(element.find("ecc_errors")),
        pcie=_pcie(element.find("pci/pci_gpu_link_info")),
        clock_reasons=_clock_reasons(element),
        memory=_memory(element),
        utilization=optional_int((_text(element, "utilization/gpu_util") or "").rstrip("% ") or None, TOOL,
                                 "gpu_util"),
    )


def _pcie(element: ET.Element | None) -> PcieLink | None:
    if element is None:
        return None
    width = {key: _text(element, f"link_widths/{key}") for key in ("max_link_width", "current_link_width")}
    return PcieLink(
        max_gen=optional_int(_text(element, "pcie_gen/max_link_gen"), TOOL, "max_link_gen"),
        current_gen=optional_int(_text(element, "pcie_gen/current_link_gen"), TOOL, "current_link_gen"),
        max_width=optional_int(width["max_link_width"].rstrip("x") if width["max_link_width"] else None, TOOL,
                               "max_link_width"),
        current_width=optional_int(width["current_link_width"].rstrip("x") if width["current_link_width"] else None,
                                   TOOL, "current_link_width"),
    )


def _clock_reasons(element: ET.Element) -> dict[str, bool]:
    """``clocks_throttle_reason_hw_slowdown`` / ``clocks_event_reason_hw_slowdown`` -> ``hw_slowdown``."""
    for tag, prefix in (("clocks_event_reasons", "clocks_event_reason_"),
                        ("clocks_throttle_reasons", "clocks_throttle_reason_")):
        block = element.find(tag)
        if block is not None:
            return {child.tag.removeprefix(prefix): (child.text or "").strip() == "Active" for child in block}
    return {}


def _yes(element: ET.Element, path: str) -> bool | None:
    value = _text(element, path)
    return None if value is None else value.lower() == "yes"


def _memory(element: ET.Element) -> MemoryHealth:
    def count(path: str) -> int | None:
        return optional_int(_text(element, path), TOOL, path)

    return MemoryHealth(
        retired_sbe=count("retired_pages/multiple_single_bit_retirement/retired_count"),
        retired_dbe=count("retired_pages/double_bit_retirement/retired_count"),
        retirement_pending=_yes(element, "retired_pages/pending_retirement"),
        remap_correctable=count("remapped_rows/remapped_row_corr"),
        remap_uncorrectable=count("remapped_rows/remapped_row_unc"),
        remap_pending=_yes(element, "remapped_rows/remapped_row_pending"),
        remap_failed=_yes(element, "remapped_rows/remapped_row_failure"),
    )


def _ecc_errors(element: ET.Element | None) -> EccErrors | None:
    if element is None:
        return None
    volatile, aggregate = element.find("volatile"), element.find("aggregate")
    return EccErrors(
        volatile_uncorrectable=_ecc_count(volatile, "double_bit/total", _UNCORRECTABLE),
        aggregate_uncorrectable=_ecc_count(aggregate, "double_bit/total", _UNCORRECTABLE),
        volatile_correctable=_ecc_count(volatile, "single_bit/total", ("sram_correctable", "dram_correctable")),
        aggregate_correctable=_ecc_count(aggregate, "single_bit/total", ("sram_correctable", "dram_correctable")),
    )


# v12's SRAM and DRAM sums; v13 (driver 580, tests/recordings/h100-device) has no SRAM sum: its parity and
# SECDED parts stand beside the DRAM count, so they are added in its place (only one form is ever present).
_UNCORRECTABLE = ("sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded",
                  "dram_uncorrectable")


def _ecc_count(scope: ET.Element | None, v11_total: str, v12_parts: tuple[str, ...]) -> int | None:
    """DTD v11 has a ``total`` per kind; v12 and v13 split SRAM and DRAM. Only direct children are
    read: v12 breaks ``sram_uncorrectable`` down into ``_parity``/``_secded`` children of it, which
    must not be added twice, while v13 prints those two as siblings with no SRAM sum at all."""
    if scope is None:
        return None
    if scope.find(v11_total) is not None:
        return optional_int(_text(scope, v11_total), TOOL, f"ecc {v11_total}")
    counts = [optional_int(_text(scope, part), TOOL, f"ecc {part}") for part in v12_parts]
    known = [count for count in counts if count is not None]
    return sum(known) if known else None


@dataclass(frozen=True)
class NvlinkGpu:
    """One GPU of ``nvidia-smi nvlink --status``: link number -> GB/s, None for an inactive link."""

    index: int
    name: str
    links: dict[int, float | None] = field(default_factory=dict)

    @property
    def up(self) -> int:
        return sum(1 for speed in self.links.values() if speed is not None)

    @property
    def down(self) -> int:
        return sum(1 for speed in self.links.values() if speed is None)

    @property
    def count(self) -> int:
        return len(self.links)


_NVLINK_GPU_RE = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: [^)]*\))?$")
_NVLINK_LINK_RE = re.compile(r"^Link (\d+): (?:([\d.]+) GB/s|<inactive>)$")
# Published copies of this output have "[snip]" where their author cut GPUs out: not tool output, skipped.
_EDITORIAL_RE = re.compile(r"^\[snip\]$", re.IGNORECASE)


def parse_nvlink_status(text: str | bytes) -> list[NvlinkGpu]:
    """Parse ``nvidia-smi nvlink --status`` into one entry per GPU (in the order printed)."""
    gpus: list[NvlinkGpu] = []
    for line in require_text(text, TOOL):
        stripped = line.strip()
        if not stripped or _EDITORIAL_RE.match(stripped):
            continue
        if gpu := _NVLINK_GPU_RE.match(stripped):
            gpus.append(NvlinkGpu(index=int(gpu.group(1)), name=gpu.group(2)))
        elif (link := _NVLINK_LINK_RE.match(stripped)) and gpus:
            gpus[-1].links[int(link.group(1))] = float(link.group(2)) if link.group(2) else None
        else:
            raise ParseError(TOOL, f"nvlink --status: unexpected line {stripped[:80]!r}")
    if not gpus:
        raise ParseError(TOOL, "nvlink --status: no GPU listed")
    return gpus


_UNIT_RE = re.compile(r"\s*\[[^\]]*\]$")
_FIELD_RE = re.compile(r"[a-z][a-z0-9_.]*")


def driver_branch(version: str) -> str:
    """``"418.67"`` -> ``"418"``: the driver branch an inventory pins (``"460.73.01"`` -> ``"460"``)."""
    match = re.fullmatch(r"\s*(\d+)(?:\.\d+)*\s*", version or "")
    if match is None:
        raise ParseError(TOOL, f"not a driver version: {version!r}")
    return match.group(1)
