"""bench/scale.py's verdicts on the per-size targets (issue 38's 128-host pod): a figure under its
ceiling is met, one over it or a command that failed is missed, memory counts for lab up, and a
command not run says so instead of passing."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from scale import Row, target_lines  # noqa: E402


def test_each_target_of_the_pod_is_judged_on_its_figure() -> None:
    rows = [Row(128, "lab up", 41.5, note="1.10 GiB PSS, 1.30 GiB MemAvailable", gib=1.3),
            Row(128, "validate", 31.2, note="exit 1"),  # findings are a result, the time still counts
            Row(128, "drift", 180.0, note="exit 1")]
    assert target_lines(rows, 128) == [
        "lab up 41.5 s [< 60 s], 1.30 GiB [< 1.5 GiB]: met",
        "validate 31.2 s [< 30 s]: missed",
        "drift 180.0 s [< 240 s]: met",
        "smoke [< 1200 s]: not measured",
    ]


def test_lab_up_over_its_memory_or_a_failed_command_is_missed_however_fast() -> None:
    rows = [Row(128, "lab up", 20.0, gib=1.6),
            Row(128, "drift", 12.0, note="exit 3: racfg drift: could not reach leaf1")]
    lines = target_lines(rows, 128)
    assert lines[0] == "lab up 20.0 s [< 60 s], 1.60 GiB [< 1.5 GiB]: missed"
    assert lines[2] == "drift 12.0 s [< 240 s]: missed (exit 3: racfg drift: could not reach leaf1)"


def test_sizes_without_targets_print_none() -> None:
    assert target_lines([Row(4, "validate", 2.0)], 4) == []
