"""The self-contained HTML report, parsed with a strict HTML5 parser and read back cell by cell."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from xml.etree.ElementTree import Element

import html5lib

from racfg.results import Report, Status, render_report
from racfg.results.wording import clean
from tests.results.samples import awkward_report, realistic_report


def _parse(text: str) -> Element:
    """Parse strictly: any HTML5 parse error (bad escaping, stray control character) raises."""
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(text)


def _text(element: Element) -> str:
    return "".join(element.itertext())


def _png(path: Path) -> bytes:
    """A real 2x1 PNG written by hand (no imaging library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"\x00" + b"\xff\x00\x00" + b"\x00\xff\x00"
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    path.write_bytes(data)
    return data


def test_html_parses_strictly_and_holds_every_result_cell_exactly() -> None:
    report = awkward_report()
    doc = _parse(render_report(report, "html"))
    rows = [tr for tr in doc.iter("tr") if "r" in (tr.get("class") or "").split()]
    assert len(rows) == len(report.results)
    for row, result in zip(rows, report.sorted_results(), strict=True):
        status, check, category, expected, actual, message, fix = (_text(td) for td in row.findall("td"))
        assert row.get("data-status") == str(result.status)
        assert (status, check, category) == (result.status.name, clean(result.check), clean(result.category))
        assert (expected, actual, message, fix) == (clean(result.expected), clean(result.actual),
                                                    clean(result.message), clean(result.fix))


def test_html_groups_by_target_with_failures_first() -> None:
    report = realistic_report()
    doc = _parse(render_report(report, "html"))
    bodies = [tb for tb in doc.iter("tbody") if tb.get("class") == "target"]
    assert [tb.get("data-target") for tb in bodies] == list(dict.fromkeys(r.target for r in report.sorted_results()))
    first = [tr.get("data-status") for tr in bodies[0].iter("tr") if tr.get("data-status")]
    assert first[0] == "fail"
    assert first == sorted(first, key=["fail", "error", "skip", "pass"].index)


def test_html_header_badges_filters_notes_and_meta() -> None:
    report = awkward_report()
    doc = _parse(render_report(report, "html"))
    assert _text(doc.find(".//title")) == "racfg validate: site awk&ward <site>"
    badges = [_text(span) for span in doc.iter("span") if "badge" in (span.get("class") or "")]
    assert badges == ["3 failed", "1 error", "1 skipped", "2 passed"]
    buttons = {b.get("data-status"): _text(b) for b in doc.iter("button")}
    assert buttons == {"fail": "Fail 3", "error": "Error 1", "skip": "Skip 1", "pass": "Pass 2"}
    assert doc.find(".//input[@id='q']") is not None
    notes = [_text(p) for section in doc.iter("section") if section.get("class") == "notes" for p in section]
    assert notes == report.notes
    meta = {_text(tr.find("th")): _text(tr.find("td")) for table in doc.iter("table")
            if table.get("class") == "meta" for tr in table.iter("tr")}
    assert meta == {"inventory": "inventory/ra.yaml", "limits": '["dgx01", "sw1"]', "odd": "<b>&"}


def test_html_is_self_contained_and_embeds_attachments(tmp_path: Path) -> None:
    png = _png(tmp_path / "iperf3 <bandwidth>.png")
    report = realistic_report(tmp_path / "iperf3 <bandwidth>.png")
    report.attachments.append(str(tmp_path / "gone.png"))
    text = render_report(report, "html")
    doc = _parse(text)
    assert doc.find(".//link") is None
    assert all(script.get("src") is None for script in doc.iter("script"))
    assert "http://" not in text and "https://" not in text and "@import" not in text
    (img,) = list(doc.iter("img"))
    prefix = "data:image/png;base64,"
    assert img.get("src").startswith(prefix)
    assert base64.b64decode(img.get("src")[len(prefix):]) == png
    captions = [_text(c) for c in doc.iter("figcaption")]
    assert captions[0] == "iperf3 <bandwidth>.png"
    assert captions[1].startswith("gone.png: not embedded")


def test_html_of_an_empty_report_says_so() -> None:
    doc = _parse(render_report(Report(command="smoke", site="s"), "html"))
    assert any(_text(p) == "No results." for p in doc.iter("p"))
    assert doc.find(".//header").get("class") == "pass"


def test_html_parses_and_shows_each_problem_first_with_its_symptoms() -> None:
    from racfg.results.problems import Problem

    report = awkward_report()
    root = next(r for r in report.results if r.status is Status.FAIL)
    symptom = next(r for r in report.results if r.status is Status.ERROR)
    report.problems = [Problem("check:x", "check", root.target, "cause <&>", "fix <it>", root.check, (symptom.check,))]
    report.results = [r.explained_by("check:x") if r.check in (root.check, symptom.check) else r
                      for r in report.results]
    doc = _parse(render_report(report, "html"))
    (article,) = [a for a in doc.iter("article") if a.get("data-problem") == "check:x"]
    assert _text(article.find("h3")) == "cause <&>"
    assert [_text(code) for code in article.iter("code")] == ["fix <it>", clean(root.check), clean(symptom.check)]
    held = [tr.get("data-cause") for tr in doc.iter("tr") if tr.get("data-cause")]
    assert held == ["check:x", "check:x"]
    order = [e.tag for e in doc.iter() if e.tag == "nav" or (e.tag == "section" and e.get("class") == "problems")]
    assert order == ["section", "nav"], "problems come before the filters and the results table"
