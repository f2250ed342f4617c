"""The one result model that check, validate, drift and smoke all report in.

A result is one verdict on one thing: which target (host, switch, link, or the cluster), which
check (a stable id such as ``dgx03/network/mtu[data0]``), its status, what was expected, what was
found, a sentence for people, and the fix (a deploy command, or the operator action). Renderers
(table, JSON, JUnit, Markdown, CSV, HTML) read only this, so every command's reports look alike.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

from racfg.errors import ExitCode
from racfg.results.problems import Problem


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"  # the thing was checked and is wrong
    SKIP = "skip"  # not checked, and the message says why (never a silent pass)
    ERROR = "error"  # could not be checked (unreachable, a command failed): says what
    INFO = "info"  # a reading recorded with nothing to compare it with: never a pass, never a failure


# Failures first, then errors, skips, readings, passes: the order people read a report in.
STATUS_ORDER = {Status.FAIL: 0, Status.ERROR: 1, Status.SKIP: 2, Status.INFO: 3, Status.PASS: 4}


def natural_key(text: str) -> tuple[object, ...]:
    """``port[1/2]`` before ``port[1/17]``, ``dgx2`` before ``dgx10``: numbers compare as numbers."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def expected_actual(expected: object, actual: object) -> str:
    """``Expected: 9000 Actual: 1500``: the one wording every failing check uses."""
    return f"Expected: {_text(expected)} Actual: {_text(actual)}"


def _text(value: object) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple, set)):
        return ", ".join(_text(v) for v in value) or "(none)"
    return str(value)


@dataclass(frozen=True)
class Result:
    """One verdict. ``expected``/``actual`` are display strings (None when not applicable)."""

    target: str
    check: str
    category: str
    status: Status
    message: str = ""
    expected: str | None = None
    actual: str | None = None
    fix: str | None = None
    seconds: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)  # extra, machine-readable (measured series, diffs)
    cause: str | None = None  # the id of the Problem that explains this result (racfg.results.problems)

    def __post_init__(self) -> None:
        if self.status in (Status.SKIP, Status.INFO) and not self.message:
            raise ValueError(f"{self.check}: a skip must say why")
        object.__setattr__(self, "status", Status(self.status))

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["status"] = str(self.status)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        fields["status"] = Status(fields["status"])
        return cls(**fields)

    def explained_by(self, problem_id: str | None) -> Result:
        """This result linked to the problem that explains it (None: its own problem, or none)."""
        return replace(self, cause=problem_id)

    def folded_under(self, problem: Problem) -> Result:
        """This result as one of ``problem``'s: linked to it, and carrying its one fix instead of the
        result's own. Why: a symptom's own fix is for the symptom read alone ("check the cable" for
        the carrier of a NIC set down), wrong once the cause is known; every renderer shows
        ``Result.fix``, so the problem's fix shows in every format."""
        return replace(self, cause=problem.id, fix=problem.fix)


@dataclass
class Report:
    """All results of one run of one command, plus what the renderers print around them.

    ``meta`` holds run facts (inventory, run record, lab substitutions ...); ``notes`` are lines
    printed before the summary; ``attachments`` are files (PNG plots) the HTML report embeds.
    """

    command: str
    site: str
    results: list[Result] = field(default_factory=list)
    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    elapsed: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)  # root causes, in reading order (diagnosis)

    def counts(self) -> dict[str, int]:
        out = {str(s): 0 for s in Status}
        for r in self.results:
            out[str(r.status)] += 1
        return out

    def summary_line(self) -> str:
        """``12 passed, 1 failed, 3 skipped, 0 errors in 4.2 s``."""
        c = self.counts()
        info = f", {c['info']} recorded" if c["info"] else ""
        return (f"{c['pass']} passed, {c['fail']} failed, {c['skip']} skipped, {c['error']} errors{info} "
                f"in {self.elapsed:.1f} s")

    def exit_code(self) -> ExitCode:
        """0 nothing failed and nothing errored; 1 any failure; 3 errors only (could not check).

        ``info`` readings count neither way: nothing was compared."""
        c = self.counts()
        if c["fail"]:
            return ExitCode.FINDINGS
        if c["error"]:
            return ExitCode.CANNOT_RUN
        return ExitCode.OK

    def sorted_results(self) -> list[Result]:
        """Grouped by target, targets with failures first, failures first inside a target."""
        worst: dict[str, int] = {}
        for r in self.results:
            worst[r.target] = min(worst.get(r.target, 9), STATUS_ORDER[r.status])
        return sorted(self.results, key=lambda r: (worst[r.target], natural_key(r.target), STATUS_ORDER[r.status],
                                                   natural_key(r.check)))

    def as_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "site": self.site,
            "started": self.started,
            "elapsed": round(self.elapsed, 3),
            "summary": self.counts(),
            "exit_code": int(self.exit_code()),
            "meta": self.meta,
            "notes": self.notes,
            "attachments": self.attachments,
            "problems": [p.as_dict() for p in self.problems],
            "results": [r.as_dict() for r in self.results],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        return cls(command=data["command"], site=data["site"], started=data.get("started", ""),
                   elapsed=float(data.get("elapsed", 0.0)), meta=dict(data.get("meta", {})),
                   notes=list(data.get("notes", [])), attachments=list(data.get("attachments", [])),
                   results=[Result.from_dict(r) for r in data.get("results", [])],
                   problems=[Problem.from_dict(p) for p in data.get("problems", [])])

    def problem_of(self, result: Result) -> Problem | None:
        """The problem ``result`` is the root of or a symptom of."""
        return next((p for p in self.problems if result.check in p.checks), None)
