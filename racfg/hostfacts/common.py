"""Text helpers the tool parsers share: line endings, ``key: value`` blocks, JSON, "N/A" values."""

from __future__ import annotations

import json
import re
from typing import Any

from racfg.hostfacts.parse_error import ParseError

# What tools print for "no value": nvidia-smi "N/A" and "[N/A]", lsblk null/"", ethtool "Unknown!".
_ABSENT = {"", "n/a", "[n/a]", "none", "null", "unknown", "unknown!", "[not supported]", "not supported"}


def lines(text: str | bytes) -> list[str]:
    """The output's lines without line ends: CRLF captures and bytes from an SSH channel read the same."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def require_text(text: str | bytes, tool: str) -> list[str]:
    """:func:`lines`, refusing output that is empty (the command printed nothing, or was not run)."""
    result = lines(text)
    if not any(line.strip() for line in result):
        raise ParseError(tool, "no output")
    return result


def absent(value: str | None) -> bool:
    """True for the ways tools spell "no value" (N/A, [N/A], Unknown!, empty)."""
    return value is None or value.strip().lower() in _ABSENT


def optional_int(value: Any, tool: str, what: str) -> int | None:
    """An integer, or None where the tool printed "N/A"; anything else is a :class:`ParseError`."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if absent(text):
        return None
    try:
        return int(text, 0) if text.lower().startswith("0x") else int(text)
    except ValueError:
        raise ParseError(tool, f"{what}: expected a number, got {text!r}") from None


def split_key_value(line: str, sep: str = ":") -> tuple[str, str] | None:
    """``"   Speed: 100000Mb/s"`` -> ``("Speed", "100000Mb/s")``; None for a line without ``sep``."""
    key, found, value = line.partition(sep)
    if not found:
        return None
    return key.strip(), value.strip()


def load_json(text: str | bytes, tool: str) -> Any:
    """Parsed JSON output; text before the first bracket (a warning, an echoed ``^C``) is skipped."""
    raw = "\n".join(lines(text))
    starts = [i for i in (raw.find("{"), raw.find("[")) if i >= 0]
    if not starts:
        raise ParseError(tool, f"expected JSON, got {raw.strip()[:80]!r}")
    try:
        return json.loads(raw[min(starts):])
    except json.JSONDecodeError as exc:
        raise ParseError(tool, f"output is not valid JSON ({exc.msg} at line {exc.lineno})") from None


_NUMBER_RE = re.compile(r"[-+]?\d+(?:\.\d+)?")


def first_number(text: str, tool: str, what: str) -> float:
    """The first number in ``text`` (``"200 Gb/sec (4X HDR)"`` -> 200.0); no number is a ParseError."""
    match = _NUMBER_RE.search(text)
    if match is None:
        raise ParseError(tool, f"{what}: expected a number, got {text!r}")
    return float(match.group(0))
