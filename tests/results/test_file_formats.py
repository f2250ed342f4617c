"""Every file renderer, read back by a real parser of its format (JSON, CSV, JUnit, Markdown).

Each test renders the awkward report (every status; quotes, ``<``, ``&``, commas, newlines,
unicode, an ANSI escape) and parses the output as the consuming tool would, so an escaping bug
shows up as a wrong value read back, not as a string that merely looks right.
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import html5lib
import markdown_it
import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from racfg.errors import CannotRunError, ExitCode, UsageError
from racfg.results import Report, Result, Status, render_report, write_reports
from racfg.results.problems import Problem
from racfg.results.render import REPORT_FILES
from racfg.results.spreadsheet import CSV_COLUMNS
from racfg.results.wording import clean, headline
from tests.results.samples import awkward_report, realistic_report


def test_json_round_trips_through_report_from_dict() -> None:
    report = awkward_report()
    text = render_report(report, "json")
    assert Report.from_dict(json.loads(text)) == report
    assert render_report(Report.from_dict(json.loads(text)), "json") == text  # stable


def test_json_keys_are_sorted_and_summary_is_included() -> None:
    data = json.loads(render_report(awkward_report(), "json"))
    assert list(data) == sorted(data)
    assert data["summary"] == {"pass": 2, "fail": 3, "skip": 1, "error": 1, "info": 0}
    assert data["exit_code"] == 1


def test_csv_reads_back_one_row_per_result_with_every_field_intact() -> None:
    report = awkward_report()
    rows = list(csv.reader(io.StringIO(render_report(report, "csv"), newline="")))
    assert tuple(rows[0]) == CSV_COLUMNS
    expected = [[r.target, r.check, r.category, str(r.status), r.expected or "", r.actual or "", r.message,
                 r.fix or "", f"{r.seconds:.3f}", ""] for r in report.sorted_results()]
    assert rows[1:] == expected


def diagnosed(report: Report) -> Report:
    """``report`` with one problem holding its first failure (root) and its error (symptom)."""
    root = next(r for r in report.results if r.status is Status.FAIL)
    symptom = next(r for r in report.results if r.status is Status.ERROR)
    report.problems = [Problem("check:x", "check", root.target, "the cause <&>", "fix <it>", root.check,
                               (symptom.check,))]
    report.results = [r.explained_by("check:x") if r.check in (root.check, symptom.check) else r
                      for r in report.results]
    return report


def test_csv_puts_a_problems_rows_first_with_its_id() -> None:
    report = diagnosed(awkward_report())
    rows = list(csv.DictReader(io.StringIO(render_report(report, "csv"), newline="")))
    assert [(r["check"], r["cause"]) for r in rows[:2]] == [(c, "check:x") for c in report.problems[0].checks]
    assert all(r["cause"] == "" for r in rows[2:])


def test_junit_parses_and_holds_each_problem_on_its_root_and_its_symptoms() -> None:
    report = diagnosed(awkward_report())
    text = render_report(report, "junit")
    xml = JUnitXml.fromstring(text)
    assert xml.tests == len(report.results)
    cases = {case.name: case for suite in xml for case in suite}
    root, symptom = report.problems[0].root, report.problems[0].symptoms[0]
    assert "problem: check:x: the cause <&>" in cases[clean(root)].system_out
    assert f"explains: {symptom}" in cases[clean(root)].system_out
    assert "explained by: check:x: the cause <&> (fix: fix <it>)" in cases[clean(symptom)].system_out


def test_json_round_trips_problems_and_causes() -> None:
    report = diagnosed(awkward_report())
    data = json.loads(render_report(report, "json"))
    assert data["problems"][0]["symptoms"] == list(report.problems[0].symptoms)
    assert Report.from_dict(data) == report


def test_junit_counts_failures_errors_and_skips_per_target_suite() -> None:
    report = awkward_report()
    xml = JUnitXml.fromstring(render_report(report, "junit"))
    suites = {suite.name: suite for suite in xml}
    assert set(suites) == {r.target for r in report.results}
    for target, suite in suites.items():
        mine = [r for r in report.results if r.target == target]
        assert suite.tests == len(mine)
        assert suite.failures == sum(r.status is Status.FAIL for r in mine)
        assert suite.errors == sum(r.status is Status.ERROR for r in mine)
        assert suite.skipped == sum(r.status is Status.SKIP for r in mine)


def test_junit_cases_carry_category_check_time_and_details() -> None:
    report = awkward_report()
    cases = {case.name: case for suite in JUnitXml.fromstring(render_report(report, "junit")) for case in suite}
    assert set(cases) == {r.check for r in report.results}
    kinds = {Status.FAIL: Failure, Status.ERROR: Error, Status.SKIP: Skipped}
    for result in report.results:
        case = cases[result.check]
        assert case.classname == result.category
        assert case.time == pytest.approx(result.seconds)
        if result.status is Status.PASS:
            assert case.result == []
            continue
        (verdict,) = case.result
        assert isinstance(verdict, kinds[result.status])
        assert verdict.message == clean(headline(result))
        if result.fix:
            assert f"fix: {clean(result.fix)}" in case.system_out
        if result.actual:
            assert f"actual: {clean(result.actual)}" in case.system_out


def test_junit_is_well_formed_xml_even_with_control_characters() -> None:
    root = ET.fromstring(render_report(awkward_report(), "junit").encode("utf-8"))
    assert root.tag == "testsuites"
    assert root.get("failures") == "3" and root.get("errors") == "1" and root.get("skipped") == "1"


def _markdown_tables(text: str) -> list[list[str]]:
    """Rows of the rendered Markdown's table as cell texts (``<br>`` read back as a newline)."""
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(text)
    doc = html5lib.parse(rendered, namespaceHTMLElements=False)
    rows = []
    for tr in doc.iter("tr"):
        cells = []
        for cell in tr:
            for br in cell.iter("br"):
                br.tail = "\n" + (br.tail or "")
            cells.append("".join(cell.itertext()))
        rows.append(cells)
    return rows


def test_markdown_table_lists_every_non_pass_with_its_text_exactly() -> None:
    report = awkward_report()
    rows = _markdown_tables(render_report(report, "md"))
    assert rows[0] == ["Target", "Check", "Status", "Expected", "Actual", "Message", "Fix"]
    open_items = [r for r in report.sorted_results() if r.status is not Status.PASS]
    assert rows[1:] == [[clean(r.target), clean(r.check), r.status.name, clean(r.expected), clean(r.actual),
                         clean(r.message), clean(r.fix)] for r in open_items]


def test_markdown_folds_passes_per_target_and_starts_with_the_summary() -> None:
    report = awkward_report()
    text = render_report(report, "md")
    assert text.splitlines()[2] == "**3 failed**, 1 error, 1 skipped, 2 passed in 4.2 s"
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(text)
    for result in report.results:
        if result.status is Status.PASS:
            assert f"<li>{result.check}" in rendered
    assert rendered.count("<details>") == len({r.target for r in report.results if r.status is Status.PASS})
    assert "<em>" not in rendered  # *not bold* stayed literal


def test_unknown_format_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as caught:
        render_report(awkward_report(), "pdf")
    assert caught.value.exit_code is ExitCode.USAGE
    assert "table" in str(caught.value)


def test_every_format_renders_an_empty_report() -> None:
    empty = Report(command="check", site="empty")
    for fmt in ("table", "md", "html"):
        assert "0 passed" in render_report(empty, fmt)
    assert render_report(empty, "csv") == ",".join(CSV_COLUMNS) + "\n"
    assert json.loads(render_report(empty, "json"))["results"] == []
    assert JUnitXml.fromstring(render_report(empty, "junit")).tests == 0


def test_write_reports_creates_the_directory_and_every_file(tmp_path: Path) -> None:
    report = realistic_report()
    out = tmp_path / "runs" / "20240501-validate"
    paths = write_reports(report, out)
    assert sorted(p.name for p in paths) == sorted(REPORT_FILES.values())
    for fmt, name in REPORT_FILES.items():
        assert (out / name).read_text(encoding="utf-8") == render_report(report, fmt)


def test_write_reports_into_an_unwritable_place_cannot_run(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(CannotRunError) as caught:
        write_reports(awkward_report(), blocker / "out")
    assert str(blocker) in str(caught.value)


@pytest.mark.parametrize(("statuses", "code"), [
    ([], ExitCode.OK),
    ([Status.PASS, Status.SKIP], ExitCode.OK),
    ([Status.PASS, Status.FAIL], ExitCode.FINDINGS),
    ([Status.ERROR, Status.FAIL, Status.SKIP], ExitCode.FINDINGS),
    ([Status.PASS, Status.ERROR], ExitCode.CANNOT_RUN),
])
def test_exit_code_follows_the_worst_result(statuses: list[Status], code: ExitCode) -> None:
    results = [Result("h", f"h/c{i}", "os", s, "why" if s is Status.SKIP else "") for i, s in enumerate(statuses)]
    report = Report(command="check", site="s", results=results)
    assert report.exit_code() is code
    assert json.loads(render_report(report, "json"))["exit_code"] == int(code)


def test_markdown_lists_problems_before_the_rest_and_holds_their_results_there() -> None:
    report = diagnosed(awkward_report())
    text = render_report(report, "md")
    problems, _ = text.split("## Not passing")
    assert "1. **the cause \\<\\&\\>** (`check:x`)" in problems
    assert "   - fix: `fix <it>`" in problems
    assert all(markdown_it.MarkdownIt().parse(text))
    for check in report.problems[0].checks:
        assert check.split("/")[-1].split("[")[0] in problems
