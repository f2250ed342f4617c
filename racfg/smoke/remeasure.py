"""An item's readings: which one decides its verdict, when it is measured again, and how they are kept.

A fault reproduces and noise does not: an item (a link in one direction, a scaling step, a figure)
whose readings all miss their mark is measured again, at most ``REMEASURE`` times, and its best
reading decides. Only that item is measured again, never its whole phase, so a re-measurement costs
one load's seconds and the other items keep the readings they had. ``measure_again`` and
``deciding_reading`` say when to stop and which reading decides (pure, for the verdicts);
``until_met`` is the loop that runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from racfg.results import Result

T = TypeVar("T")
Announce = Callable[[str], None]  # told before each re-measurement (progress; a test's fault is lifted there)


def until_met(readings: list[T], measure: Callable[[], T], margin: Callable[[T], float], limit: int,
              announce: Announce, what: str) -> list[T]:
    """Append readings of ``measure()`` to ``readings`` (which holds at least the first) while none meets
    its mark and the limit allows; returns ``readings``."""
    while measure_again([margin(r) for r in readings], limit):
        announce(f"{what}: below the mark, measured again ({len(readings)} of {limit})")
        readings.append(measure())
    return readings


REMEASURE = 2  # measurements again, at most, of an item whose readings all missed their mark
# The margin of a reading above what its links carry (racfg.smoke.link_ceiling): below any real reading's,
# so it is measured again like a miss and never decides over a reading that is one.
OVERSHOT = -1.0


@dataclass(frozen=True)
class Reading:
    """One measurement of one item as the report keeps it. ``margin`` is how far it is past its mark in
    the mark's own terms (share of line rate, E(n), share of the bound): >= 0 meets it, < 0 misses."""

    value: float
    unit: str
    margin: float
    text: str
    overshot: bool = False  # above what its links carry: a measurement error, no figure

    @property
    def meets(self) -> bool:
        return self.margin >= 0


def deciding_reading(margins: Sequence[float]) -> int:
    """Which of an item's readings its verdict stands on: the best (the largest margin; the first of equals).

    A fault (a cable at half speed, a port that came up slow, a shaper, a host short of CPU) caps
    every reading: it reproduces, and no re-measurement meets the mark. Noise (another process on a
    shared core, a stall of the scheduler, TCP finding its window late) lowers one reading and not
    the next. So one reading at the mark shows the item can meet it, and is what decides; the worst
    or the mean of the readings would fail the item on the noise that re-measuring is there to see
    through. When none meets the mark the best is still the one reported: even at its best, short.
    """
    if not margins:
        raise ValueError("an item with no reading has no verdict")
    return max(range(len(margins)), key=lambda i: (margins[i], -i))


def measure_again(margins: Sequence[float], limit: int) -> bool:
    """Whether an item is measured once more: no reading has met its mark yet and fewer than ``limit``
    re-measurements ran (the first reading is not one). A fault is measured ``limit + 1`` times in all."""
    return bool(margins) and all(m < 0 for m in margins) and len(margins) - 1 < limit


def with_readings(result: Result, readings: Sequence[Reading], limit: int) -> Result:
    """``result`` (judged on its deciding reading) with every reading: in ``data["readings"]`` always,
    and, when the item was measured more than once, in its message, which says so."""
    data = {**result.data, "readings": [{"value": round(r.value, 6), "unit": r.unit, "margin": round(r.margin, 5),
                                         "meets": r.meets, **({"overshot": True} if r.overshot else {})}
                                        for r in readings],
            "remeasured": len(readings) - 1, "remeasure_limit": limit}
    if len(readings) < 2:
        return replace(result, data=data)
    return replace(result, data=data, message=f"{result.message}; {readings_text(readings, limit)}")


def remeasure_notes(results: Sequence[Result]) -> list[str]:
    """One note per item measured more than once: a re-measured pass is folded away with the other passes
    on a terminal, and the note keeps it in sight in every report."""
    out = []
    for r in results:
        readings = r.data.get("readings", [])
        if len(readings) > 1:
            listed = ", ".join(f"{x['value']:.4g} {x['unit']}" + _mark(x["meets"], x.get("overshot", False))
                               for x in readings)
            out.append(f"{r.check}: measured {len(readings)} times ({listed}), at most {r.data['remeasure_limit']} "
                       f"re-measurements: {r.status}")
    return out


def readings_text(readings: Sequence[Reading], limit: int) -> str:
    """``measured 2 times (re-measured 1, at most 2): 217 Mbit/s (below the mark), 246 Mbit/s; ...``."""
    n = len(readings)
    listed = ", ".join(r.text + _mark(r.meets, r.overshot) for r in readings)
    best = deciding_reading([r.margin for r in readings])
    if readings[best].overshot:
        end = "every reading is above what the links carry: a measurement error, no figure"
    elif readings[best].meets:
        end = f"the best (reading {best + 1}) meets the mark and decides: a fault would have reproduced"
    else:
        end = "no reading meets the mark: the fault reproduced, the best is reported"
    return f"measured {n} times (re-measured {n - 1}, at most {limit}): {listed}; {end}"


def _mark(meets: bool, overshot: bool) -> str:
    return " (above what the links carry)" if overshot else "" if meets else " (below the mark)"
