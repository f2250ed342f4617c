"""The drift plan text and the shared renderers on a drift report."""

from __future__ import annotations

import junitparser

from racfg.drift.plan_text import render_plan, total_line
from racfg.results import Report, Result, Status
from racfg.results.render import render_report


def drift_report() -> Report:
    results = [
        Result("dgx01", "dgx01/config/fabric : Reconfigure", "config", Status.FAIL,
               "would change: fabric : Reconfigure", "as deployed", "would change",
               "racfg deploy site.yaml --limit dgx01 --tags fabric",
               data={"sign": "~", "diff": "-mtu 9000\n+mtu 1500"}),
        Result("dgx01", "dgx01/state/network/mtu[data0]", "state", Status.FAIL,
               "network/mtu[data0]: Expected: 9000 Actual: 1500", "9000", "1500",
               "racfg deploy site.yaml --limit dgx01 --tags fabric", data={"sign": "~"}),
        Result("stor01", "stor01/environment/packages/ibverbs-utils", "environment", Status.FAIL,
               "stor01: package ibverbs-utils 44.0-2 -> (removed) since 2026-11-20 14:02 (deploy x)",
               "44.0-2", None, "racfg drift site.yaml --accept (if intended), else racfg deploy site.yaml "
               "--limit stor01", data={"sign": "-"}),
        Result("sw1", "sw1/environment/ports/1/2/mtu", "environment", Status.FAIL, "sw1: port 1/2 MTU 9000 -> 1500",
               "9000", "1500", "racfg deploy site.yaml --limit sw1", data={"sign": "~"}),
        Result("dgx02", "dgx02/state/network/mtu[data0]", "state", Status.PASS, ""),
    ]
    return Report("drift", "lab", results, elapsed=12.5, meta={"switches": ["sw1"], "baseline_label": "baseline x"})


def test_plan_reads_like_terraform():
    text = render_plan(drift_report())
    lines = text.splitlines()
    assert lines[0] == "racfg drift: site lab, against baseline x"
    assert "  ~ [config]      would change: fabric : Reconfigure" in text
    assert "      +mtu 1500" in text
    assert "  - [environment] stor01: package ibverbs-utils 44.0-2 -> (removed)" in text
    assert text.index("[config]") < text.index("[state]")  # layers in order within a target
    assert "    fix: racfg deploy site.yaml --limit dgx01 --tags fabric" in text
    assert lines[-1].startswith("Plan: 2 hosts and 1 switch drifted: 1 config, 1 state, 2 environment.")


def test_no_drift():
    report = Report("drift", "lab", [Result("dgx01", "dgx01/config/plan", "config", Status.PASS, "nothing")])
    assert total_line(report) == "no drift"
    assert "Plan: no drift." in render_plan(report)
    assert report.exit_code() == 0


def test_junit_of_a_drift_report_parses(tmp_path):
    path = tmp_path / "drift.xml"
    path.write_text(render_report(drift_report(), "junit"))
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = {suite.name: suite for suite in xml}
    assert sum(s.failures for s in suites.values()) == 4
    cases = [case for suite in xml for case in suite]
    assert {c.classname for c in cases} == {"config", "state", "environment"}


def test_problems_come_first_with_the_state_differences_they_explain():
    report = drift_report()
    problem = {"id": "host_mtu:dgx01:data0", "cause": "dgx01:data0 MTU 1500, the inventory says 9000",
               "fix": "racfg deploy site.yaml --limit dgx01 --tags fabric", "root": "dgx01/network/mtu[data0]"}
    report.results = [Result(r.target, r.check, r.category, r.status, r.message, r.expected, r.actual, r.fix,
                             data={**r.data, "problem": problem}, cause=problem["id"])
                      if r.check == "dgx01/state/network/mtu[data0]" else r for r in report.results]
    lines = render_plan(report).splitlines()
    start = lines.index("1 problem (validate's diagnosis of the state):")
    assert lines[start + 1:start + 4] == ["  1. dgx01:data0 MTU 1500, the inventory says 9000 [host_mtu:dgx01:data0]",
                                          "     fix: racfg deploy site.yaml --limit dgx01 --tags fabric",
                                          "     explains: dgx01/state/network/mtu[data0]"]
    assert start < lines.index("dgx01")
    assert not any(line.startswith("  ~ [state]") for line in lines), "a held difference is shown once, there"


def test_a_clean_plan_is_at_most_ten_lines_however_many_checks_skipped():
    skips = [Result(f"dgx{i:02}", f"dgx{i:02}/state/gpu/{c}", "state", Status.SKIP, f"no GPUs on dgx{i:02}")
             for i in range(1, 20) for c in ("count", "model", "nvlink")]
    report = Report("drift", "lab", [Result("dgx01", "dgx01/config/plan", "config", Status.PASS, "nothing"), *skips],
                    notes=["lab: no GPUs"])
    lines = render_plan(report).splitlines()
    assert len(lines) <= 10, lines
    assert "  57 checks skipped for 1 reason (each in the reports: racfg drift --output DIR, or --format json)" in lines
    assert lines[-1].startswith("Plan: no drift.")


def test_a_shared_task_is_fixed_with_the_tag_of_the_role_it_ran_for():
    from racfg.drift.config import owning_role

    assert owning_role("common : Report the packages a run would install (role ofed)") == "ofed"
    assert owning_role("common : Report the packages a run would install (role nfs_client)") == "nfs_client"
    assert owning_role("common : Report the packages a run would install (role common)") == "common"
    assert owning_role("fabric : Reconfigure the changed NICs") == "fabric"
    assert owning_role("Gathering Facts") is None
