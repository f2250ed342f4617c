"""JUnit XML: the one report format every CI system (GitLab, Jenkins, GitHub actions) shows natively.

One ``<testsuite>`` per target so a CI page groups a failing DGX's checks together; one
``<testcase>`` per result with ``classname`` = category and ``name`` = check id. Failures carry
the message as ``message=`` (what CI lists) and expected/actual/fix in the body and in
``<system-out>`` (what CI shows when the case is opened). ElementTree does the escaping; control
characters are cleaned first because XML 1.0 cannot hold them at all.

Problems (the diagnosis) ride on the cases they hold, so the counts stay one per result: the root's
case says ``problem: <id>: <cause>`` and lists what it explains; each symptom's case says which
problem explains it. A ``problems`` property on every suite names them all. A reading (``info``)
is a passing case with its value in ``<system-out>``: JUnit has no "recorded" verdict.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from racfg.results.model import Report, Result, Status
from racfg.results.problems import Problem
from racfg.results.wording import TargetGroup, by_target, clean, headline, title

_VERDICT_TAG = {Status.FAIL: "failure", Status.ERROR: "error", Status.SKIP: "skipped"}


def render_junit(report: Report) -> str:
    """The report as a JUnit XML document (``<testsuites>``, one suite per target)."""
    root = ET.Element("testsuites", {
        "name": clean(title(report)),
        "tests": str(len(report.results)),
        "failures": str(report.counts()["fail"]),
        "errors": str(report.counts()["error"]),
        "skipped": str(report.counts()["skip"]),
        "time": _seconds(report.elapsed),
        "timestamp": clean(report.started),
    })
    for group in by_target(report):
        root.append(_suite(report, group))
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(report: Report, group: TargetGroup) -> ET.Element:
    counts = group.counts()
    suite = ET.Element("testsuite", {
        "name": clean(group.target),
        "tests": str(len(group.results)),
        "failures": str(counts[Status.FAIL]),
        "errors": str(counts[Status.ERROR]),
        "skipped": str(counts[Status.SKIP]),
        "time": _seconds(sum(r.seconds for r in group.results)),
        "timestamp": clean(report.started),
    })
    properties = ET.SubElement(suite, "properties")
    problems = {p.id: p for p in report.problems}
    named = "; ".join(f"{p.id}: {p.cause}" for p in report.problems)
    for name, value in (("command", report.command), ("site", report.site), ("problems", named)):
        if value or name != "problems":
            ET.SubElement(properties, "property", {"name": name, "value": clean(value)})
    for result in group.results:
        suite.append(_case(result, problems.get(result.cause or "")))
    return suite


def _case(result: Result, problem: Problem | None = None) -> ET.Element:
    case = ET.Element("testcase", {"classname": clean(result.category), "name": clean(result.check),
                                   "time": _seconds(result.seconds)})
    tag = _VERDICT_TAG.get(result.status)
    if tag is not None:
        verdict = ET.SubElement(case, tag, {"message": clean(headline(result))})
        if result.status is not Status.SKIP:
            verdict.set("type", str(result.status))
            verdict.text = _details(result, problem)
    details = _details(result, problem)
    if details:
        ET.SubElement(case, "system-out").text = details
    return case


def _details(result: Result, problem: Problem | None = None) -> str:
    """``expected: ...``, ``actual: ...``, ``message: ...``, ``fix: ...`` lines, those that are set, then
    the problem the result is the root of (with what it explains) or a symptom of."""
    fields = [("expected", result.expected), ("actual", result.actual), ("message", result.message),
              ("fix", result.fix)]
    if problem is not None and problem.root == result.check:
        fields += [("problem", f"{problem.id}: {problem.cause}"), ("explains", ", ".join(problem.symptoms))]
    elif problem is not None:
        fields.append(("explained by", f"{problem.id}: {problem.cause} (fix: {problem.fix or 'see the problem'})"))
    return "\n".join(f"{name}: {clean(value)}" for name, value in fields if value not in (None, ""))


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"
