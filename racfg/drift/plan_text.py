"""The drift plan as a person reads it, in the spirit of ``terraform plan``.

Problems first: the state layer's failures as validate's diagnosis grouped them, one root cause
each with its evidence, its fix and how many state differences it explains. Then grouped by host
and switch; one line per other difference with its sign (``~`` changed, ``+`` added, ``-``
removed), its layer (config, state, environment), what it was and what it is; the fix under each
target. What could not be read is listed; skips are one line (their reasons are in the reports),
so a clean plan is a handful of lines. One total line. JSON, JUnit and Markdown come from the
shared renderers.
"""

from __future__ import annotations

from racfg.drift.drift_run import LAYERS, READ_LAYERS
from racfg.results import Report, Result, Status
from racfg.results.wording import skip_groups


def sign(result: Result) -> str:
    return str(result.data.get("sign", "~"))


def total_line(report: Report) -> str:
    """``3 hosts and 1 switch drifted: 2 config, 4 state, 5 environment``, ``no drift``, or, when
    targets could not be read and nothing drifted elsewhere, that drift is unknown there: an
    unreachable site is not a site without drift."""
    drifted = [r for r in report.results if r.status is Status.FAIL]
    switches = set(report.meta.get("switches") or [])
    if not drifted:
        unread = {r.target for r in report.results if r.status is Status.ERROR}
        if unread:
            who = " and ".join(p for p in (_count(len(unread - switches - {"cluster"}), "host"),
                                           _count(len(unread & switches), "switch")) if p)
            return f"drift unknown: {who or 'the site'} could not be read (errors above)"
        return "no drift"
    targets = {r.target for r in drifted}
    n_sw = len(targets & switches)
    n_host = len(targets - switches)
    who = " and ".join(p for p in (_count(n_host, "host"), _count(n_sw, "switch")) if p)
    ran = report.meta.get("layers") or READ_LAYERS
    per_layer = ", ".join(f"{sum(r.category == layer for r in drifted)} {layer}" for layer in LAYERS if layer in ran)
    return f"{who} drifted: {per_layer}"


def _count(n: int, noun: str) -> str:
    if not n:
        return ""
    return f"{n} {noun}" + ("" if n == 1 else ("es" if noun.endswith("ch") else "s"))


def render_plan(report: Report) -> str:
    lines = [f"racfg drift: site {report.site}" + (f", against {report.meta['baseline_label']}"
                                                    if report.meta.get("baseline_label") else "")]
    lines += [f"note: {n}" for n in report.notes]
    drifted = [r for r in report.results if r.status is Status.FAIL]
    held = _problems(drifted)
    if held:
        lines += ["", f"{len(held)} problem{'' if len(held) == 1 else 's'} (validate's diagnosis of the state):"]
        for number, (problem, results) in enumerate(held, 1):
            lines.append(f"  {number}. {problem['cause']} [{problem['id']}]")
            if problem.get("fix"):
                lines.append(f"     fix: {problem['fix']}")
            lines.append(f"     explains: {', '.join(r.check for r in results)}")
    shown = [r for r in drifted if "problem" not in r.data]
    for target in sorted({r.target for r in shown}):
        lines += ["", target, *_target_lines([r for r in shown if r.target == target], shown)]
    errors = [r for r in report.results if r.status is Status.ERROR and "problem" not in r.data]
    if errors:
        lines.append("")
        lines += [f"  ! {r.target}: {r.status.value}: {r.message}" for r in errors]
    groups = skip_groups(report.results)
    if groups:
        lines.append("")
        reasons = f"{len(groups)} reason" + ("" if len(groups) == 1 else "s")
        lines.append(f"  {sum(g.count for g in groups)} checks skipped for {reasons} "
                     "(each in the reports: racfg drift --output DIR, or --format json)")
    lines.append("")
    lines.append(f"Plan: {total_line(report)}.  ({report.summary_line()})")
    return "\n".join(lines) + "\n"


def _problems(drifted: list[Result]) -> list[tuple[dict, list[Result]]]:
    """The problems the drifted results carry (state layer), each with its results, in first-seen order."""
    out: dict[str, tuple[dict, list[Result]]] = {}
    for r in drifted:
        problem = r.data.get("problem")
        if problem:
            out.setdefault(problem["id"], (problem, []))[1].append(r)
    return list(out.values())


def _target_lines(rows: list[Result], shown: list[Result]) -> list[str]:
    width = max((len(r.message) for r in shown), default=0)
    rows = sorted(rows, key=lambda r: (LAYERS.index(r.category) if r.category in LAYERS else 9, r.check))
    lines = []
    for r in rows:
        lines.append(f"  {sign(r)} {('[' + r.category + ']'):<13} {r.message:<{min(width, 90)}}")
        if r.data.get("diff"):
            lines += ["      " + d for d in str(r.data["diff"]).rstrip().splitlines()[:40]]
    fixes = []
    for r in rows:
        if r.fix and r.fix not in fixes:
            fixes.append(r.fix)
    return lines + [f"    fix: {f}" for f in fixes]
