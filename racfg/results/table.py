"""The plain-text view of a report: aligned lines a CI log, a pipe or ``grep`` reads as well as a person.

One target per block, failures first. A failure's message (``Expected: 9000 Actual: 1500``) sits
on its check's line and its fix on the next, so copying the fix out of a log is one line. Passes
are one count per target unless ``verbose``: in a 600-check run they are noise next to the one
failure that matters.
"""

from __future__ import annotations

from racfg.results.model import Report, Result, Status
from racfg.results.wording import STATUS_LABEL, TargetGroup, by_target, clean, headline, title

_STATUS_WIDTH = max(len(label) for label in STATUS_LABEL.values())
_CHECK_WIDTH_CAP = 56  # longer check ids push their message along rather than widen every line


def render_table(report: Report, *, verbose: bool = False) -> str:
    """The whole report as plain aligned lines; the last line is ``report.summary_line()``."""
    lines = [f"{title(report)} (started {report.started}, {report.elapsed:.1f} s)"]
    for group in by_target(report):
        lines.append("")
        lines.extend(_group_lines(group, verbose=verbose))
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


def shown_results(group: TargetGroup, *, verbose: bool) -> tuple[list[Result], int]:
    """The results listed one per line, and how many passes are summarised as a count instead."""
    if verbose:
        return list(group.results), 0
    return [r for r in group.results if r.status is not Status.PASS], len(group.of(Status.PASS))


def _group_lines(group: TargetGroup, *, verbose: bool) -> list[str]:
    listed, passes_folded = shown_results(group, verbose=verbose)
    width = min(max((len(clean(r.check)) for r in listed), default=0), _CHECK_WIDTH_CAP)
    indent = " " * (2 + _STATUS_WIDTH + 2 + width + 2)
    lines = [f"{clean(group.target)}: {group.tally()}"]
    for result in listed:
        first, *rest = detail_lines(result)
        head = f"  {STATUS_LABEL[result.status]:<{_STATUS_WIDTH}}  {clean(result.check):<{width}}  {first}"
        lines.append(head.rstrip())
        lines.extend((indent + line).rstrip() for line in rest)
    if passes_folded:
        noun = "check" if passes_folded == 1 else "checks"
        lines.append(f"  {STATUS_LABEL[Status.PASS]:<{_STATUS_WIDTH}}  {passes_folded} {noun} passed")
    return lines
