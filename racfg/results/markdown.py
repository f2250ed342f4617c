"""Markdown: the report as a merge-request comment, a CI job summary or a wiki page.

Summary first, then the problems (the diagnosis), each with its cause, its fix and the failures it
explains in a nested list, then one table of everything else that is not a pass (what someone has
to act on), then the passes folded into a ``<details>`` per target so they are there but out of the way.
Text is escaped for GitHub-flavoured Markdown (table pipes, emphasis, inline HTML), so a message
holding ``<`` or ``|`` or ``*`` reads as written and never breaks the table.
"""

from __future__ import annotations

import html
import re

from racfg.results.model import Report, Result, Status
from racfg.results.wording import (
    STATUS_LABEL,
    ProblemView,
    by_target,
    clean,
    count_phrase,
    headline,
    problem_views,
    title,
)

# Everything CommonMark lets a backslash escape that could otherwise start markup in running text.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~#!])")
_COLUMNS = ("Target", "Check", "Status", "Expected", "Actual", "Message", "Fix")


def render_markdown(report: Report) -> str:
    """The report as GitHub-flavoured Markdown."""
    counts = report.counts()
    phrases = [count_phrase(s, counts[str(s)]) for s in (Status.FAIL, Status.ERROR, Status.SKIP, Status.PASS)]
    summary = f"**{phrases[0]}**, " + ", ".join(phrases[1:]) + f" in {report.elapsed:.1f} s"
    lines = [f"# {md_text(title(report))}", "", summary, "",
             f"Started {md_text(report.started)} · exit code {int(report.exit_code())}", ""]
    for note in report.notes:
        lines.append(f"> {md_text(note)}")
        lines.append(">")
    if report.notes:
        lines[-1] = ""
    views = problem_views(report)
    if views:
        lines += [f"## Problems ({len(views)})", ""]
        for number, view in enumerate(views, 1):
            lines += _problem(number, view)
        lines.append("")
    groups = by_target(report)
    held = {check for view in views for check in view.problem.checks}
    open_items = [r for g in groups for r in g.results if r.status is not Status.PASS and r.check not in held]
    if open_items:
        lines += ["## Not passing", "", "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        lines += [_row(r) for r in open_items]
        lines.append("")
    passing = [g for g in groups if g.of(Status.PASS)]
    if passing:
        lines += ["## Passed", ""]
        for group in passing:
            passes = group.of(Status.PASS)
            lines += [f"<details><summary>{html.escape(clean(group.target))}: {len(passes)} passed</summary>", ""]
            lines += [f"- {md_text(r.check)}" + (f": {md_text(headline(r))}" if headline(r) else "") for r in passes]
            lines += ["", "</details>", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def md_text(value: object) -> str:
    """``value`` as Markdown text that renders exactly as written, on one line (newlines become ``<br>``)."""
    return "<br>".join(_MD_SPECIAL.sub(r"\\\1", line) for line in clean(value).split("\n"))


def md_code(value: object) -> str:
    """``value`` as a code span inside a table cell (a fix command reads best in monospace)."""
    spans = []
    for line in clean(value).split("\n"):
        if not line:
            continue
        fence = "`" * (max((len(run) for run in re.findall(r"`+", line)), default=0) + 1)
        pad = " " if line.startswith("`") or line.endswith("`") else ""
        spans.append(fence + pad + line.replace("|", "\\|") + pad + fence)
    return "<br>".join(spans)


def _problem(number: int, view: ProblemView) -> list[str]:
    lines = [f"{number}. **{md_text(view.problem.cause)}** ({md_code(view.problem.id)})"]
    if view.problem.fix:
        lines.append(f"   - fix: {md_code(view.problem.fix)}")
    for result in view.results:
        role = "shows" if result.check == view.problem.root else "explains"
        text = f": {md_text(headline(result))}" if headline(result) else ""
        lines.append(f"   - {role} {STATUS_LABEL[result.status]} {md_text(result.check)}{text}")
    return lines


def _row(result: Result) -> str:
    cells = (md_text(result.target), md_text(result.check), STATUS_LABEL[result.status],
             md_text(result.expected or ""), md_text(result.actual or ""), md_text(result.message),
             md_code(result.fix) if result.fix else "")
    return "| " + " | ".join(cells) + " |"
