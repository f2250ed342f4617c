"""``ethtool``: driver and firmware (``-i``), link settings (``ethtool IFACE``).

Formats read: ``ethtool -i`` of an inbox mlx5_core (ConnectX-4 Lx, fw 14.23.1020) and of a lab veth
(ethtool 6.1); ``ethtool IFACE`` of a ConnectX-3 at 40000Mb/s (published with spaces instead of tabs),
a veth at 10000Mb/s and a port-less bridge (``Speed: Unknown!``, ethtool 6.1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from racfg.hostfacts.common import absent, require_text, split_key_value
from racfg.hostfacts.parse_error import ParseError

TOOL = "ethtool"


@dataclass(frozen=True)
class DriverInfo:
    """``ethtool -i``: empty fields (a veth has no firmware or bus) are None."""

    driver: str
    version: str | None
    firmware_version: str | None
    bus_info: str | None


def parse_driver_info(text: str | bytes) -> DriverInfo:
    """Parse ``ethtool -i IFACE``."""
    fields = _pairs(require_text(text, TOOL))
    if not fields.get("driver"):
        raise ParseError(TOOL, "-i: no driver line")
    return DriverInfo(
        driver=fields["driver"],
        version=fields.get("version") or None,
        firmware_version=fields.get("firmware-version") or None,
        bus_info=fields.get("bus-info") or None,
    )


@dataclass(frozen=True)
class LinkSettings:
    """``ethtool IFACE``: ``speed_mbps`` None when the NIC says ``Unknown!`` (no link, no ports)."""

    interface: str
    speed_mbps: int | None
    duplex: str | None
    link_detected: bool | None
    port: str | None = None
    auto_negotiation: bool | None = None

    @property
    def speed_gbps(self) -> float | None:
        return None if self.speed_mbps is None else self.speed_mbps / 1000


_SETTINGS_RE = re.compile(r"^Settings for (\S+):\s*$")


def parse_link_settings(text: str | bytes) -> LinkSettings:
    """Parse ``ethtool IFACE`` (continuation lines of the link-mode lists are skipped)."""
    text_lines = require_text(text, TOOL)
    head = next((line for line in text_lines if line.strip()), "")
    match = _SETTINGS_RE.match(head.strip())
    if match is None:
        raise ParseError(TOOL, f"expected 'Settings for IFACE:', got {head.strip()[:80]!r}")
    fields = _pairs(text_lines[text_lines.index(head) + 1:])
    if "Speed" not in fields and "Link detected" not in fields:
        raise ParseError(TOOL, f"{match.group(1)}: neither Speed nor Link detected printed")
    return LinkSettings(
        interface=match.group(1),
        speed_mbps=_speed(fields.get("Speed")),
        duplex=None if absent(fields.get("Duplex")) or fields["Duplex"].startswith("Unknown") else fields["Duplex"],
        link_detected=_yes_no(fields.get("Link detected")),
        port=fields.get("Port") or None,
        auto_negotiation=_yes_no(fields.get("Auto-negotiation")),
    )


def _speed(value: str | None) -> int | None:
    if value is None or absent(value):
        return None
    match = re.fullmatch(r"(\d+)Mb/s", value)
    if match is None:
        raise ParseError(TOOL, f"Speed: expected like 100000Mb/s or Unknown!, got {value!r}")
    return int(match.group(1))


def _yes_no(value: str | None) -> bool | None:
    if value is None:
        return None
    if value.lower() in {"yes", "on"}:
        return True
    if value.lower() in {"no", "off"}:
        return False
    raise ParseError(TOOL, f"expected yes/no or on/off, got {value!r}")


def _pairs(text_lines: list[str]) -> dict[str, str]:
    """``key: value`` lines; the first occurrence of a key wins, lines without a colon are skipped."""
    fields: dict[str, str] = {}
    for line in text_lines:
        pair = split_key_value(line)
        if pair is not None and pair[0]:
            fields.setdefault(pair[0], pair[1])
    return fields
