"""A baseline is a good state (racfg.baseline.gate): which targets a full deploy validates, how a
target that fails keeps its last good facts, and how the recap names it. The lab test of the same
rule is tests/deploy/test_deploy_lab.py::test_a_baseline_is_a_good_state."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from racfg.baseline.collect import keep_previous
from racfg.baseline.gate import BaselineVerdict, candidates, judge
from racfg.playbook import HostProgress
from racfg.results import Report, Result, Status
from racfg.results.problems import Problem

BASELINE = {"meta": {"id": "20261128-040000"}, "hosts": {"dgx01": {"n": 1}, "stor01": {"n": 2}},
            "switches": {"sw1": {"v": 1}}}


def test_candidates_are_the_targets_changed_or_missing_that_the_run_succeeded_on():
    targets = {"dgx01": HostProgress("dgx01", ok=3), "stor01": HostProgress("stor01", ok=3, changed=1),
               "dgx02": HostProgress("dgx02", ok=2), "stor02": HostProgress("stor02", changed=1, failed=1),
               "sw1": HostProgress("sw1", ok=1), "sw2": HostProgress("sw2", unreachable=1)}
    # changed: stor01; not in the baseline yet: dgx02; failed or unreachable: never
    assert candidates(targets, BASELINE) == ["dgx02", "stor01"]
    # a converged run onto a site with a baseline: nothing to validate
    assert candidates({"dgx01": HostProgress("dgx01", ok=3), "sw1": HostProgress("sw1", ok=1)}, BASELINE) == []
    # no baseline yet: every target the run succeeded on
    assert candidates(targets, None) == ["dgx01", "dgx02", "stor01", "sw1"]


def _fail(check: str, status: Status = Status.FAIL, fix: str | None = None) -> Result:
    target = check.split("/")[0]
    return Result(target, check, check.split("/")[1], status, f"{check} failed", fix=fix)


def _report(results: list[Result], problems: list[Problem] = ()) -> Report:
    return Report("validate", "lab", results, problems=list(problems))


def test_a_target_that_fails_validate_is_refused_with_its_problem_and_fix():
    carrier = _fail("stor01/network/carrier[data0]", fix="racfg deploy lab.yaml --limit stor01 --tags fabric")
    problem = Problem("nic_admin:stor01:data0", "nic_admin", "stor01", "stor01:data0 is set down on the host",
                      carrier.fix, carrier.check, ("stor01/fabric/jumbo_frames[data0]",))
    report = _report([carrier, _fail("stor01/fabric/jumbo_frames[data0]"),
                      Result("dgx02", "dgx02/system/hostname", "system", Status.PASS)], [problem])
    asked = []

    def validate(names, checks):
        asked.append((names, checks))
        return report

    refused, first = judge(["dgx02", "stor01"], validate, poll_s=0)
    assert first is report and asked == [(["dgx02", "stor01"], None)]  # one run: nothing was settling
    assert refused == {"stor01": [{"id": "nic_admin:stor01:data0", "kind": "nic_admin",
                                   "cause": "stor01:data0 is set down on the host", "fix": carrier.fix}]}


def test_an_error_is_no_pass_and_a_failure_no_problem_explains_is_named_itself():
    unreachable = _fail("dgx02/system/reachable", Status.ERROR)
    refused, _ = judge(["dgx02"], lambda names, checks: _report([unreachable]), poll_s=0)
    assert refused == {"dgx02": [{"id": "dgx02/system/reachable", "kind": "check",
                                  "cause": "dgx02/system/reachable failed", "fix": None}]}


def test_settling_checks_are_polled_until_they_pass():
    """chrony's first sync right after a deploy: validated again (those checks only) until it passes."""
    clock = _fail("stor01/system/clock_synchronised")
    runs = [_report([clock]), _report([clock]), _report([Result("stor01", clock.check, "system", Status.PASS)])]
    asked = []

    def validate(names, checks):
        asked.append((names, checks))
        return runs[len(asked) - 1]

    refused, _ = judge(["stor01"], validate, poll_s=0.001, settle_s=10)
    assert refused == {}
    assert [a[0] for a in asked] == [["stor01"]] * 3 and asked[1][1] is not None and "*/system/clock_synchronised" \
        in asked[1][1]


def test_a_settling_check_that_never_passes_is_refused_when_the_time_runs_out():
    clock = _fail("stor01/system/clock_synchronised")
    count = []

    def validate(names, checks):
        count.append(1)
        return _report([clock])

    refused, _ = judge(["stor01"], validate, poll_s=0.001, settle_s=0.003)
    assert list(refused) == ["stor01"] and 2 <= len(count) <= 4


def test_a_stop_ends_the_wait():
    stop = threading.Event()
    stop.set()
    clock = _fail("stor01/system/clock_synchronised")
    count = []
    refused, _ = judge(["stor01"], lambda n, c: count.append(1) or _report([clock]), stop=stop, poll_s=60)
    assert list(refused) == ["stor01"] and count == [1]


def test_a_target_failing_more_than_settling_checks_is_not_polled():
    asked = []
    report = _report([_fail("stor01/system/clock_synchronised"), _fail("stor01/tuning/sysctl_persisted[x]")])
    refused, _ = judge(["stor01"], lambda n, c: asked.append(1) or report, poll_s=0.001)
    assert len(asked) == 1 and [p["id"] for p in refused["stor01"]] == [
        "stor01/system/clock_synchronised", "stor01/tuning/sysctl_persisted[x]"]


def test_keep_previous_keeps_the_last_good_facts_of_every_target_not_renewed(tmp_path: Path):
    for kind in ("hosts", "switches"):
        (tmp_path / kind).mkdir()
    # what this run read of every host (the read pass): only dgx01's may enter
    for host in ("dgx01", "stor01", "dgx02"):
        (tmp_path / "hosts" / f"{host}.json").write_text(json.dumps({"read": host}))
    keep_previous(tmp_path, BASELINE, {"dgx01"})
    docs = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "hosts").glob("*.json")}
    # dgx01 renewed; stor01 (refused) keeps its last good facts; dgx02 (refused, never good) has none
    assert docs == {"dgx01": {"read": "dgx01"}, "stor01": {"n": 2}}
    assert json.loads((tmp_path / "switches" / "sw1.json").read_text()) == {"v": 1}


def test_the_recap_names_the_target_the_problem_the_fix_and_what_stands():
    verdict = BaselineVerdict(kept="20261128-040000", refused={"stor01": [
        {"id": "nic_admin:stor01:data0", "kind": "nic_admin", "cause": "stor01:data0 is set down on the host",
         "fix": "racfg deploy lab.yaml --limit stor01 --tags fabric"}]}, validate_run="/runs/x-validate")
    text = "\n".join(verdict.lines())
    assert "baseline NOT recorded for stor01" in text and "its last good baseline (20261128-040000) stands" in text
    assert "stor01:data0 is set down on the host [nic_admin:stor01:data0]" in text
    assert "fix: racfg deploy lab.yaml --limit stor01 --tags fabric" in text and "/runs/x-validate" in text
    document = verdict.as_dict()
    assert document["refused"] == [{"target": "stor01", "problems": verdict.refused["stor01"]}]
    assert document["kept"] == "20261128-040000" and document["recorded"] is None


def test_the_deploy_recap_and_json_say_what_became_of_the_baseline(capsys, monkeypatch):
    """The table recap prints the refusal (target, problem, fix, what stands); JSON carries it whole."""
    from types import SimpleNamespace

    from racfg.cli.deploy_cmd import RecapFormat, report
    from racfg.deploy.deploy_run import LIMITED_RUN, DeployOutcome
    from racfg.errors import ExitCode

    monkeypatch.setenv("RACFG_PLAIN", "1")
    verdict = BaselineVerdict(kept="20261128-040000", validated=["stor01"], note="every target the run changed "
                              "fails validate: the baseline 20261128-040000 stands", refused={"stor01": [
                                  {"id": "carrier:sw1:1/17", "kind": "carrier", "cause": "no link", "fix": "re-plug"}]})
    host = {"host": "stor01", "ok": 3, "changed": 1, "failed": 0, "unreachable": 0, "skipped": 0, "problems": [],
            "changes": ["common : x"], "skips": [], "seconds": 1.0}
    outcome = DeployOutcome(SimpleNamespace(path=Path("/runs/x-deploy")), [host], ExitCode.OK,
                            baseline_verdict=verdict)
    report(outcome, RecapFormat.table, show_diff=False)
    out = capsys.readouterr().out
    assert "baseline NOT recorded for stor01" in out and "no link [carrier:sw1:1/17]" in out and "fix: re-plug" in out
    assert "baseline: every target the run changed fails validate: the baseline 20261128-040000 stands" in out
    report(outcome, RecapFormat.json, show_diff=False)
    document = json.loads(capsys.readouterr().out)
    assert document["baseline"] is None and document["baseline_state"]["refused"][0]["target"] == "stor01"
    limited = DeployOutcome(SimpleNamespace(path=Path("/runs/y-deploy")), [host], ExitCode.OK,
                            baseline_verdict=BaselineVerdict(note=LIMITED_RUN))
    report(limited, RecapFormat.table, show_diff=False)
    assert f"baseline: {LIMITED_RUN}" in capsys.readouterr().out
