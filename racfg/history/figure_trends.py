"""Each key figure's trend over the site's smoke runs, for the HTML report (``meta["trends"]``).

Why here: the earlier runs are read from the run records as ``racfg history`` reads them
(racfg.history.run_figures), and the figures followed are the same key figures
(racfg.history.key_figures), so the report's trends and ``racfg history`` never disagree. The run
being reported has no record yet when its report is made: its figures are appended last. Only the
last MAX_POINTS runs are kept, so a site with years of runs still draws a small line.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from racfg.history.key_figures import key_figures
from racfg.history.run_figures import Figure, read_site_runs
from racfg.results import Result

MAX_POINTS = 20
CURRENT_LABEL = "this run"


def result_figures(results: Iterable[Result]) -> dict[str, Figure]:
    """The figures the results keep (``data["metrics"]``), as the run records would give them."""
    out = {}
    for r in results:
        for m in r.data.get("metrics", []) if isinstance(r.data, dict) else []:
            out[m["name"]] = Figure(m["name"], float(m["value"]), str(m.get("unit", "")),
                                    "lower" if m.get("better") == "lower" else "higher")
    return out


def site_trends(runs_dir: Path, site: str, results: Iterable[Result]) -> dict[str, Any]:
    """``{figure: {"unit", "points": [[run label, value], ...]}}``, oldest first, the current run last;
    only the key figures this run has, over at most MAX_POINTS runs. A record that cannot be read is
    skipped (run_figures says why in ``racfg history``); the report is never refused for it."""
    current = key_figures(result_figures(results))
    earlier = [(run.started.strftime("%Y-%m-%d %H:%M"), key_figures(run.figures))
               for run in read_site_runs(runs_dir, site).runs[-(MAX_POINTS - 1):]]
    trends: dict[str, Any] = {}
    for name, figure in sorted(current.items()):
        points: list[list[Any]] = []
        for label, figures in earlier:
            if name in figures:
                points.append([label, figures[name].value])
        points.append([CURRENT_LABEL, figure.value])
        trends[name] = {"unit": figure.unit, "points": points}
    return trends
