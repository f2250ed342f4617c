"""Measuring one item again while every reading of it misses its mark, a bounded number of times.

An item is one link in one direction, one scaling step or one figure: only that item is measured
again, never its whole phase, so a re-measurement costs one load's seconds and the other items
keep the readings they had. Which readings decide, and when to stop, is
``racfg.smoke.judge.readings.measure_again`` / ``deciding_reading``; this is the loop that runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from racfg.smoke.judge.readings import measure_again

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
