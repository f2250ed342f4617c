"""The drift plan as a person reads it, in the spirit of ``terraform plan``.

Grouped by host and switch; one line per difference with its sign (``~`` changed, ``+`` added,
``-`` removed), its layer (config, state, environment), what it was and what it is; the fix
under each target; one total line. JSON, JUnit and Markdown come from the shared renderers.
"""

from __future__ import annotations

from racfg.results import Report, Result, Status

LAYERS = ("config", "state", "environment")


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
    per_layer = ", ".join(f"{sum(r.category == layer for r in drifted)} {layer}" for layer in LAYERS)
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
    trouble = [r for r in report.results if r.status in (Status.ERROR, Status.SKIP)]
    targets = sorted({r.target for r in drifted})
    width = max((len(r.message) for r in drifted), default=0)
    for target in targets:
        lines.append("")
        lines.append(target)
        rows = sorted((r for r in drifted if r.target == target),
                      key=lambda r: (LAYERS.index(r.category) if r.category in LAYERS else 9, r.check))
        for r in rows:
            lines.append(f"  {sign(r)} {('[' + r.category + ']'):<13} {r.message:<{min(width, 90)}}")
            if r.data.get("diff"):
                lines += ["      " + d for d in str(r.data["diff"]).rstrip().splitlines()[:40]]
        fixes = []
        for r in rows:
            if r.fix and r.fix not in fixes:
                fixes.append(r.fix)
        lines += [f"    fix: {f}" for f in fixes]
    if trouble:
        lines.append("")
        for r in trouble:
            lines.append(f"  ! {r.target}: {r.status.value}: {r.message}")
    lines.append("")
    lines.append(f"Plan: {total_line(report)}.  ({report.summary_line()})")
    return "\n".join(lines) + "\n"
