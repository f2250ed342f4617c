"""Name ranges: ``dgx[01:09]`` -> dgx01 .. dgx09 (Ansible's pattern syntax, zero padding kept)."""

from __future__ import annotations

import re

_RANGE = re.compile(r"\[(\d+):(\d+)\]")
MAX_RANGE = 100_000


def check_range(text: str) -> tuple[str, int, int, int, str] | None:
    """Check a name with at most one ``[a:b]`` range without expanding it: (head, first, last, zero
    padding width, tail), or None for a plain name. Raises ValueError."""
    matches = list(_RANGE.finditer(text))
    if not matches:
        if "[" in text or "]" in text:
            raise ValueError(f"{text!r}: a range is written [FIRST:LAST], e.g. dgx[01:09]")
        return None
    if len(matches) > 1:
        raise ValueError(f"{text!r}: only one [FIRST:LAST] range per name")
    match = matches[0]
    first, last = int(match.group(1)), int(match.group(2))
    if last < first:
        raise ValueError(f"{text!r}: range end {last} is before its start {first}")
    if last - first + 1 > MAX_RANGE:
        raise ValueError(f"{text!r}: range of {last - first + 1} names is too large")
    width = len(match.group(1)) if match.group(1).startswith("0") else 0
    head, tail = text[: match.start()], text[match.end():]
    if "[" in head + tail or "]" in head + tail:
        raise ValueError(f"{text!r}: stray bracket outside the [FIRST:LAST] range")
    return head, first, last, width, tail


def range_size(text: str) -> int:
    """How many names ``text`` expands to, without expanding it (0 for one that check_range refuses)."""
    match = _RANGE.search(text)
    if match is None:
        return 1
    return max(0, int(match.group(2)) - int(match.group(1)) + 1)


def expand_range(text: str) -> list[str]:
    """Expand at most one ``[a:b]`` range; width of ``a`` sets zero padding. Raises ValueError."""
    parts = check_range(text)
    if parts is None:
        return [text]
    head, first, last, width, tail = parts
    return [f"{head}{n:0{width}d}{tail}" for n in range(first, last + 1)]
