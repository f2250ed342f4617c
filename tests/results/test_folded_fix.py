"""A symptom folded under a problem carries that problem's fix, in every format (issue 52).

The report is what validate's diagnosis makes of a NIC set down on the host: the carrier check is
the root (its fix a deploy of the fabric role), the link's other checks its symptoms, each with
its own fix for the symptom read alone ("check the cable", "re-cable ..."). The folding happens
once, in the diagnosis (Result.folded_under); each renderer is read back here as its consumer
reads it, and none may still offer a symptom's own fix.
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import html5lib
import pytest
from rich.console import Console

from racfg.results import Report, Result, Status, render_report
from racfg.results import terminal as terminal_module
from racfg.results.wording import clean
from racfg.validate.analysis import CableEnd
from racfg.validate.diagnosis import diagnose

FIX = "racfg deploy lab.yaml --limit stor01 --tags fabric"
WRONG = ("check the cable", "re-cable")
CABLES = [CableEnd("sw1", "1/17", "stor01", "data0")]


def nic_set_down() -> Report:
    def fail(check: str, expected: str, actual: str, fix: str) -> Result:
        return Result(check.split("/")[0], check, check.split("/")[1], Status.FAIL, f"Expected: {expected} "
                      f"Actual: {actual}", expected=expected, actual=actual, fix=fix)

    results = [fail("stor01/network/carrier[data0]", "up", "admin down", FIX),
               fail("sw1/switches/port_oper_up[1/17]", "up", "down", "check the cable at sw1 1/17"),
               fail("sw1/switches/port_lldp_neighbour[1/17]", "stor01:data0", "(no neighbour heard)",
                    "re-cable sw1 1/17 to stor01:data0"),
               fail("stor01/fabric/lldp_neighbour[data0]", "sw1 1/17", "(no neighbour heard)",
                    "re-cable stor01:data0 to sw1 1/17"),
               fail("stor01/fabric/jumbo_frames[data0]", "every path", "all 3 paths fail", "check the cable"),
               Result("dgx01", "dgx01/system/hostname", "system", Status.PASS, expected="dgx01", actual="dgx01")]
    problems, linked = diagnose(results, CABLES)
    return Report("validate", "lab", linked, problems=problems)


SYMPTOMS = ("sw1/switches/port_oper_up[1/17]", "sw1/switches/port_lldp_neighbour[1/17]",
            "stor01/fabric/lldp_neighbour[data0]", "stor01/fabric/jumbo_frames[data0]")


def test_the_diagnosis_gives_each_symptom_its_problems_fix() -> None:
    report = nic_set_down()
    (problem,) = report.problems
    assert problem.id == "nic_admin:stor01:data0" and problem.fix == FIX
    assert set(problem.symptoms) == set(SYMPTOMS)
    fixes = {r.check: r.fix for r in report.results if r.status is Status.FAIL}
    assert fixes == dict.fromkeys(fixes, FIX)
    assert next(r for r in report.results if r.status is Status.PASS).fix is None


def _no_wrong_fix(text: str) -> None:
    assert not [w for w in WRONG if w in text], text


def test_json() -> None:
    data = json.loads(render_report(nic_set_down(), "json"))
    by_check = {r["check"]: r for r in data["results"]}
    assert [by_check[c]["fix"] for c in SYMPTOMS] == [FIX] * len(SYMPTOMS)
    assert all(by_check[c]["cause"] == "nic_admin:stor01:data0" for c in SYMPTOMS)
    _no_wrong_fix(json.dumps(data))


def test_junit() -> None:
    text = render_report(nic_set_down(), "junit")
    cases = {case.get("name"): case for case in ET.fromstring(text).iter("testcase")}
    for check in SYMPTOMS:
        body = "".join(cases[clean(check)].itertext())
        assert f"fix: {FIX}" in body, body
    _no_wrong_fix(text)


def test_csv() -> None:
    rows = list(csv.DictReader(io.StringIO(render_report(nic_set_down(), "csv"), newline="")))
    by_check = {r["check"]: r for r in rows}
    assert [by_check[c]["fix"] for c in SYMPTOMS] == [FIX] * len(SYMPTOMS)
    _no_wrong_fix(render_report(nic_set_down(), "csv"))


def test_markdown() -> None:
    """Markdown lists a problem's symptoms under it, after its one fix (no per-symptom fix column)."""
    text = render_report(nic_set_down(), "md")
    fix_at = text.index(f"- fix: `{FIX}`")
    for check in SYMPTOMS:
        escaped = check.replace("_", "\\_").replace("[", "\\[").replace("]", "\\]")
        assert text.index(f"explains FAIL {escaped}") > fix_at
    _no_wrong_fix(text)


def test_html() -> None:
    text = render_report(nic_set_down(), "html")
    tree = html5lib.parse(text, namespaceHTMLElements=False)
    fixes = {}
    for row in tree.iter("tr"):
        cells = {td.get("class"): "".join(td.itertext()) for td in row.iter("td")}
        if "fix" in cells:
            fixes["".join(row.itertext())] = cells["fix"]
    for check in SYMPTOMS:
        (fix,) = [f for row, f in fixes.items() if check in row]
        assert fix == FIX
    _no_wrong_fix(text)


def test_table_and_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    report = nic_set_down()
    plain = render_report(report, "table")
    assert f"fix: {FIX}" in plain
    _no_wrong_fix(plain)
    recorder = Console(file=io.StringIO(), record=True, width=160, force_terminal=True)
    monkeypatch.setattr(terminal_module, "is_tty", lambda: True)
    monkeypatch.setattr(terminal_module, "console", lambda: recorder)
    terminal_module.print_report(report, verbose=True)
    shown = recorder.export_text()
    assert FIX in shown
    _no_wrong_fix(shown)
