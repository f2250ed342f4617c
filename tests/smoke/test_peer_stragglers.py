"""Stragglers against their peers (racfg.smoke.peer_stragglers) and the report's heat map and trends
(racfg.history.figure_trends), on the real smoke recordings of tests/recordings (see their ORIGIN.md):
the healthy lab names nobody, a link planted 10% below its peers is named, a group of two cannot be
judged, an item already failed is not blamed twice, and the HTML report draws what meta holds."""

from __future__ import annotations

import copy
import json
import shutil
import statistics
from pathlib import Path

import pytest

from racfg.history.figure_trends import CURRENT_LABEL, MAX_POINTS, site_trends
from racfg.results import Report, Result, Status, render_report
from racfg.smoke.peer_stragglers import CATEGORY, FLOOR, is_straggler, peer_heatmap, straggler_bound, straggler_results

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
RECORDED = json.loads((RECORDINGS / "smoke-smokelab" / "results.json").read_text())


def recorded_results() -> list[Result]:
    return [Result.from_dict(copy.deepcopy(r)) for r in RECORDED["results"]]


def planted(results: list[Result], figure: str, share: float) -> list[Result]:
    """The recording with one figure set to ``share`` of what it measured (a slow link, say)."""
    for r in results:
        for m in r.data.get("metrics", []):
            if m["name"] == figure:
                m["value"] = round(m["value"] * share, 6)
                return results
    raise AssertionError(f"{figure} is not in the recording")


def verdicts(results: list[Result]) -> dict[str, Result]:
    return {r.check: r for r in straggler_results(results)}


# values, the figure judged, straggler? (higher is better)
BOUNDS = [
    ([100, 100, 100, 100], 93.5, False),   # MAD 0: the 7% floor allows 7
    ([100, 100, 100, 100], 92.9, True),
    ([248.2, 248.1, 250.1], 240.0, False),  # the lab's own spread: within the floor
    ([248.2, 248.1, 250.1], 228.0, True),   # 8% low
    ([100, 80, 120, 90, 110], 60.0, False),  # a spread group: 3 scaled MADs (44.5) dominate the floor
    ([100, 80, 120, 90, 110], 55.0, True),
]


@pytest.mark.parametrize(("values", "value", "slow"), BOUNDS)
def test_straggler_bound_table(values: list[float], value: float, slow: bool) -> None:
    median, allowance = straggler_bound(values)
    assert is_straggler(value, median, allowance, "higher") is slow
    assert is_straggler(2 * median - value, median, allowance, "lower") is slow  # mirrored for lower-is-better


def test_mad_zero_falls_back_to_the_floor() -> None:
    median, allowance = straggler_bound([50.0, 50.0, 50.0])
    assert (median, allowance) == (50.0, pytest.approx(FLOOR * 50.0))


def test_the_healthy_lab_names_no_straggler_and_says_what_it_compared() -> None:
    out = verdicts(recorded_results())
    assert {c: r.status for c, r in out.items()} == {
        "peers/link.read@0.25G": Status.PASS, "peers/link.write@0.25G": Status.PASS,
        "peers/storage.drive.seq.n2": Status.SKIP, "peers/storage.drive.randiops.n2": Status.SKIP}
    assert "all 3 within" in out["peers/link.read@0.25G"].message
    assert all(r.category == CATEGORY for r in out.values())


def drive_run(values: dict[str, float], **data: object) -> Result:
    """fio on several storage nodes at once, as the storage phase reports it: each node's own figure."""
    n = len(values)
    metrics = [{"name": f"storage.drive.seq.n{n}.{host}", "value": v, "unit": "GB/s", "better": "higher"}
               for host, v in values.items()]
    return Result("drives", f"storage/drive/n{n}", "storage", Status.SKIP, "drive-side", data={"metrics": metrics,
                                                                                                 **data})


def test_a_node_below_its_peers_read_on_a_machine_at_its_limit_is_not_named_and_the_skip_names_the_machine() -> None:
    """Figures read at once with the probe's word that the CPUs were at their limit: the group is not
    judged, the skip names the machine; the same figures read on free CPUs name the slow node."""
    values = {"st1": 0.124, "st2": 0.125, "st3": 0.123, "st4": 0.098}
    [named] = straggler_results([drive_run(values)])
    assert (named.status, named.target) == (Status.FAIL, "st4")
    [skipped] = straggler_results([drive_run(values, machine_busy=["the controller's CPUs 97.0% busy"])])
    assert (skipped.status, skipped.check) == (Status.SKIP, "peers/storage.drive.seq.n4")
    assert "the measuring machine was the limit (the controller's CPUs 97.0% busy)" in skipped.message
    assert "no straggler is named" in skipped.message and skipped.data["peers"] == 4


def test_a_link_below_its_peers_is_named_though_it_passes_its_mark() -> None:
    results = planted(recorded_results(), "link.read.smdgx02:data0", 0.9)
    out = verdicts(results)
    slow = out["peers/link.read/smdgx02:data0"]
    assert (slow.status, slow.target) == (Status.FAIL, "smdgx02:data0")
    assert "90.0% of its 3 peers' median 248.2 Mbit/s" in slow.message and slow.fix
    assert slow.data["ratio"] == pytest.approx(0.9, abs=0.002)
    assert "peers/link.read@0.25G" not in out  # the group's PASS gives way to its straggler
    assert out["peers/link.write@0.25G"].status is Status.PASS  # the other direction is healthy


def test_a_group_of_two_says_it_cannot_judge_once() -> None:
    results = planted(recorded_results(), "storage.drive.seq.n2.smstor01", 0.5)
    skips = [r for r in straggler_results(results) if r.check == "peers/storage.drive.seq.n2"]
    assert len(skips) == 1 and skips[0].status is Status.SKIP
    assert "2 figure(s) to compare, fewer than 3" in skips[0].message


def test_an_item_already_failed_as_outlier_is_not_blamed_twice_nor_a_reference() -> None:
    results = planted(recorded_results(), "link.read.smdgx02:data0", 0.5)
    results.append(Result("smdgx02:data0", "outlier/read/smdgx02:data0", "outliers", Status.FAIL, "below the best"))
    out = verdicts(results)
    assert not any(r.status is Status.FAIL for r in out.values())
    assert out["peers/link.read@0.25G"].status is Status.SKIP  # 2 healthy peers left
    assert out["peers/link.write@0.25G"].status is Status.PASS  # the outlier was in reading only


def test_links_of_different_speeds_are_not_peers() -> None:
    results = planted(recorded_results(), "link.read.smdgx02:data0", 0.4)
    for r in results:
        if r.check == "link/read/smdgx02:data0":
            r.data["line_bps"] = 100_000_000  # a 100M link among 250M links: its own group of one
    out = verdicts(results)
    assert out["peers/link.read@0.1G"].status is Status.SKIP
    assert out["peers/link.read@0.25G"].status is Status.SKIP


def test_heatmap_is_node_by_figure_relative_to_the_peers_median() -> None:
    heat = peer_heatmap(planted(recorded_results(), "link.read.smdgx02:data0", 0.9))
    assert heat["figures"] == ["link.read", "link.write", "storage.drive.randiops.n2", "storage.drive.seq.n2"]
    assert set(heat["nodes"]) == {"smdgx01", "smdgx02", "smdgx03", "smstor01", "smstor02"}
    assert heat["nodes"]["smdgx02"][0] == pytest.approx(0.9, abs=0.002)
    assert heat["nodes"]["smdgx01"][2:] == [None, None]  # a client has no drive figure
    assert heat["nodes"]["smstor01"][3] == pytest.approx(6.712249 / statistics.median([6.712249, 6.796345]), abs=1e-3)


def test_trends_are_the_earlier_runs_key_figures_then_this_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(RECORDINGS / "smoke-history", runs, ignore=shutil.ignore_patterns("*.md"))
    trends = site_trends(runs, RECORDED["site"], recorded_results())
    read = trends["link.read.worst"]
    assert read["unit"] == "Mbit/s"
    assert [label for label, _ in read["points"]] == ["2026-11-28 12:04", "2026-11-28 12:05", "2026-11-28 12:06",
                                                      CURRENT_LABEL]
    assert read["points"][-1][1] == pytest.approx(248.13475)
    assert "scaling.aggregate.n3" in trends and "link.read.smdgx01:data0" not in trends  # key figures only
    assert site_trends(tmp_path / "none", RECORDED["site"], recorded_results())["link.read.worst"]["points"] == [
        [CURRENT_LABEL, pytest.approx(248.13475)]]


def test_trends_keep_the_last_runs_only(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    source = RECORDINGS / "smoke-history" / "20261128-120424-smoke" / "results.json"
    for minute in range(MAX_POINTS + 5):
        (runs / f"20261128-13{minute:02d}00-smoke").mkdir(parents=True)
        data = json.loads(source.read_text())
        data["started"] = f"2026-11-28T13:{minute:02d}:00+0000"
        (runs / f"20261128-13{minute:02d}00-smoke" / "results.json").write_text(json.dumps(data))
    points = site_trends(runs, RECORDED["site"], recorded_results())["link.read.worst"]["points"]
    assert len(points) == MAX_POINTS
    assert points[0][0] == "2026-11-28 13:06" and points[-1][0] == CURRENT_LABEL


def test_the_html_report_draws_the_heat_map_and_the_trends(tmp_path: Path) -> None:
    results = planted(recorded_results(), "link.read.smdgx02:data0", 0.9)
    report = Report.from_dict(copy.deepcopy(RECORDED))
    report.results = results + straggler_results(results)
    report.meta["peer_heatmap"] = peer_heatmap(results)
    report.meta["trends"] = site_trends(tmp_path, RECORDED["site"], results)
    page = render_report(report, "html")
    assert 'aria-label="Against the peers"' in page and 'aria-label="Trends"' in page
    assert '<td class="f" title="90.0% of the median">90</td>' in page  # red: 10% below its peers
    assert "link.read.worst" in page


def test_a_kind_noisier_than_the_floor_is_held_to_the_site_s_noise() -> None:
    """acceptance.noise: a site whose drives differ by a third (noise.storage 0.4); links keep the floor."""
    results = planted(recorded_results(), "link.read.smdgx02:data0", 0.85)
    noisy = {r.check: r for r in straggler_results(results, {"link": 0.03, "storage": 0.4})}
    assert noisy["peers/link.read/smdgx02:data0"].status is Status.FAIL  # 3% is below the 7% floor: the floor holds
    loose = {r.check: r for r in straggler_results(results, {"link": 0.2})}
    assert "peers/link.read/smdgx02:data0" not in loose  # 15% low is within a link noise of 20%
    assert loose["peers/link.read@0.25G"].status is Status.PASS
