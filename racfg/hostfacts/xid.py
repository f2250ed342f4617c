"""Xid and SXid events in the kernel log: the NVIDIA driver's report of a GPU (or NVSwitch) fault.

Read from ``journalctl -k -b`` or ``dmesg`` in any of their time formats (``[uptime]``, ``dmesg -T``,
``--ctime``, ``--time-format=iso``): the event is found by its ``NVRM: Xid (PCI:DOMAIN:BUS:DEV): N,``
text wherever the line starts. Meanings are NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors);
the ones an application can cause by itself (a bad kernel, an out-of-range access, a hung context)
are marked so a check can tell them from a failing board.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from racfg.hostfacts.common import lines

TOOL = "kernel log"

XID_MEANINGS: dict[int, str] = {
    8: "GPU stopped processing",
    13: "Graphics Engine Exception",
    31: "GPU memory page fault",
    32: "Invalid or corrupted push buffer stream",
    38: "Driver firmware error",
    43: "GPU stopped processing (channel reset)",
    45: "Preemptive cleanup, due to previous errors",
    48: "Double Bit ECC Error",
    61: "Internal micro-controller breakpoint/warning",
    62: "Internal micro-controller halt",
    63: "ECC page retirement or row remapping recording event",
    64: "ECC page retirement or row remapper recording failure",
    68: "Video processor exception",
    69: "Graphics Engine class error",
    74: "NVLink Error",
    79: "GPU has fallen off the bus",
    92: "High single-bit ECC error rate",
    94: "Contained ECC error",
    95: "Uncontained ECC error",
    109: "Context Switch Timeout Error",
    119: "GSP RPC Timeout",
    120: "GSP Error",
    121: "C2C Link corrected error",
    140: "Unrecovered ECC Error",
}
# Xids a user program causes on healthy hardware (NVIDIA's catalogue lists "user application
# error" among their causes); the others point at the board, its memory, its links or the driver.
APPLICATION_XIDS = frozenset({13, 31, 32, 43, 45, 68, 69, 109})

# One event line (the node check compiles the same pattern: racfg.render.node_check carries it as data).
EVENT_PATTERN = (r"(?:(?P<switch>nvidia-nvswitch\d+): )?(?P<kind>NVRM: Xid|SXid) \(PCI:(?P<pci>[0-9A-Fa-f:.]+)\): "
                 r"(?P<code>\d+), ?(?P<text>.*)$")
_EVENT_RE = re.compile(EVENT_PATTERN)


@dataclass(frozen=True)
class XidEvent:
    """One Xid (GPU) or SXid (NVSwitch) line. ``pci`` as the driver prints it (``0000:9b:00``)."""

    code: int
    pci: str
    text: str
    switch: str | None = None  # "nvidia-nvswitch0" for an SXid

    @property
    def meaning(self) -> str:
        if self.switch is not None:
            return "NVSwitch error" + (" (fatal)" if "fatal" in self.text.lower() else "")
        return XID_MEANINGS.get(self.code, "see NVIDIA's Xid catalogue")

    @property
    def application(self) -> bool:
        """True when a user program alone can cause this event."""
        return self.switch is None and self.code in APPLICATION_XIDS

    @property
    def bus(self) -> str:
        """``bus:device`` in lower case (``9b:00``), the part nvidia-smi's bus id shares with it."""
        return bus_key(self.pci)


def bus_key(pci: str) -> str:
    """``0000:9b:00`` / ``00000000:9B:00.0`` -> ``9b:00``: one key for the kernel's and nvidia-smi's forms."""
    parts = pci.lower().split(".")[0].split(":")
    return ":".join(parts[-2:])


def parse_kernel_log(text: str | bytes) -> list[XidEvent]:
    """Every Xid and SXid event in a kernel log, in order; no event is an empty list (a clean log)."""
    events = []
    for line in lines(text):
        match = _EVENT_RE.search(line)
        if match:
            events.append(XidEvent(int(match["code"]), match["pci"], match["text"].strip(), match["switch"]))
    return events


def summarise(events: list[XidEvent], names: dict[str, str] | None = None) -> list[str]:
    """One line per (device, code): ``GPU 00000000:9B:00.0: Xid 119 GSP RPC Timeout (5x)``.
    ``names`` maps a :func:`bus_key` to the GPU's name (its nvidia-smi bus id)."""
    counts: dict[tuple[str, str, int], int] = {}
    meanings: dict[tuple[str, str, int], str] = {}
    for event in events:
        device = event.switch or f"GPU {(names or {}).get(event.bus, event.pci)}"
        key = (device, "SXid" if event.switch else "Xid", event.code)
        counts[key] = counts.get(key, 0) + 1
        meanings[key] = event.meaning
    return [f"{device}: {kind} {code} {meanings[(device, kind, code)]}" + (f" ({n}x)" if n > 1 else "")
            for (device, kind, code), n in counts.items()]
