"""``racfg smoke --compare RUN_A RUN_B``: the change of every metric between two runs.

Each smoke result keeps its figures in ``data["metrics"]`` with their direction (higher or lower
is better), so two campaigns (before and after a firmware update, a cable swap) compare figure
by figure. A change beyond the tolerance in the bad direction is a failure (exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from racfg.errors import UsageError
from racfg.paths import state_dir
from racfg.results import Report, Result, Status, expected_actual

RESULTS_FILE = "results.json"


def resolve_run(ref: str, option: str = "--compare") -> Path:
    """A run directory, its results.json, or a run name under ``.racfg/runs`` (``option`` names it in an error)."""
    for candidate in (Path(ref), state_dir() / "runs" / ref):
        if candidate.is_file():
            return candidate
        if (candidate / RESULTS_FILE).is_file():
            return candidate / RESULTS_FILE
    raise UsageError(f"{option}: no smoke run {ref!r} (no {RESULTS_FILE} there)",
                     hint=f"runs are kept under {state_dir() / 'runs'}")


def load_report(ref: str, option: str = "--compare") -> tuple[Path, Report]:
    path = resolve_run(ref, option)
    try:
        report = Report.from_dict(json.loads(path.read_text()))
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{option}: {path} is not a results file ({exc})") from None
    if report.command != "smoke":
        raise UsageError(f"{option}: {path} is a {report.command} run, not a smoke run")
    return path, report


def metrics_of(report: Report) -> dict[str, dict[str, Any]]:
    out = {}
    for result in report.results:
        for m in result.data.get("metrics", []):
            out[m["name"]] = m
    return out


def compare_reports(a: Report, b: Report, tolerance: float, names: tuple[str, str]) -> Report:
    """One result per metric found in both runs; metrics in only one are listed as skipped."""
    ma, mb = metrics_of(a), metrics_of(b)
    out = Report(command="smoke-compare", site=b.site, meta={"a": names[0], "b": names[1], "tolerance": tolerance})
    for name in sorted(set(ma) | set(mb)):
        if name not in ma or name not in mb:
            which = names[1] if name in mb else names[0]
            out.results.append(Result(name.split(".")[0], name, "compare", Status.SKIP, f"only in {which}"))
            continue
        va, vb, unit = float(ma[name]["value"]), float(mb[name]["value"]), mb[name].get("unit", "")
        higher = mb[name].get("better", "higher") == "higher"
        change = (vb - va) / abs(va) if va else (0.0 if vb == va else float("inf"))
        gain = change if higher else -change
        verdict = "better" if gain > tolerance else "worse" if gain < -tolerance else "same"
        text = f"{va:.4g} -> {vb:.4g} {unit} ({change:+.1%}, {verdict})".replace("  ", " ")
        status = Status.FAIL if verdict == "worse" else Status.PASS
        out.results.append(Result(name.split(".")[0], name, "compare", status,
                                  text if status is Status.PASS else f"{expected_actual(f'{va:.4g}', f'{vb:.4g}')}; "
                                  f"{text}", f"{va:.4g} {unit}".strip(), f"{vb:.4g} {unit}".strip(),
                                  data={"a": va, "b": vb, "change": round(change, 5), "verdict": verdict,
                                        "better": "higher" if higher else "lower"}))
    return out
