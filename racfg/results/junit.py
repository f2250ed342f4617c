"""JUnit XML: the one report format every CI system (GitLab, Jenkins, GitHub actions) shows natively.

One ``<testsuite>`` per target so a CI page groups a failing DGX's checks together; one
``<testcase>`` per result with ``classname`` = category and ``name`` = check id. Failures carry
the message as ``message=`` (what CI lists) and expected/actual/fix in the body and in
``<system-out>`` (what CI shows when the case is opened). ElementTree does the escaping; control
characters are cleaned first because XML 1.0 cannot hold them at all.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from racfg.results.model import Report, Result, Status
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
    for name, value in (("command", report.command), ("site", report.site)):
        ET.SubElement(properties, "property", {"name": name, "value": clean(value)})
    for result in group.results:
        suite.append(_case(result))
    return suite


def _case(result: Result) -> ET.Element:
    case = ET.Element("testcase", {"classname": clean(result.category), "name": clean(result.check),
                                   "time": _seconds(result.seconds)})
    tag = _VERDICT_TAG.get(result.status)
    if tag is not None:
        verdict = ET.SubElement(case, tag, {"message": clean(headline(result))})
        if result.status is not Status.SKIP:
            verdict.set("type", str(result.status))
            verdict.text = _details(result)
    details = _details(result)
    if details:
        ET.SubElement(case, "system-out").text = details
    return case


def _details(result: Result) -> str:
    """``expected: ...``, ``actual: ...``, ``message: ...``, ``fix: ...`` lines, those that are set."""
    fields = (("expected", result.expected), ("actual", result.actual), ("message", result.message),
              ("fix", result.fix))
    return "\n".join(f"{name}: {clean(value)}" for name, value in fields if value not in (None, ""))


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"
