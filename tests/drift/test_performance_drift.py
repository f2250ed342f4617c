"""drift --performance's verdicts (racfg.drift.figure_drops, racfg.drift.drop_causes) on a real baseline:
the items of tests/recordings/smoke-smokelab (a full smoke of tests/smoke/smokelab.yaml on the lab)
against readings now, and the other layers' findings a drop is tied to. The measurement itself is
the lab test's (tests/smoke/test_smoke_lab.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racfg.baseline.performance import baseline_items, conditions
from racfg.drift.drop_causes import cause_text, likely_causes, place_of
from racfg.drift.figure_drops import compare_item, compare_items, condition_differences, kind_of, suspects
from racfg.drift.plan_text import render_plan, total_line
from racfg.inventory import load_cluster
from racfg.results import Report, Result, Status

REPO = Path(__file__).resolve().parents[2]
RECORDING = REPO / "tests" / "recordings" / "smoke-smokelab" / "results.json"
INVENTORY = REPO / "tests" / "smoke" / "smokelab.yaml"
FLOORS = {"link": 0.03, "scaling": 0.04, "storage": 0.08, "rdma": 0.03, "nccl": 0.05, "benchmark": 0.05}


@pytest.fixture(scope="module")
def items() -> dict:
    return baseline_items(Report.from_dict(json.loads(RECORDING.read_text())))


def now_as_then(items: dict, changed: dict[str, float] | None = None) -> dict[str, tuple[float, ...]]:
    """Every item read once now at its baseline figure, but those ``changed`` (key -> factor)."""
    return {key: (item["value"] * (changed or {}).get(key, 1.0),) for key, item in items.items()}


# (figure then, readings now, better, floor) -> (drop, beyond noise): the verdict's table
CASES = [
    ((248.0, [248.0]), (233.1,), "higher", 0.03, 0.06, True),  # a link slowed by 6%: beyond the 3% floor
    ((248.0, [248.0]), (242.0,), "higher", 0.03, 0.0242, False),  # 2.4%: within the floor
    ((248.0, [248.0]), (252.0,), "higher", 0.03, -0.0161, False),  # faster now is never a drop
    ((248.0, [248.0, 200.0]), (233.1,), "higher", 0.03, 0.06, False),  # its own readings then spread 19%
    ((248.0, [248.0]), (200.0, 233.1), "higher", 0.03, 0.06, False),  # now spread 14%: judged on the best
    ((248.0, [248.0]), (233.1, 233.5), "higher", 0.03, 0.0585, True),  # twice low: the best is still 5.9% down
    ((10.0, [10.0]), (11.0,), "lower", 0.05, 0.10, True),  # a time that grew 10%
]


@pytest.mark.parametrize(("then", "now", "better", "floor", "drop", "beyond"), CASES)
def test_a_drop_is_the_best_reading_now_against_then_beyond_the_item_s_noise(
        then: tuple[float, list[float]], now: tuple[float, ...], better: str, floor: float, drop: float,
        beyond: bool) -> None:
    item = {"key": "link.read.smdgx01:data0", "value": then[0], "readings": then[1], "unit": "Mbit/s",
            "better": better}
    d = compare_item(item, now, {"link": floor})
    assert d.drop == pytest.approx(drop, abs=1e-3) and d.beyond_noise is beyond
    assert d.noise >= floor


def test_the_recorded_baseline_against_itself_drops_nothing(items: dict) -> None:
    drifts = compare_items(items, now_as_then(items), FLOORS)
    assert len(drifts) == len(items) >= 20 and not suspects(drifts)
    assert {kind_of(d.key) for d in drifts} == {"link", "scaling", "storage"}


def test_one_slowed_link_is_the_one_suspect_and_says_so(items: dict) -> None:
    drifts = compare_items(items, now_as_then(items, {"link.read.smdgx02:data0": 0.94}), FLOORS)
    [slow] = suspects(drifts)
    assert slow.key == "link.read.smdgx02:data0"
    assert slow.sentence() == ("link.read.smdgx02:data0: 248.1 -> 233.2 Mbit/s (-6.0%), beyond its noise "
                               "(3.0%, the floor for link figures)")
    assert slow.as_dict()["beyond_noise"] and slow.as_dict()["readings_now"] == [pytest.approx(233.2468, abs=1e-3)]


def test_an_item_not_measured_now_has_no_drop(items: dict) -> None:
    now = now_as_then(items)
    del now["storage.drive.seq.n1"]
    d = next(d for d in compare_items(items, now, FLOORS) if d.key == "storage.drive.seq.n1")
    assert d.now is None and d.drop is None and not d.beyond_noise and "not measured now" in d.sentence()


def test_conditions_that_differ_are_named() -> None:
    report = Report.from_dict(json.loads(RECORDING.read_text()))
    then = conditions(report)
    assert condition_differences(then, then) == []
    now = json.loads(json.dumps(then))
    now["lab_shaping_mbit"]["smdgx02:data0"] = 235.0
    now["software"]["iperf3"] = ["iperf 3.16"]
    now["software"]["fio"] = []  # a pass that ran no fio says nothing of fio
    assert condition_differences(then, now) == [
        "the lab shapes smdgx02:data0 at 235.0 Mbit/s now, 250.0 Mbit/s in the baseline",
        "iperf3 differs from the baseline's (['iperf 3.12'] then, ['iperf 3.16'] now)"]


# --- causes ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    return load_cluster(INVENTORY)


def test_an_item_s_place_is_its_host_nic_and_switch_port(cluster, items: dict) -> None:
    link = place_of(items["link.read.smdgx02:data0"], cluster)
    assert (link.hosts, link.nics, link.ports) == ({"smdgx02"}, {("smdgx02", "data0")}, {("smsw1", "1/2")})
    node = place_of(items["storage.drive.seq.n2.smstor02"], cluster)  # the per-node figure ends in its host
    assert node.hosts == {"smstor02"} and not node.site
    step = place_of(items["scaling.aggregate.n2"], cluster)  # a scaling step: the clients it loaded
    assert step.hosts == {"smdgx01", "smdgx02"} and ("smsw1", "1/2") in step.ports and not step.site
    three = place_of(items["scaling.aggregate.n3"], cluster)
    assert three.text() == "its 3 hosts (smdgx01, smdgx02, smdgx03 ...), their NICs and switch ports"
    assert place_of({"key": "nccl.all", "target": "cluster"}, cluster).site  # names no host: the whole site


def _drifted(target: str, category: str, check: str, message: str, fix: str) -> Result:
    return Result(target, f"{target}/{category}/{check}", category, Status.FAIL, message, fix=fix)


def test_the_change_on_the_drop_s_nic_or_port_is_its_likely_cause(cluster, items: dict) -> None:
    others = [
        _drifted("smdgx03", "config", "common", "sysctl net.ipv4.tcp_rmem would change", "deploy smdgx03"),
        _drifted("smdgx02", "environment", "packages/htop", "smdgx02: package htop 1 -> 2", "apt-get install htop=1"),
        _drifted("smdgx02", "state", "sysctl", "net.ipv4.tcp_rmem is 4096 4096 4096", "racfg deploy --limit smdgx02"),
        _drifted("smsw1", "environment", "ports/1/2/speed", "smsw1: port 1/2 speed 25G -> 10G",
                 "racfg deploy --limit smsw1"),
        _drifted("smsw1", "environment", "ports/1/3/speed", "smsw1: port 1/3 speed 25G -> 10G", "not this one"),
        Result("smdgx02", "smdgx02/state/ok", "state", Status.PASS, "passes: never a cause"),
        Result("smsw1:1/2", "switch/smsw1/1/2/errors", "switch counters", Status.FAIL,  # smoke's, under load
               "Expected: no drops, errors or pause frames Actual: 1200 rx_errors during link/read (port of "
               "smdgx02:data0)", fix="replace the cable of smsw1 port 1/2"),
    ]
    place = place_of(items["link.read.smdgx02:data0"], cluster)
    causes = likely_causes(place, others)
    # its own port first, then what moves a figure on its host, then the rest of its host; never another's
    assert [c.check for c in causes] == ["smsw1/environment/ports/1/2/speed", "switch/smsw1/1/2/errors",
                                         "smdgx02/state/sysctl", "smdgx02/environment/packages/htop"]
    text, fix = cause_text(place, causes, layers_ran=True)
    assert text == ("likely cause [environment]: smsw1: port 1/2 speed 25G -> 10G (and 3 other differences there)")
    assert fix == "racfg deploy --limit smsw1"


def test_a_drop_nothing_explains_says_so(cluster, items: dict) -> None:
    place = place_of(items["link.read.smdgx01:data0"], cluster)
    others = [_drifted("smdgx02", "config", "common", "sysctl would change", "racfg deploy --limit smdgx02")]
    assert likely_causes(place, others) == []
    assert cause_text(place, [], layers_ran=True) == (
        "nothing else drifted on smdgx01, NIC smdgx01:data0, smsw1 port 1/1: a drop no other layer explains", None)
    assert "no other layer was compared" in cause_text(place, [], layers_ran=False)[0]


def test_the_plan_shows_the_performance_layer_and_counts_it() -> None:
    drop = Result("smdgx02", "smdgx02/performance/link.read.smdgx02:data0", "performance", Status.FAIL,
                  "link.read.smdgx02:data0: 248.1 -> 233.2 Mbit/s (-6.0%), beyond its noise", fix="compare it",
                  data={"sign": "~"})
    report = Report("drift", "smokelab", [drop], meta={"layers": ["performance"], "switches": ["smsw1"]})
    assert total_line(report) == "1 host drifted: 1 performance"
    plan = render_plan(report)
    assert "~ [performance] link.read.smdgx02:data0: 248.1 -> 233.2 Mbit/s" in plan and "fix: compare it" in plan
    three = Report("drift", "smokelab", [], meta={"switches": []})  # a run of the three read layers, as before
    assert total_line(three) == "no drift"


def test_the_quick_form_halves_the_loads_but_measures_two_seconds_at_least(cluster) -> None:
    from dataclasses import replace

    from racfg.connection import NO_OVERRIDES
    from racfg.smoke.smoke_plan import brief_plan, build_plan

    real = build_plan(cluster, NO_OVERRIDES)  # a real site's defaults: 10 s loads, 2 s warm-up, 10 s fio
    brief = brief_plan(real)
    assert (brief.duration_s, brief.omit_s, brief.fio_runtime_s) == (5, 1, 5)
    assert brief.steps == [1, 3] and real.steps == [1, 2, 3]  # T(1) and T(N): E(N)
    lab = brief_plan(replace(real, duration_s=3, omit_s=1, fio_runtime_s=2))  # the lab's: already short
    assert (lab.duration_s - lab.omit_s, lab.fio_runtime_s) == (2, 2)  # a 1 s window reads the counters' timing
