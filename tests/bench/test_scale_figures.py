"""bench/scale.py's summary of alternating racfg / plain ansible-playbook pairs (issue 14's
"< 1.10x plain" target): the pooled ratio and its bootstrap interval decide what the bench prints."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from scale import PLAIN, RERUN, RUNNER, Row, pooled_ratio, ratio_lines, verdict  # noqa: E402

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


def rows_of(what: str, controllers: list[float]) -> list[Row]:
    return [Row(4, what, wall=10.0 * c, controller=c) for c in controllers]


def test_ansible_runner_alone_splits_racfgs_ratio_into_the_protocols_part_and_racfgs_own() -> None:
    """Rounds of the three re-runs: racfg over plain carries the target's verdict; the two parts
    (ansible-runner over plain, racfg over ansible-runner) are figures without one, and the i-th run
    of each kind is paired with the i-th of the other."""
    rows = rows_of(RERUN, [2.30, 2.20, 2.40, 2.25]) + rows_of(PLAIN, [2.0, 1.9, 2.1, 2.0]) \
        + rows_of(RUNNER, [2.15, 2.05, 2.25, 2.1])
    target, protocol, own = ratio_lines(rows, 4)
    assert target.startswith("racfg / plain") and target.endswith(": < 1.10x missed")  # pairs 1.13-1.16x
    assert f"over all pairs {9.15 / 8.0:.3f}x" in target and "< 1.10x" in target
    assert protocol.startswith("ansible-runner alone / plain") and f"over all pairs {8.55 / 8.0:.3f}x" in protocol
    assert own.startswith("racfg / ansible-runner alone") and f"over all pairs {9.15 / 8.55:.3f}x" in own
    assert "1.10x" not in protocol + own


def test_without_ansible_runner_alone_only_the_targets_ratio_is_printed() -> None:
    rows = rows_of(RERUN, [2.3, 2.2]) + rows_of(PLAIN, [2.0, 2.0])
    [line] = ratio_lines(rows, 4)
    assert line.startswith("racfg / plain") and "each pair 1.10x, 1.15x" in line and line.endswith("[< 1.10x]")
    assert ratio_lines(rows, 17) == []
