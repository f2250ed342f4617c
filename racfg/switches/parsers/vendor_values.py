"""Helpers the per-platform parsers share: loading JSON output, reading vendor numbers."""

from __future__ import annotations

import json
import re
from typing import Any

from racfg.catalog import parse_speed

_NUMBER_RE = re.compile(r"(\d+(?:\.\d+)?)")
_EMPTY = {"", "n/a", "n\\a", "none", "-"}


class ParseError(ValueError):
    """The output is not what the command prints (wrong command, truncated output, an error)."""


def load_json(raw: str | bytes | Any, command: str) -> Any:
    """JSON from a show command. Skips an echoed command or banner before the first bracket."""
    if not isinstance(raw, (str, bytes)):
        return raw
    text = raw.decode() if isinstance(raw, bytes) else raw
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ParseError(f"{command}: expected JSON output, got {text.strip()[:120]!r}")
    try:
        return json.loads(text[min(starts):])
    except json.JSONDecodeError as exc:
        raise ParseError(f"{command}: output is not valid JSON ({exc})") from exc


def first_int(text: str | int | None) -> int | None:
    """``"1500 bytes(Maximum packet size 1522 bytes)"`` -> 1500; ``"4K"`` -> 4096."""
    if text is None:
        return None
    if isinstance(text, int):
        return text
    value = str(text).strip()
    if re.fullmatch(r"\d+\s*[kK]", value):
        return int(value[:-1].strip()) * 1024
    match = _NUMBER_RE.search(value)
    return int(float(match.group(1))) if match else None


def speed_gbps(text: str | None) -> float | None:
    """``"100 Gbps"``, ``"40G"``, ``"edr"``, ``"100.0 Gbps"`` -> Gb/s; unknown or absent -> None."""
    if text is None:
        return None
    value = str(text).strip()
    if value.lower() in _EMPTY or value.lower() in ("unknown", "auto"):
        return None
    value = re.sub(r"\s*(bps|b/s)$", "", value, flags=re.I)
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([GM])?", value, flags=re.I)
    if match:
        number = float(match.group(1))
        return number / 1000 if (match.group(2) or "G").upper() == "M" else number
    try:
        return parse_speed(value)
    except ValueError:
        return None


def description(text: str | None) -> str:
    """Vendors print an empty description as ``N\\A`` or ``N/A``."""
    value = (text or "").strip()
    return "" if value.lower() in _EMPTY else value


def enabled(text: str | bool | None) -> bool:
    """``Enabled``, ``Up``, ``on``, ``true`` -> True."""
    if isinstance(text, bool):
        return text
    return str(text or "").strip().lower() in ("enabled", "enable", "up", "on", "true", "yes", "active")


def lookup(entry: dict[str, Any], *names: str) -> Any:
    """A field by any of its spellings, case-insensitive (vendors change case between releases)."""
    lowered = {k.lower(): v for k, v in entry.items()}
    for name in names:
        if name.lower() in lowered:
            return lowered[name.lower()]
    return None


def flatten_port_table(data: Any) -> list[tuple[str, dict[str, Any]]]:
    """Onyx JSON comes as ``[{"header": "Eth1/1", ...}]`` or ``{"Eth1/1": [{...}]}``: one shape out."""
    rows: list[tuple[str, dict[str, Any]]] = []
    if isinstance(data, list):
        for entry in data:
            if isinstance(entry, dict) and "header" in entry:
                rows.append((str(entry["header"]), entry))
    elif isinstance(data, dict):
        for name, value in data.items():
            entries = value if isinstance(value, list) else [value]
            merged: dict[str, Any] = {}
            for entry in entries:
                if isinstance(entry, dict):
                    merged.update(entry)
            rows.append((str(name), merged))
    return rows
