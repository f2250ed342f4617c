"""bench/scale.py's summary of alternating racfg / plain ansible-playbook pairs (issue 14's
"< 1.10x plain" target): the pooled ratio and its bootstrap interval decide what the bench prints."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from scale import pooled_ratio, verdict  # noqa: E402

# (racfg, plain) controller CPU-s of 4-host pairs measured on this machine, and what they allow
PAIRS = [(10.3, 8.4), (10.0, 9.0), (10.2, 11.6), (12.3, 12.0), (14.0, 13.6), (13.6, 12.1), (13.6, 12.4),
         (13.3, 11.0)]


def test_the_pooled_ratio_is_the_ratio_of_totals_and_lies_inside_its_interval() -> None:
    pooled, low, high = pooled_ratio(PAIRS)
    assert pooled == pytest.approx(sum(a for a, _ in PAIRS) / sum(b for _, b in PAIRS))
    assert low < pooled < high
    # the noisiest pair alone (0.88x) does not pull the interval below 1.0 nor above 1.2
    assert 1.0 < low < 1.08 < high < 1.2


def test_the_interval_is_the_same_every_time_and_narrows_as_pairs_agree() -> None:
    assert pooled_ratio(PAIRS) == pooled_ratio(PAIRS)
    steady = [(10.5, 10.0)] * 6
    assert pooled_ratio(steady) == pytest.approx((1.05, 1.05, 1.05))
    _, low, high = pooled_ratio(PAIRS)
    _, low_more, high_more = pooled_ratio(PAIRS * 4)
    assert high_more - low_more < high - low


@pytest.mark.parametrize(("pairs", "expected"), [
    ([(10.4, 10.0), (10.6, 10.0), (10.3, 10.1), (10.5, 9.9)], "met"),
    ([(11.6, 10.0), (11.5, 10.1), (11.8, 9.9), (11.4, 10.0)], "missed"),
    (PAIRS, "not shown either way"),
])
def test_a_clear_pass_a_clear_overhead_and_an_open_case_are_told_apart(pairs: list[tuple[float, float]],
                                                                      expected: str) -> None:
    _, low, high = pooled_ratio(pairs)
    assert verdict(low, high) == expected
