"""The plain-text view of a report: aligned lines a CI log, a pipe or ``grep`` reads as well as a person.

Problems first (the diagnosis): each root cause with its evidence and its one fix, the failures it
explains folded under it. Then one target per block, failures first. A failure's message
(``Expected: 9000 Actual: 1500``) sits on its check's line and its fix on the next, so copying the
fix out of a log is one line. Passes and readings (``info``) are one count per target, and skips
one line per reason with the targets it covers, unless ``verbose`` (``show_skips`` lists each skip):
in a 600-check run they are noise next to the one failure that matters.
"""

from __future__ import annotations

from racfg.results.model import Report, Result, Status
from racfg.results.wording import (
    STATUS_LABEL,
    ProblemView,
    TargetGroup,
    by_target,
    clean,
    headline,
    problem_views,
    skip_groups,
    title,
)

_STATUS_WIDTH = max(len(label) for label in STATUS_LABEL.values())
_CHECK_WIDTH_CAP = 56  # longer check ids push their message along rather than widen every line


def render_table(report: Report, *, verbose: bool = False, show_skips: bool = False) -> str:
    """The whole report as plain aligned lines; the last line is ``report.summary_line()``."""
    lines = [f"{title(report)} (started {report.started}, {report.elapsed:.1f} s)"]
    views = problem_views(report)
    if views:
        lines += ["", f"{len(views)} problem{'' if len(views) == 1 else 's'}:"]
        for number, view in enumerate(views, 1):
            lines.extend(problem_lines(number, view))
    listing = verbose or show_skips
    for group in by_target(report, outside_problems=True):
        lines.append("")
        lines.extend(_group_lines(group, verbose=verbose, show_skips=listing))
    if not listing:
        lines.extend(skip_lines(report.results))
    if report.notes:
        lines.append("")
        lines.extend(f"note: {line}" for note in report.notes for line in clean(note).split("\n"))
    lines.append("")
    lines.append(report.summary_line())
    return "\n".join(lines) + "\n"


def detail_lines(result: Result) -> list[str]:
    """What follows a check id: the message's lines, then ``fix: ...`` when the result is not a pass."""
    text = headline(result)
    if not text and result.status is Status.ERROR:
        text = "could not be checked (no detail given)"
    lines = clean(text).split("\n") if text else [""]
    if result.fix and result.status is not Status.PASS:
        fix_lines = clean(result.fix).split("\n")
        lines.extend(("fix: " if i == 0 else "     ") + line for i, line in enumerate(fix_lines))
    return lines


def shown_results(group: TargetGroup, *, verbose: bool, show_skips: bool = True) -> tuple[list[Result], int]:
    """The results listed one per line, and how many passes (and readings) are summarised as a count."""
    if verbose:
        return list(group.results), 0
    folded = (Status.PASS, Status.INFO) if show_skips else (Status.PASS, Status.INFO, Status.SKIP)
    return [r for r in group.results if r.status not in folded], len(group.of(Status.PASS))


def problem_lines(number: int, view: ProblemView) -> list[str]:
    """``1. cause [id]``, ``   fix: ...``, then the root's and each symptom's line, indented under it."""
    lines = [f"  {number}. {clean(view.heading())}"]
    if view.problem.fix:
        fix_lines = clean(view.problem.fix).split("\n")
        lines.extend(("     fix: " if i == 0 else "          ") + line for i, line in enumerate(fix_lines))
    lines.extend(_result_lines(list(view.results), "     ", with_fix=False))
    return lines


def skip_lines(results: list[Result]) -> list[str]:
    """One line per skip reason: ``SKIP  reason (3: dgx01, dgx02, dgx03)``."""
    groups = skip_groups(results)
    if not groups:
        return []
    lines = ["", f"skipped, by reason ({sum(g.count for g in groups)} checks; --show-skips lists each):"]
    for group in groups:
        shown = ", ".join(group.targets[:6]) + (f" and {len(group.targets) - 6} more" if len(group.targets) > 6 else "")
        lines.append(f"  {STATUS_LABEL[Status.SKIP]:<{_STATUS_WIDTH}}  {clean(group.reason)} ({group.count}: {shown})")
    return lines


def _result_lines(listed: list[Result], margin: str, *, with_fix: bool = True) -> list[str]:
    width = min(max((len(clean(r.check)) for r in listed), default=0), _CHECK_WIDTH_CAP)
    indent = " " * (len(margin) + _STATUS_WIDTH + 2 + width + 2)
    lines = []
    for result in listed:
        first, *rest = detail_lines(result) if with_fix else (clean(headline(result)) or "").split("\n")
        head = f"{margin}{STATUS_LABEL[result.status]:<{_STATUS_WIDTH}}  {clean(result.check):<{width}}  {first}"
        lines.append(head.rstrip())
        lines.extend((indent + line).rstrip() for line in rest)
    return lines


def _group_lines(group: TargetGroup, *, verbose: bool, show_skips: bool) -> list[str]:
    listed, passes_folded = shown_results(group, verbose=verbose, show_skips=show_skips)
    lines = [f"{clean(group.target)}: {group.tally()}"]
    lines.extend(_result_lines(listed, "  "))
    if passes_folded:
        noun = "check" if passes_folded == 1 else "checks"
        lines.append(f"  {STATUS_LABEL[Status.PASS]:<{_STATUS_WIDTH}}  {passes_folded} {noun} passed")
    return lines
