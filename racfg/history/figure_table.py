"""The figures picked over the runs picked: one row per figure, one value per run, and the change
from the first run to the last; as a text table, JSON and CSV.

History reports and does not judge: smoke judged each run against its marks, ``drift --performance``
judges a drop against the baseline's noise. The change is (last - first) / |first| with the figure's
direction beside it, so a reader sees at once whether a minus is a loss (``better: higher``).
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import Any

from racfg.errors import UsageError
from racfg.history.key_figures import all_figures, key_figures
from racfg.history.run_figures import Figure, SmokeRun


@dataclass(frozen=True)
class FigureRow:
    """One figure over the runs: its value in each (None where that run did not measure it)."""

    name: str
    unit: str
    better: str
    values: tuple[float | None, ...]

    @property
    def change(self) -> float | None:
        """(last - first) / |first| over the runs that measured it; None with fewer than two or a first of 0."""
        known = [v for v in self.values if v is not None]
        if len(known) < 2 or known[0] == 0:
            return None
        return (known[-1] - known[0]) / abs(known[0])


@dataclass(frozen=True)
class History:
    site: str
    runs: tuple[SmokeRun, ...]
    rows: tuple[FigureRow, ...]


def pick_runs(runs: list[SmokeRun], since: str | None, last: int | None) -> list[SmokeRun]:
    """The runs from ``since`` (a run's name, or a date/time, UTC unless it says otherwise) on, the last
    ``last`` of them."""
    picked = runs
    if since is not None:
        named = [i for i, run in enumerate(runs) if run.name == since]
        if named:
            picked = runs[named[0]:]
        else:
            start = parse_since(since)
            picked = [run for run in runs if run.started >= start]
    return picked[-last:] if last else picked


def parse_since(value: str) -> datetime:
    try:
        start = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(f"history: --since {value}: neither a run's name nor a date",
                         hint="a run such as 20261128-115605-smoke, or 2026-11-28, or 2026-11-28T11:56") from None
    return start if start.tzinfo else start.replace(tzinfo=UTC)


def build_history(site: str, runs: list[SmokeRun], globs: list[str], every: bool) -> History:
    """The rows of the key figures (``every``: all figures), or of the figures matching ``globs``.

    A glob matches among every figure, per-item ones included, so ``--figure 'link.read.*'`` lists
    each link; a glob that matches none of the runs' figures is refused with the figures known."""
    per_run = [all_figures(run.figures) if every or globs else key_figures(run.figures) for run in runs]
    known: dict[str, Figure] = {}
    for figures in per_run:
        known.update(figures)
    if globs:
        for glob in globs:
            if not any(fnmatchcase(name, glob) for name in known):
                sample = ", ".join(sorted(key_figures({n: f for r in runs for n, f in r.figures.items()}),
                                          key=natural)[:12])
                raise UsageError(f"history: --figure {glob}: no figure of these runs matches",
                                 hint=f"key figures: {sample}; 'racfg history FILE --all' lists every one")
        known = {n: f for n, f in known.items() if any(fnmatchcase(n, g) for g in globs)}
    rows = tuple(FigureRow(name, known[name].unit, known[name].better,
                           tuple(figures[name].value if name in figures else None for figures in per_run))
                 for name in sorted(known, key=natural))
    return History(site, tuple(runs), rows)


def natural(name: str) -> list[Any]:
    """``scaling.aggregate.n2`` before ``scaling.aggregate.n10``."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)]


def when(run: SmokeRun) -> str:
    return run.started.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.0f}"


def percent(change: float | None) -> str:
    return "-" if change is None else f"{round(change, 3) or 0.0:+.1%}"  # never "-0.0%"


def as_text(history: History) -> str:
    """The runs, numbered, then one line per figure with its value in each numbered run."""
    lines = [f"site {history.site}: {len(history.runs)} smoke run(s)", ""]
    runs = [("#", "started (UTC)", "run", "outcome")]
    runs += [(str(i), when(r), r.name, r.outcome) for i, r in enumerate(history.runs, 1)]
    lines += columns(runs)
    lines.append("")
    figures = [("figure", "unit", "better", *(f"#{i}" for i in range(1, len(history.runs) + 1)), "change")]
    figures += [(row.name, row.unit or "-", row.better, *(number(v) for v in row.values), percent(row.change))
                for row in history.rows]
    lines += columns(figures, right_from=3)
    return "\n".join(lines)


def columns(rows: list[tuple[str, ...]], right_from: int | None = None) -> list[str]:
    """Rows padded to aligned columns; from ``right_from`` on, numbers aligned right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [cell.rjust(w) if right_from is not None and i >= right_from else cell.ljust(w)
                 for i, (cell, w) in enumerate(zip(row, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
    return out


def as_dict(history: History) -> dict[str, Any]:
    return {
        "site": history.site,
        "runs": [{"run": r.name, "started": r.started.isoformat(), "outcome": r.outcome, "record": str(r.path)}
                 for r in history.runs],
        "figures": [{"figure": row.name, "unit": row.unit, "better": row.better,
                     "values": dict(zip((r.name for r in history.runs), row.values, strict=True)),
                     "change": None if row.change is None else round(row.change, 6)}
                    for row in history.rows],
    }


def as_json(history: History) -> str:
    return json.dumps(as_dict(history), indent=2)


def as_csv(history: History) -> str:
    """Long form, one line per run and figure measured in it: what a spreadsheet or pandas pivots."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["started", "run", "outcome", "figure", "unit", "better", "value"])
    for i, run in enumerate(history.runs):
        for row in history.rows:
            if row.values[i] is not None:
                writer.writerow([run.started.isoformat(), run.name, run.outcome, row.name, row.unit, row.better,
                                 row.values[i]])
    return out.getvalue()
