"""A measured figure with its direction, kept in ``Result.data["metrics"]`` so runs can be compared."""

from __future__ import annotations

from typing import Any

from racfg.inventory.model import Reference
from racfg.results import Result, Status, expected_actual


def metric(name: str, value: float, unit: str, better: str = "higher") -> dict[str, Any]:
    return {"name": name, "value": round(float(value), 6), "unit": unit, "better": better}


def reference_bounds(ref: Reference) -> tuple[float | None, float | None]:
    """ReFrame's relative bounds as absolute values (None: unbounded on that side)."""
    lower = ref.value * (1 + ref.lower) if ref.lower is not None else None
    upper = ref.value * (1 + ref.upper) if ref.upper is not None else None
    return lower, upper


def within(value: float, ref: Reference) -> bool:
    lower, upper = reference_bounds(ref)
    return (lower is None or value >= lower) and (upper is None or value <= upper)


def reference_text(ref: Reference) -> str:
    """``10.8 GB/s (-10%/+inf)``: the value and its bounds, as ReFrame prints a reference."""
    low = f"{ref.lower * 100:+.0f}%" if ref.lower is not None else "-inf"
    high = f"{ref.upper * 100:+.0f}%" if ref.upper is not None else "+inf"
    return f"{ref.value:g} {ref.unit} ({low}/{high})"


def reference_margin(value: float, ref: Reference) -> float:
    """How far ``value`` lies inside its reference's bounds, as a share of the reference value: >= 0 within
    them (``within``), < 0 outside by that much; 0 for a reference bounded on neither side."""
    lower, upper = reference_bounds(ref)
    sides = [value - lower if lower is not None else None, upper - value if upper is not None else None]
    known = [s for s in sides if s is not None]
    if not known:
        return 0.0
    return min(known) / abs(ref.value) if ref.value else min(known)


def reference_result(target: str, check: str, category: str, value: float, unit: str, ref: Reference | None,
                     message: str, data: dict[str, Any], unjudged_reason: str) -> Result:
    """A figure against a ReFrame-style reference; without one it is reported and not judged."""
    actual = f"{value:.4g} {unit}"
    if ref is None:
        return Result(target, check, category, Status.SKIP, f"{message}; not judged: {unjudged_reason}",
                      None, actual, data=data)
    ok = within(value, ref)
    expected = reference_text(ref)
    return Result(target, check, category, Status.PASS if ok else Status.FAIL,
                  message if ok else f"{expected_actual(expected, actual)}; {message}", expected, actual,
                  data=data)


