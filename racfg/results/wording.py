"""The words every renderer shares: what a result says, how a target's results add up, safe text.

Renderers differ in markup only. What a failure *says* (its message, or ``Expected: X Actual: Y``
when the producer left the message empty), how results group per target and how control
characters from captured command output are made harmless is decided once here, so the terminal,
Markdown, JUnit and HTML views of one report never disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from racfg.results.model import Report, Result, Status, expected_actual
from racfg.results.problems import Problem

# C0/C1 control characters other than tab and newline (and lone surrogates): invalid in XML 1.0,
# parse errors in HTML, and terminal escape sequences on a console. Captured command output
# (ANSI colour codes, stray NULs) is where they come from.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")

STATUS_LABEL = {Status.FAIL: "FAIL", Status.ERROR: "ERROR", Status.SKIP: "SKIP", Status.INFO: "INFO",
                Status.PASS: "PASS"}


def clean(text: object) -> str:
    """``text`` as a string with control characters shown as ``\\x1b`` instead of sent raw.

    ``\\r\\n`` and lone ``\\r`` become ``\\n`` so line splitting is the same in every renderer.
    """
    if text is None:
        return ""
    out = str(text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else "\ufffd", out)


_STATUS_WORD = {Status.FAIL: "failed", Status.SKIP: "skipped", Status.INFO: "recorded", Status.PASS: "passed"}


def count_phrase(status: Status, count: int) -> str:
    """``3 failed``, ``1 error``, ``2 errors``, ``0 skipped``: a count with its status word."""
    if status is Status.ERROR:
        return f"{count} error" + ("" if count == 1 else "s")
    return f"{count} {_STATUS_WORD[status]}"


def headline(result: Result) -> str:
    """What the result says to people: its message, else ``Expected: X Actual: Y`` when both are known.

    A skip's message is its reason and an error's message is what could not be checked, so this is
    the one line every renderer shows next to the check id.
    """
    if result.message:
        return result.message
    if result.expected is not None or result.actual is not None:
        return expected_actual(result.expected, result.actual)
    return ""


@dataclass(frozen=True)
class TargetGroup:
    """One target's results in reading order (failures first), with its counts per status."""

    target: str
    results: tuple[Result, ...]

    def of(self, status: Status) -> list[Result]:
        return [r for r in self.results if r.status is status]

    def counts(self) -> dict[Status, int]:
        return {s: sum(1 for r in self.results if r.status is s) for s in Status}

    def worst(self) -> Status:
        for status in (Status.FAIL, Status.ERROR, Status.SKIP):
            if any(r.status is status for r in self.results):
                return status
        return Status.PASS

    def tally(self) -> str:
        """``2 failed, 1 skipped, 14 passed`` (statuses with a zero count left out)."""
        counts = self.counts()
        return ", ".join(count_phrase(s, counts[s]) for s in (Status.FAIL, Status.ERROR, Status.SKIP, Status.INFO,
                                                              Status.PASS) if counts[s])


def by_target(report: Report, *, outside_problems: bool = False) -> list[TargetGroup]:
    """The report's results grouped per target, targets with failures first (``Report.sorted_results``).

    ``outside_problems``: leave out the results a problem holds (a renderer that showed them there)."""
    held = {check for p in report.problems for check in p.checks} if outside_problems else set()
    groups: dict[str, list[Result]] = {}
    for result in report.sorted_results():
        if result.check not in held:
            groups.setdefault(result.target, []).append(result)
    return [TargetGroup(target, tuple(results)) for target, results in groups.items()]


def title(report: Report) -> str:
    """``racfg validate: site prod`` (the first line of every file report)."""
    return f"racfg {report.command}: site {report.site}"


@dataclass(frozen=True)
class ProblemView:
    """A problem with its results: the root first, then the symptoms it explains, in reading order."""

    problem: Problem
    results: tuple[Result, ...]

    def symptoms(self) -> tuple[Result, ...]:
        return tuple(r for r in self.results if r.check != self.problem.root)

    def heading(self) -> str:
        """``sw1 1/17 shut down in the running config (not saved) [port_admin:sw1:1/17, 6 symptoms]``."""
        n = len(self.problem.symptoms)
        folded = f", explains {n} more" if n else ""
        return f"{self.problem.cause} [{self.problem.id}{folded}]"


def problem_views(report: Report) -> list[ProblemView]:
    """Every problem of the report with the results it holds (a check the report lacks is left out)."""
    by_check = {r.check: r for r in report.results}
    return [ProblemView(p, tuple(by_check[c] for c in p.checks if c in by_check)) for p in report.problems]


@dataclass(frozen=True)
class SkipGroup:
    """Skips of one reason: the reason as written for the first target, and every target it covers."""

    reason: str
    targets: tuple[str, ...]
    count: int


def skip_groups(results: list[Result]) -> list[SkipGroup]:
    """Skips summarised by reason; a reason naming its own target (``no path through dgx01:data0``)
    reads as one reason for all of them, the target shown as ``<target>``."""
    groups: dict[str, list[Result]] = {}
    for r in results:
        if r.status is Status.SKIP:
            groups.setdefault(r.message.replace(r.target, "<target>"), []).append(r)
    return [SkipGroup(reason, tuple(dict.fromkeys(r.target for r in same)), len(same))
            for reason, same in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))]
