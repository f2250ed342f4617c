"""The HTML report's overview (issue 54): the host x category matrix, the fabric drawn with each link's
figure, skips grouped by reason, and a large report's rows kept once as JSON and drawn on demand.

Read back with a strict HTML5 parser from real inputs: the example leaf-spine inventory's intended site,
a real lab validate's run record (tests/recordings/validate-rolesdev) and bench/report_scale.py's
1,000-host report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from xml.etree.ElementTree import Element

import html5lib
import pytest

from racfg.intent import site_intent
from racfg.intent.fabric_outline import fabric_outline
from racfg.inventory import load_cluster
from racfg.results import Report, Result, Status, render_report
from racfg.results.wording import clean, skip_groups
from tests.results.samples import realistic_report

REPO = Path(__file__).resolve().parents[2]
RECORDED = REPO / "tests" / "recordings" / "validate-rolesdev" / "results.json"
_CLASS = {"fail": "f", "error": "e", "skip": "s", "info": "i", "pass": "p"}


def _parse(text: str) -> Element:
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(text)


def _text(element: Element) -> str:
    return "".join(element.itertext())


def _svg(element: Element, tag: str) -> list[Element]:
    """``tag`` elements under ``element``: the parser puts SVG's in its own namespace."""
    return [e for e in element.iter() if isinstance(e.tag, str) and e.tag.rsplit("}", 1)[-1] == tag]


def _section(doc: Element, cls: str) -> Element:
    (found,) = [s for s in doc.iter("section") if s.get("class") == cls]
    return found


def _expected_cell(statuses: list[str]) -> str:
    """A cell's colour, worked out here from the statuses: a failure, an error, a pass, else skip, else info."""
    for status in ("fail", "error", "pass", "skip", "info"):
        if status in statuses:
            return _CLASS[status]
    raise AssertionError("an empty cell has no colour")


def _matrix_cells(doc: Element) -> dict[tuple[str, str], str]:
    cells = {}
    for table in _section(doc, "matrix").iter("table"):
        categories = [_text(th) for th in table.find("thead").iter("th")][1:]
        for tr in table.find("tbody"):
            for category, td in zip(categories, tr.findall("td"), strict=True):
                if td.get("class"):
                    cells[(tr.get("data-host"), category)] = td.get("class")
    return cells


def test_matrix_holds_a_cell_per_host_and_category_coloured_by_status() -> None:
    report = Report.from_dict(json.loads(RECORDED.read_text()))
    doc = _parse(render_report(report, "html"))
    expected: dict[tuple[str, str], list[str]] = {}
    for r in report.results:
        expected.setdefault((r.target.split(":")[0], r.category), []).append(str(r.status))
    assert _matrix_cells(doc) == {key: _expected_cell(statuses) for key, statuses in expected.items()}
    matrix = _section(doc, "matrix")
    troubled = [tr.get("data-host") for tr in matrix.find("table").find("tbody")]
    assert troubled == ["dgx01", "stor01", "stor02"], "the hosts with a failure come first, outside the fold"
    (stor02,) = [tr for tr in matrix.iter("tr") if tr.get("data-host") == "stor02"]
    links = [a.get("href") for a in stor02.iter("a")]
    assert "#h=stor02&c=network" in links


def test_problems_come_first_with_their_fix_from_a_real_lab_run() -> None:
    report = Report.from_dict(json.loads(RECORDED.read_text()))
    doc = _parse(render_report(report, "html"))
    articles = list(_section(doc, "problems").iter("article"))
    assert [a.get("data-problem") for a in articles] == [p.id for p in report.problems]
    for article, problem in zip(articles, report.problems, strict=True):
        assert _text(article.find("h3")) == problem.cause
        assert _text(article.find(".//code")) == problem.fix
    order = [s.get("class") for s in doc.iter("section")]
    assert order.index("problems") < order.index("matrix") < order.index("skips")


def test_skips_are_grouped_by_reason_with_their_targets() -> None:
    report = realistic_report()
    doc = _parse(render_report(report, "html"))
    details = list(_section(doc, "skips").iter("details"))
    groups = skip_groups(report.results)
    assert len(details) == len(groups) >= 2
    for item, group in zip(details, groups, strict=True):
        assert group.reason in _text(item.find("summary"))
        assert _text(item.find("p")) == ", ".join(group.targets)
    gpu = next(g for g in groups if "nvidia-smi" in g.reason)
    assert gpu.targets == ("dgx01", "dgx02")


def test_the_leaf_spine_fabric_is_drawn_with_each_links_figure() -> None:
    cluster = load_cluster(REPO / "inventory" / "ra-leafspine.yaml")
    intent = site_intent(cluster)
    links = [p.description for sw in intent.switches.values() for p in sw.ports]
    slow, fast = links[0], links[1]
    results = [Result(slow, f"link/to-storage/{slow}", "link saturation", Status.FAIL, "71.3% of line rate",
                      data={"share_of_line": 0.713}),
               Result(fast, f"link/to-storage/{fast}", "link saturation", Status.PASS, "ok",
                      data={"share_of_line": 0.981}),
               Result(fast, f"link/from-storage/{fast}", "link saturation", Status.PASS, "ok",
                      data={"share_of_line": 0.962})]
    report = Report("smoke", cluster.name, results, meta={"fabric": fabric_outline(intent)})
    (svg,) = _svg(_section(_parse(render_report(report, "html")), "fabric"), "svg")
    switches = [_text(_svg(g, "text")[0]) for g in _svg(svg, "g") if "sw" in (g.get("class") or "").split()]
    assert sorted(switches) == ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"]
    isls = [_text(_svg(line, "title")[0]) for line in _svg(svg, "line") if _svg(line, "title")]
    assert len(isls) == 8 and "leaf1 - spine1: 5 x 100G" in isls
    ports = {_text(_svg(r, "title")[0]).split(" ")[0]: r for r in _svg(svg, "rect")
             if _svg(r, "title") and ":" in _text(_svg(r, "title")[0])}
    assert set(ports) == set(links) and len(links) == 40
    assert ports[slow].get("fill") == "#c62828" and "71.3%" in _text(ports[slow])
    assert ports[fast].get("fill") == "#2e7d32" and "96.2%" in _text(ports[fast]), "the lower direction"
    assert ports[links[2]].get("fill") == "#cfd8dc", "a link nothing measured is drawn pale"
    labels = [_text(t) for t in _svg(svg, "text") if t.get("class") == "port"]
    assert f"{slow} 71.3%" in labels


def test_a_report_without_a_fabric_outline_draws_none() -> None:
    doc = _parse(render_report(realistic_report(), "html"))
    assert not [s for s in doc.iter("section") if s.get("class") == "fabric"]


@pytest.fixture(scope="module")
def thousand_hosts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, str]:
    sys.path.insert(0, str(REPO / "bench"))
    from report_scale import synthetic_report

    report = synthetic_report(1000, tmp_path_factory.mktemp("site"))
    return report, render_report(report, "html")


def test_a_1000_host_report_stays_small_and_keeps_every_row_as_data(thousand_hosts: tuple[Report, str]) -> None:
    report, text = thousand_hosts
    assert len(report.results) == 96_000
    assert len(text.encode()) < 5_000_000, "a 1,000-host report stays a few MB"
    assert '<tr class="r ' not in text[:text.index("<script")], "no row in the DOM"
    start = text.index('<script type="application/json" id="rows">')
    data = json.loads(text[text.index(">", start) + 1:text.index("</script>", start)])
    strings, rows = data["s"], data["r"]
    assert len(rows) == len(report.results)
    for row, result in zip(rows, report.sorted_results(), strict=True):
        target, check, category, expected, actual, message, fix, cause = (strings[i] for i in row[1:])
        assert ["fail", "error", "skip", "info", "pass"][row[0]] == str(result.status)
        assert (target, check.replace("\t", target), category) == (result.target, result.check, result.category)
        assert (expected, actual, message, fix, cause) == tuple(clean(v) for v in (
            result.expected, result.actual, result.message, result.fix, result.cause))
    matrix = text[text.index('<section class="matrix"'):text.index('<section class="fabric"')]
    cells = _matrix_cells(_parse(f"<!DOCTYPE html><title>m</title>{matrix}"))
    assert cells[("node00005", "network")] == "f" and cells[("node00041", "link saturation")] == "f"
    assert cells[("node00300", "access")] == "e" and cells[("node00000", "gpu")] == "s"
    assert cells[("node00000", "os")] == "p" and ("node00003", "gpu") not in cells, "a storage node has no GPU checks"
    assert len({host for host, _ in cells}) == 1000


def test_the_page_references_nothing_outside_itself(thousand_hosts: tuple[Report, str]) -> None:
    small = render_report(Report.from_dict(json.loads(RECORDED.read_text())), "html")
    doc = _parse(small)
    assert doc.find(".//link") is None and doc.find(".//iframe") is None
    assert all(e.get("src") is None and e.get("href", "#").startswith("#") for e in doc.iter()
               if isinstance(e.tag, str) and e.tag.rsplit("}", 1)[-1] in ("script", "img", "svg", "image", "a"))
    for text in (small, thousand_hosts[1]):
        assert "http://" not in text and "https://" not in text and "@import" not in text and "url(" not in text
        assert " src=" not in text.replace(' src="data:', "")


def test_heat_map_and_trends_appear_when_their_data_is_present() -> None:
    report = realistic_report()
    doc = _parse(render_report(report, "html"))
    assert not [s for s in doc.iter("section") if s.get("class") in ("heatmap", "trends")], "no data, no section"
    report.meta["peer_heatmap"] = {"figures": ["link.to-storage", "storage.read"],
                                   "nodes": {"dgx01": [1.0, None], "dgx02": [0.94, 1.01], "stor01": [0.8, 0.99]}}
    report.meta["trends"] = {"scaling.aggregate.n16": {"unit": "Mbit/s", "points": [["r1", 3900], ["r2", 3950],
                                                                                      ["r3", 3610]]}}
    doc = _parse(render_report(report, "html"))
    heat = _section(doc, "heatmap")
    rows = {tr.find("th").text: [td.get("class") for td in tr.findall("td")] for tr in heat.find(".//tbody")}
    assert list(rows) == ["stor01", "dgx02", "dgx01"], "the lowest against its peers first"
    assert rows == {"stor01": ["f", "p"], "dgx02": ["e", "p"], "dgx01": ["p", None]}
    trend = _section(doc, "trends")
    (line,) = _svg(trend, "polyline")
    assert len(line.get("points").split()) == 3
    assert _text(trend.find(".//figcaption")) == "scaling.aggregate.n16: 3610 Mbit/s"
    meta_keys = [_text(tr.find("th")) for t in doc.iter("table") if t.get("class") == "meta" for tr in t.iter("tr")]
    assert "peer_heatmap" not in meta_keys and "trends" not in meta_keys


def test_many_problems_fold_after_the_first_five_so_the_matrix_stays_near_the_top() -> None:
    from racfg.results.problems import Problem

    results = [Result(f"dgx{i:02d}", f"dgx{i:02d}/os/check[{j}]", "os", Status.FAIL, "broken", fix="do it")
               for i in range(12) for j in range(7)]
    problems = [Problem(f"check:dgx{i:02d}", "check", f"dgx{i:02d}", f"dgx{i:02d} broken", "do it",
                        f"dgx{i:02d}/os/check[0]", tuple(f"dgx{i:02d}/os/check[{j}]" for j in range(1, 7)))
                for i in range(12)]
    doc = _parse(render_report(Report("validate", "s", results, problems=problems), "html"))
    section = _section(doc, "problems")
    outside = [a.get("data-problem") for a in section.findall("article")]
    folded = [a.get("data-problem") for a in section.find("details").iter("article")]
    assert outside == [p.id for p in problems[:5]] and folded == [p.id for p in problems[5:]]
    first = section.find("article")
    assert len(first.find("ul").findall("li")) == 5, "four results, then the other three folded"
    assert len(list(first.find("ul").find("li/details").iter("li"))) == 3
