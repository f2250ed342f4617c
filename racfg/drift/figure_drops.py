"""Performance drift, item by item: the baseline's figure then, the figures measured now, and whether
the difference is a drop beyond the item's own noise.

Pure functions over the items of two performance records (racfg.baseline.performance: key, value,
unit, better, readings, spread), so the whole verdict is unit-tested on recorded runs.

Why a noise floor per kind: a baseline item usually holds one reading (smoke measures again only an
item that missed its mark), so its own spread is unknown; the spread of its readings then and now
counts where it was measured, and a floor per kind of figure (``acceptance.noise``) where not:
a shaped link repeats within a percent or two, a drive read through a shared CPU within several.
A drop is called only when the item's best reading now (after drift measured it again) is still
worse than the figure then by more than that noise: one low reading is noise until it repeats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from racfg.baseline.performance import spread
from racfg.smoke.units import pct

# The kind of a figure: the first word of its metric key (racfg.smoke.metrics), one smoke phase each.
PHASE_OF_KIND = {"link": "links", "scaling": "scaling", "spine": "scaling", "storage": "storage",
                 "rdma": "rdma", "nccl": "nccl", "benchmark": "benchmark"}


def kind_of(key: str) -> str:
    """``link`` of ``link.read.dgx01:data0``: the figure's kind, which names its phase and noise floor."""
    return key.split(".", 1)[0]


@dataclass(frozen=True)
class ItemDrift:
    """One baseline item compared with now. ``now`` is None when the item was not measured now."""

    key: str
    then: float
    now: float | None
    unit: str
    better: str  # "higher" or "lower"
    readings_then: tuple[float, ...]
    readings_now: tuple[float, ...]
    noise: float  # the fraction a difference must exceed to be a drop
    noise_source: str  # what the noise figure is: "its readings' spread" or "the floor for links"

    @property
    def drop(self) -> float | None:
        """How much worse the best reading now is than then, as a fraction of then (negative: better now)."""
        if self.now is None or not self.then:
            return None
        change = (self.then - self.now) / self.then
        return change if self.better == "higher" else -change

    @property
    def beyond_noise(self) -> bool:
        drop = self.drop
        return drop is not None and drop > self.noise

    def sentence(self) -> str:
        """``link.read.dgx01:data0: 248 -> 233 Mbit/s (-6.0%), beyond its noise (3.0%, the floor for links)``."""
        unit = f" {self.unit}" if self.unit else ""
        if self.now is None:
            return f"{self.key}: {self.then:.4g}{unit} then, not measured now"
        drop = self.drop or 0.0
        way = "beyond" if self.beyond_noise else "within"
        return (f"{self.key}: {self.then:.4g} -> {self.now:.4g}{unit} ({-drop:+.1%}), {way} its noise "
                f"({pct(self.noise)}, {self.noise_source})")

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "then": self.then, "now": self.now, "unit": self.unit, "better": self.better,
                "readings_then": list(self.readings_then), "readings_now": list(self.readings_now),
                "drop": None if self.drop is None else round(self.drop, 5), "noise": round(self.noise, 5),
                "noise_source": self.noise_source, "beyond_noise": self.beyond_noise}


def best(values: tuple[float, ...], better: str) -> float:
    return max(values) if better == "higher" else min(values)


def compare_item(then: Mapping[str, Any], readings_now: tuple[float, ...], floors: Mapping[str, float]) -> ItemDrift:
    """One baseline item (as recorded) against its readings now (empty: not measured now)."""
    key, better = str(then["key"]), str(then.get("better", "higher"))
    readings_then = tuple(float(v) for v in then.get("readings") or [then["value"]])
    kind = kind_of(key)
    floor = float(floors.get(kind, floors.get("default", 0.05)))
    noise, source = floor, f"the floor for {kind} figures"
    for label, values in (("its readings' spread then", readings_then), ("its readings' spread now", readings_now)):
        measured = spread(values)
        if measured is not None and measured > noise:
            noise, source = measured, label
    now = best(readings_now, better) if readings_now else None
    return ItemDrift(key, float(then["value"]), now, str(then.get("unit", "")), better, readings_then,
                     tuple(readings_now), noise, source)


def compare_items(then: Mapping[str, Mapping[str, Any]], now: Mapping[str, tuple[float, ...]],
                  floors: Mapping[str, float]) -> list[ItemDrift]:
    """Every baseline item against its readings now, in the baseline's order."""
    return [compare_item(item, now.get(key, ()), floors) for key, item in then.items()]


def suspects(drifts: list[ItemDrift]) -> list[ItemDrift]:
    """Items to measure again before a drop is called: beyond noise on what was measured so far."""
    return [d for d in drifts if d.beyond_noise]


CONDITION_TEXT = {"inventory_digest": "the inventory", "lab": "lab or real site",
                  "lab_shaping_mbit": "the lab's shaping"}


def condition_differences(then: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs between the baseline's measuring conditions and now's, one sentence each (a drop
    measured under other conditions is said to be, not silently compared)."""
    out = []
    for field, label in CONDITION_TEXT.items():
        if then.get(field) != now.get(field):
            if field == "lab_shaping_mbit":
                out += _shaping_differences(then.get(field) or {}, now.get(field) or {})
            else:
                out.append(f"{label} differs from the baseline's ({then.get(field)} then, {now.get(field)} now)")
    tools_then, tools_now = then.get("software") or {}, now.get("software") or {}
    for tool in sorted({*tools_then, *tools_now}):
        if tools_now.get(tool) and tools_then.get(tool) != tools_now.get(tool):  # a tool a pass did not run: not said
            out.append(f"{tool} differs from the baseline's ({tools_then.get(tool) or 'not recorded'} then, "
                       f"{tools_now.get(tool)} now)")
    return out


def _shaping_differences(then: Mapping[str, float], now: Mapping[str, float]) -> list[str]:
    return [f"the lab shapes {key} at {now.get(key)} Mbit/s now, {then.get(key)} Mbit/s in the baseline"
            for key in sorted({*then, *now}) if then.get(key) != now.get(key) and key in now]
