"""The smoke runs of one site, read from the run records (``.racfg/runs/<time>-smoke/results.json``).

Why read the records and not keep a history file: the records are already the truth of each run,
kept whole; a second copy could drift from them. A record that cannot be read (an interrupted run
left no results, a file cut short or edited) is skipped with a warning naming it, never a
traceback: one bad record must not hide the others' figures. Nothing here writes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS_FILE = "results.json"
SMOKE_RUN = re.compile(r"^(\d{8}-\d{6})-smoke(?:-\d+)?$")  # RunRecord.create's names for smoke
OUTCOMES = {0: "pass", 1: "fail", 2: "refused", 3: "could not run", 130: "interrupted"}


@dataclass(frozen=True)
class Figure:
    """One measured figure of one run (racfg.smoke.metrics.metric)."""

    name: str
    value: float
    unit: str
    better: str  # "higher" or "lower"


@dataclass(frozen=True)
class SmokeRun:
    """One smoke run of the site: when, its record's name, its outcome and every figure it kept."""

    name: str
    path: Path
    started: datetime
    outcome: str
    figures: dict[str, Figure] = field(default_factory=dict)


@dataclass
class SiteRuns:
    """The site's smoke runs, oldest first, and the records skipped, each with why."""

    site: str
    runs_dir: Path
    runs: list[SmokeRun] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    other_sites: int = 0


def read_site_runs(runs_dir: Path, site: str) -> SiteRuns:
    """Every smoke record under ``runs_dir`` whose results are of ``site``, oldest first."""
    found = SiteRuns(site, runs_dir)
    if not runs_dir.is_dir():
        return found
    for path in sorted(p for p in runs_dir.iterdir() if SMOKE_RUN.match(p.name) and p.is_dir()):
        try:
            data = _results_of(path)
        except ValueError as exc:
            found.skipped.append(str(exc))
            continue
        if data["site"] != site:
            found.other_sites += 1
            continue
        try:
            found.runs.append(_run_of(path, data))
        except (ValueError, KeyError, TypeError) as exc:
            found.skipped.append(f"{path / RESULTS_FILE}: a figure cannot be read ({type(exc).__name__}: {exc})")
    found.runs.sort(key=lambda run: (run.started, run.name))
    return found


def _results_of(path: Path) -> dict[str, Any]:
    """The record's results as a dict with a command of smoke and a site; ValueError says why not."""
    target = path / RESULTS_FILE
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path}: no {RESULTS_FILE} (the run was interrupted before its results)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{target}: cannot be read ({exc})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{target}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("site"), str) or data.get("command") != "smoke":
        raise ValueError(f"{target}: not the results of a smoke run")
    return data


def _run_of(path: Path, data: dict[str, Any]) -> SmokeRun:
    figures = {}
    for result in data.get("results", []):
        for m in (result.get("data") or {}).get("metrics", []):
            figures[m["name"]] = Figure(m["name"], float(m["value"]), str(m.get("unit", "")),
                                        "lower" if m.get("better") == "lower" else "higher")
    return SmokeRun(path.name, path, started_of(path.name, data.get("started", "")), outcome_of(data), figures)


def started_of(name: str, started: str) -> datetime:
    """The run's start from its results (``2026-11-28T11:56:05+0000``), else from its record's name."""
    try:
        return datetime.strptime(started, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        stamp = SMOKE_RUN.match(name)
        return datetime.strptime(stamp.group(1) if stamp else name, "%Y%m%d-%H%M%S").replace(tzinfo=UTC)


def outcome_of(data: dict[str, Any]) -> str:
    """What the run's exit said: pass (0), fail (1), could not run (3); from its summary if it kept none."""
    code = data.get("exit_code")
    if isinstance(code, int) and code in OUTCOMES:
        return OUTCOMES[code]
    summary = data.get("summary") or {}
    return "fail" if summary.get("fail") else "could not run" if summary.get("error") else "pass"
