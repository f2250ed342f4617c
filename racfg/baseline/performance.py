"""The site's performance baseline: every per-item figure of a clean full smoke, with its readings and conditions.

``racfg drift`` compares a site with the facts its last good deploy left (racfg.baseline.store);
a benchmark campaign also asks whether every link, storage node and GPU server still delivers
what acceptance measured. So a passing, full smoke (no phase left out, every host measured) can be
kept as the site's performance baseline, beside the facts and by the same rules (staged, swapped in
whole, the one it replaces kept under ``<site>.performance.history/ID``).

Per item (a link in one direction, a scaling step, a storage figure, an RDMA port, an NCCL step,
the benchmark) it keeps the stable key of its metric (``link.read.dgx01:data0``, the name ``racfg
smoke --compare`` matches on), the deciding figure with its unit and direction, and every reading
smoke took of it (an item below its mark is measured again: racfg.smoke.remeasure), so a later
comparison knows the item's own noise. The run's conditions are kept with it (the inventory's
digest, the lab's shaping, the measuring tools' versions): a figure measured under other conditions
is said to be, not silently compared. Only figures the run measured are kept: nothing is derived.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from racfg.baseline.store import commit_baseline, list_baselines, staging_dir
from racfg.errors import UsageError
from racfg.paths import private_files
from racfg.results import Report, Status

PERFORMANCE = "performance"  # the kind of baseline (racfg.baseline.store): <site>.performance/
FIGURES_FILE = "figures.json"
FORMAT = 1  # of figures.json; a reader refuses a newer one


def baseline_items(report: Report) -> dict[str, dict[str, Any]]:
    """{metric key: item} of every figure the run measured (``data["metrics"]`` of its results).

    An item's readings are its result's re-measured readings when they are of this figure (same
    unit, and the deciding one among them); otherwise the figure alone, measured once. A reading above
    what its link carries is a measurement error, no figure (racfg.smoke.link_ceiling): it is never
    kept, nor is an item smoke could not judge (an error: its reading overshot, or the measuring
    machine was its limit, racfg.smoke.machine_limit).
    """
    items: dict[str, dict[str, Any]] = {}
    for result in report.results:
        if result.status is Status.ERROR or result.data.get("overshot") or result.data.get("machine_limit"):
            continue
        readings = [r for r in result.data.get("readings") or [] if not r.get("overshot")]
        for m in result.data.get("metrics", []):
            value = float(m["value"])
            own = [float(r["value"]) for r in readings if r.get("unit") == m["unit"]]
            values = own if any(_same(v, value) for v in own) else [value]
            items[m["name"]] = {
                "key": m["name"], "value": value, "unit": m["unit"], "better": m.get("better", "higher"),
                "readings": values, "spread": _rounded(spread(values)), "check": result.check, "target": result.target,
                "category": result.category, "status": str(result.status),
            }
            if isinstance(result.data.get("hosts"), list):  # a step of several clients: where it was measured
                items[m["name"]]["hosts"] = list(result.data["hosts"])
    return items


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 5)


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-5 * max(1.0, abs(a), abs(b))  # a metric and its reading are rounded alike


def spread(values: Sequence[float]) -> float | None:
    """(max - min) / max of an item's readings; None for fewer than two (no spread was measured). The
    one measure of an item's noise: kept with the baseline, and compared with by drift --performance."""
    if len(values) < 2 or not max(values):
        return None
    return (max(values) - min(values)) / max(values)


def conditions(report: Report) -> dict[str, Any]:
    """What the figures were measured under, from the run's own record (never read again later)."""
    meta = report.meta
    shaped = {key: link["rate_mbit"] for group in ("links", "storage_links")
              for key, link in (meta.get(group) or {}).items() if link.get("rate_source") == "lab shaper"}
    return {
        "inventory": meta.get("inventory"), "inventory_digest": meta.get("inventory_digest"),
        "lab": bool(meta.get("lab")), "lab_shaping_mbit": dict(sorted(shaped.items())) if meta.get("lab") else None,
        "software": {"racfg": meta.get("racfg_version"), "iperf3": _versions(report, "iperf3"),
                     "fio": _versions(report, "fio")},
        "duration_s": meta.get("duration_s"), "fio_runtime_s": meta.get("fio_runtime_s"),
        "remeasure": meta.get("remeasure"),
    }


def _versions(report: Report, tool: str) -> list[str]:
    """The versions of ``tool`` the run's results say they measured with (iperf3's -J, fio's JSON)."""
    found: set[str] = set()
    for result in report.results:
        if tool == "iperf3":
            found.update((f.get("iperf3") or {}).get("version") or "" for f in result.data.get("flows", []))
        elif result.data.get("fio_version"):
            found.add(result.data["fio_version"])
    return sorted(v for v in found if v)


def why_not_baseline(report: Report) -> list[str]:
    """Why this run cannot be the site's performance baseline ([]: it can): it did not pass, it left
    phases or hosts out, or it was recorded without what a baseline keeps."""
    if report.command != "smoke":
        return [f"a {report.command} run, not a smoke run"]
    counts = report.counts()
    reasons = [f"{counts[s]} {s}" for s in ("fail", "error") if counts.get(s)]
    if reasons:
        reasons = [f"the run did not pass ({', '.join(reasons)}): a baseline is what a passing smoke measured"]
    options = report.meta.get("options")
    if options is None or not report.meta.get("inventory_digest"):
        reasons.append("the run does not record its options and conditions (a smoke of an older racfg); "
                       "run racfg smoke again")
    else:
        if options.get("skip"):
            reasons.append(f"not a full run: phases left out with --skip ({', '.join(options['skip'])})")
        if options.get("hosts"):
            reasons.append(f"not a full run: only some hosts measured (--hosts {','.join(options['hosts'])})")
        if options.get("brief"):
            reasons.append("a brief run (drift --performance --quick): a baseline is measured in full")
    if not baseline_items(report):
        reasons.append("the run measured no figure")
    return reasons


def record_performance_baseline(report: Report, run: str) -> Path:
    """Keep ``report`` (of run record ``run``) as its site's performance baseline; the one it replaces is
    kept in the history. UsageError when the run cannot be one (``why_not_baseline``)."""
    reasons = why_not_baseline(report)
    if reasons:
        raise UsageError(f"not accepted as the performance baseline of site {report.site}: " + "; ".join(reasons))
    items = baseline_items(report)
    document = {"format": FORMAT, "site": report.site, "run": run, "measured": report.started,
                "conditions": conditions(report), "items": items}
    with private_files():
        staging = staging_dir(report.site, PERFORMANCE, parts=())
        path = staging / FIGURES_FILE
        path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        path.chmod(0o600)
        return commit_baseline(report.site, staging, {"source": f"smoke {Path(run).name}", "run": run,
                                                      "items": len(items)}, kind=PERFORMANCE)


def list_performance_baselines(site: str) -> list[dict[str, Any]]:
    """Every performance baseline of ``site``, newest first (racfg.baseline.store.list_baselines)."""
    return list_baselines(site, PERFORMANCE)


def load_performance_baseline(site: str, baseline_id: str | None = None) -> dict[str, Any] | None:
    """The current performance baseline of ``site`` (or the one with ``baseline_id``) as recorded:
    {format, site, run, measured, conditions, items: {key: item}, meta}. None: the site has none.
    UsageError for an unknown id or a file this racfg cannot read."""
    known = list_performance_baselines(site)
    if baseline_id is None:
        match = next((b for b in known if b["current"]), None)
        if match is None:
            return None
    else:
        match = next((b for b in known if b["id"] == baseline_id), None)
        if match is None:
            raise UsageError(f"site {site} has no performance baseline {baseline_id}",
                             hint="performance baselines: " + (", ".join(b["id"] for b in known) or "none"))
    path = Path(match["path"]) / FIGURES_FILE
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a performance baseline ({exc})") from None
    found = document.get("format") if isinstance(document, dict) else None
    if found != FORMAT:
        raise UsageError(f"{path}: a performance baseline of format {found!r}, this racfg reads format {FORMAT}")
    return {**document, "meta": {k: match[k] for k in ("id", "recorded", "source", "current")}}
