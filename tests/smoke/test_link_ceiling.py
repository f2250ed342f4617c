"""Figures a link could carry, and verdicts the measuring machine cannot decide (issue 54, point 6).

A reading above what its link carries (its TCP ceiling at its line rate, racfg.smoke.link_ceiling) is a
measurement error: measured again, never a pass, never a baseline figure, and a bottleneck never claims
more than 100% of a link. A reading that falls short while the measuring machines were at their limit
(racfg.smoke.machine_limit) is an error that names them, not a fail that blames the fabric. All on plain
data: scripted readings (tests/smoke/test_remeasure.py's Script) and the smokelab plan (tests/smoke/
test_verdicts.py), the recorded iperf3 of the lab and the recorded smoke run of the smokelab.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from racfg.baseline.performance import baseline_items
from racfg.hostfacts.iperf3 import Iperf3Result, parse_iperf3
from racfg.inventory import load_cluster
from racfg.results import Report, Status
from racfg.smoke.bottleneck import name_bottleneck
from racfg.smoke.link_ceiling import OVER_CEILING, above, carried_bits
from racfg.smoke.machine_limit import machine_limits
from racfg.smoke.measured import FlowResult, LinkMeasurement, LoadResult, StepProbe
from racfg.smoke.phases.link_saturation import link_result, outlier_results
from racfg.smoke.phases.read_scaling import StepMeasurement, judge_scaling, step_capacity
from racfg.smoke.smoke_plan import SmokePlan, build_plan
from tests.smoke.test_remeasure import _links
from tests.smoke.test_verdicts import INVENTORY, LAB, load

FIXTURES = Path(__file__).parent / "fixtures"
RECORDING = Path(__file__).parents[1] / "recordings" / "smoke-smokelab" / "results.json"
PERCENT = re.compile(r"(\d+(?:\.\d+)?)%")


@pytest.fixture(scope="module")
def plan() -> SmokePlan:
    return build_plan(load_cluster(INVENTORY), LAB)


def test_what_a_lab_link_carries_and_the_tolerance_above_it(plan: SmokePlan) -> None:
    link = plan.clients[0]  # 250 Mbit/s shaped, MTU 9000: the shaper counts the Ethernet header only
    assert carried_bits(link) == pytest.approx(248.18e6, rel=1e-4)
    assert not above(carried_bits(link) * (1 + OVER_CEILING), carried_bits(link))
    assert above(carried_bits(link) * (1 + OVER_CEILING) + 1, carried_bits(link))
    # the smokelab's own recorded run: its highest link, 100.996% of line rate, is 101.7% of its ceiling
    assert not above(1.00996 * 250e6, carried_bits(link))


def test_a_reading_above_the_ceiling_is_measured_again_and_a_real_one_decides(plan: SmokePlan) -> None:
    """262 Mbit/s on a 250 Mbit/s link: in its batch (set aside, the link measured alone), then alone
    (measured again), then 246: the real reading passes, and the overshot one is listed as such."""
    script, _, checks = _links(plan, {("smdgx01", "read"): [262, 262, 246]})
    assert script.labels.count("link/read/smdgx01:data0") == 2
    read = checks["link/read/smdgx01:data0"]
    assert read.status is Status.PASS and read.data["measured_bps"] == 246_000_000
    assert [(r["value"], r.get("overshot", False)) for r in read.data["readings"]] == [(262, True), (246, False)]
    assert "262 Mbit/s (above what the links carry), 246 Mbit/s" in read.message


def test_a_link_whose_every_reading_overshot_is_a_measurement_error_never_a_pass(plan: SmokePlan) -> None:
    script, _, checks = _links(plan, {("smdgx01", "read"): [262, 262, 263, 264]})
    assert script.labels.count("link/read/smdgx01:data0") == 3  # the first alone and both re-measurements
    read = checks["link/read/smdgx01:data0"]
    assert read.status is Status.ERROR, read.message
    assert read.message.startswith("read (storage -> client): measurement error: 262 Mbit/s is above what a "
                                   "250 Mbit/s link carries (248 Mbit/s at its TCP ceiling, +5.6%)"), read.message
    assert "every reading is above what the links carry: a measurement error, no figure" in read.message
    assert read.data["overshot"] and "metrics" not in read.data and read.fix
    # the best of its kind counts at no more than its ceiling: the other link (247) is no outlier of it
    assert checks["outlier/read"].status is Status.PASS and "counted as 248 Mbit/s" in checks["outlier/read"].message


def test_a_baseline_keeps_no_overshot_item_nor_reading(plan: SmokePlan) -> None:
    recorded = Report.from_dict(json.loads(RECORDING.read_text()))
    _, _, error = _links(plan, {("smdgx01", "read"): [262, 262, 263, 264]})
    _, _, remeasured = _links(plan, {("smdgx01", "read"): [262, 262, 246]})
    def items(result):
        results = [result if r.check == result.check else r for r in recorded.results]
        return baseline_items(replace(recorded, results=results))

    assert "link.read.smdgx01:data0" in baseline_items(recorded)  # the recorded run's own reading is kept
    assert "link.read.smdgx01:data0" not in items(error["link/read/smdgx01:data0"])  # no figure of the link
    kept = items(remeasured["link/read/smdgx01:data0"])["link.read.smdgx01:data0"]
    assert kept["readings"] == [246.0] and kept["value"] == 246.0 and kept["spread"] is None


def test_a_links_figure_is_what_its_receiving_nics_took_in_when_they_were_read(plan: SmokePlan) -> None:
    """Each process's figure is over its own seconds: their sum ran up to 7% over a shaped link's rate on a
    busy machine. The NICs' common window (racfg.smoke.window) is the link's reading where it was read."""
    client = plan.clients[0]
    read = load(plan, {"smdgx01": 262.0})
    assert LinkMeasurement(client, "read", read).bits == 262e6  # no window read: the processes' sum
    windowed = LinkMeasurement(client, "read", replace(read, received={client.key: 247.5e6}))
    assert windowed.bits == 247.5e6 and link_result(plan, windowed).data["measured_by"] == "receiving NICs"
    write = load(plan, {"smdgx01": 262.0}, "write")
    storage = {fr.flow.server.key for fr in write.flows}
    on_nics = LinkMeasurement(client, "write", replace(write, received=dict.fromkeys(storage, 247e6 / len(storage))))
    assert on_nics.bits == pytest.approx(247e6) and link_result(plan, on_nics).status is Status.PASS


def _busy(host: str, share: float) -> StepProbe:
    return StepProbe(cpu_before={host: (0, 0)}, cpu_after={host: (round(share * 1000), 1000)})


def _cpu(load_: LoadResult, client: float | None, server: float | None) -> LoadResult:
    return replace(load_, flows=[FlowResult(fr.flow, replace(fr.result, cpu_percent=client, remote_cpu_percent=server))
                                 for fr in load_.flows if fr.result])


@pytest.mark.parametrize(("probe", "cpu", "says"), [
    (_busy("smdgx01", 0.95), (5.0, 5.0), "CPUs busy on smdgx01 95.0%"),
    (StepProbe(controller_before=(0, 0), controller_after=(930, 1000)), (5.0, 5.0), "the controller's CPUs 93.0% busy"),
    (None, (97.0, 5.0), "iperf3 on smdgx01 at 97% of a core"),
    (None, (5.0, 96.0), "iperf3 on smstor0"),  # the sending server, as the client's iperf3 reports it
])
def test_a_short_link_on_a_machine_at_its_limit_is_not_blamed_on_the_fabric(plan: SmokePlan, probe, cpu,
                                                                             says: str) -> None:
    m = LinkMeasurement(plan.clients[0], "read", _cpu(load(plan, {"smdgx01": 150.0}), *cpu), probe)
    result = link_result(plan, m)
    assert result.status is Status.ERROR and result.message.startswith("the measuring machine was the limit (")
    assert says in result.message and "not judged against the fabric" in result.message
    assert "Expected: >= 90.0% of 250 Mbit/s" in result.message and "check the cable" not in (result.fix or "")
    assert result.data["machine_limit"]
    other = LinkMeasurement(plan.clients[1], "read", load(plan, {"smdgx02": 247.0}))
    outlier = next(r for r in outlier_results(plan, [m, other]) if r.target == m.link.key)
    assert outlier.status is Status.ERROR and says in outlier.message


def test_a_short_link_on_an_idle_machine_fails_and_a_busy_one_that_meets_its_mark_passes(plan: SmokePlan) -> None:
    idle = LinkMeasurement(plan.clients[0], "read", load(plan, {"smdgx01": 150.0}), _busy("smdgx01", 0.5))
    assert link_result(plan, idle).status is Status.FAIL
    assert machine_limits(idle.load, _busy("smdgx09", 0.99)) == []  # a host the load did not use
    full = LinkMeasurement(plan.clients[0], "read", load(plan, {"smdgx01": 247.0}), _busy("smdgx01", 0.99))
    assert link_result(plan, full).status is Status.PASS


def _steps(plan: SmokePlan, n2: LoadResult, probe: StepProbe | None) -> list[StepMeasurement]:
    hosts = plan.client_hosts
    return [StepMeasurement(1, hosts[:1], load(plan, {"smdgx01": 247.0}), 0.0,
                            capacity_bits=step_capacity(plan, hosts[:1])),
            StepMeasurement(2, hosts[:2], n2, 0.0, probe, capacity_bits=step_capacity(plan, hosts[:2]))]


def test_a_short_step_on_a_busy_machine_is_an_error_and_no_knee(plan: SmokePlan) -> None:
    busy = StepProbe(cpu_before={h: (0, 0) for h in plan.client_hosts[:2]},
                     cpu_after={h: (960, 1000) for h in plan.client_hosts[:2]})
    verdict, results = judge_scaling(plan, _steps(plan, load(plan, {"smdgx01": 150.0, "smdgx02": 150.0}), busy))
    checks = {r.check: r for r in results}
    step2 = checks["scaling/step002"]
    assert step2.status is Status.ERROR and "the measuring machine was the limit (CPUs busy on smdgx01 96.0%, " \
        "smdgx02 96.0%)" in step2.message, step2.message
    assert verdict.knee is None and "metrics" in step2.data  # kept in the record, never in a baseline
    linear = checks["scaling/linear"]
    assert linear.status is Status.PASS and "linear over 1 clients" in linear.message
    idle, _ = judge_scaling(plan, _steps(plan, load(plan, {"smdgx01": 150.0, "smdgx02": 150.0}), None))
    assert idle.knee == 2  # the same figures on an idle machine: the fabric's knee


def test_storage_links_that_are_full_fail_whatever_the_cpus_did(plan: SmokePlan) -> None:
    cut = plan.with_rates({k: (150.0, "lab shaper") for k in ("smstor01:data0", "smstor02:data0")})
    busy = StepProbe(controller_before=(0, 0), controller_after=(990, 1000))
    verdict, results = judge_scaling(cut, _steps(cut, load(cut, {"smdgx01": 148.0, "smdgx02": 148.0}), busy))
    step2 = next(r for r in results if r.check == "scaling/step002")
    assert step2.status is Status.FAIL and step2.data["bottleneck"]["kind"] == "storage-links" and verdict.knee == 2


def _two_steps(plan: SmokePlan, n2: LoadResult) -> list[StepMeasurement]:
    hosts = plan.client_hosts[:2]
    return [StepMeasurement(1, hosts[:1], load(plan, {"smdgx01": 247.0}), 0.0,
                            capacity_bits=step_capacity(plan, hosts[:1])),
            StepMeasurement(2, hosts, n2, 0.0, capacity_bits=step_capacity(plan, hosts))]


def test_the_demos_127_percent_is_a_measurement_that_overshot_never_a_bottleneck(plan: SmokePlan) -> None:
    """The 40-host demo's step 16: E = 0.699 on its clients' NICs while the processes' figures added up to
    127.7% of the storage links: 'storage links saturated ... (127.7%)', a figure no link can carry. The
    storage links sent what the clients took in (69%: not full), the processes did not run together: the
    measuring machine was the limit, not the storage links, and no percentage above 100 in any text."""
    cut = plan.with_rates({k: (150.0, "lab shaper") for k in ("smstor01:data0", "smstor02:data0")})
    n2 = replace(load(cut, {"smdgx01": 192.0, "smdgx02": 192.0}), received={"smdgx01:data0": 104e6,
                                                                            "smdgx02:data0": 104e6})
    bottleneck = name_bottleneck(cut, n2, {})
    assert bottleneck.kind == "unknown" and "storage links at 69.3%" in bottleneck.text, bottleneck.text
    verdict, results = judge_scaling(cut, _two_steps(cut, n2))
    step2 = next(r for r in results if r.check == "scaling/step002")
    assert step2.status is Status.ERROR and verdict.knee is None
    assert ("the measuring machine was the limit (the iperf3 processes' figures add up to 384 Mbit/s, more than "
            "the links carry (298 Mbit/s): they did not run over the same seconds)") in step2.message, step2.message
    assert all(float(p) <= 100.0 for p in PERCENT.findall(step2.message)), step2.message


def test_storage_links_full_on_the_nics_fail_however_far_the_processes_sum_ran_over(plan: SmokePlan) -> None:
    """The smokelab with its storage links cut to 150 Mbit/s: the clients' NICs took in 296 of the 298 the
    storage links carry, while the processes' own figures added up to 330. The storage links are full (the
    knee, named at no more than 100%), not a measurement that overshot."""
    cut = plan.with_rates({k: (150.0, "lab shaper") for k in ("smstor01:data0", "smstor02:data0")})
    n2 = replace(load(cut, {"smdgx01": 165.0, "smdgx02": 165.0}), received={"smdgx01:data0": 148e6,
                                                                            "smdgx02:data0": 148e6})
    verdict, results = judge_scaling(cut, _two_steps(cut, n2))
    step2 = next(r for r in results if r.check == "scaling/step002")
    assert step2.status is Status.FAIL and verdict.knee == 2, step2.message
    assert step2.data["bottleneck"]["kind"] == "storage-links" and "(98.7%)" in step2.message, step2.message


@pytest.mark.parametrize("per_client", [334.0, 400.0])
def test_a_bottleneck_never_claims_more_than_a_links_capacity(plan: SmokePlan, per_client: float) -> None:
    """Three clients on 2 x 500 Mbit/s storage links: 1002 Mbit/s is the links full (within the
    tolerance: 100.0%, not 100.2%), 1200 more than they carry (said as an overshoot)."""
    bottleneck = name_bottleneck(plan, load(plan, dict.fromkeys(plan.client_hosts, per_client)), {})
    assert bottleneck.kind == ("storage-links" if per_client == 334.0 else "overshoot")
    assert all(float(p) <= 100.0 for p in PERCENT.findall(bottleneck.text)), bottleneck.text
    assert (bottleneck.utilisation or 0.0) <= 1.0


def test_iperf3_reports_both_ends_cpu() -> None:
    """The lab's recorded -R run: host_total is the client (the receiver), remote_total its server."""
    parsed = parse_iperf3((FIXTURES / "iperf3-J_v3.12_REVERSE-R_P2_omit1_racfg-lab-250Mbit.json").read_text())
    assert parsed.cpu_percent == pytest.approx(2.03281, rel=1e-4)
    assert parsed.remote_cpu_percent == pytest.approx(0.60489, rel=1e-4)
    assert parsed.as_dict()["remote_cpu_percent"] == parsed.remote_cpu_percent
    assert Iperf3Result(1.0, 1.0, 1.0, 1, None, False, 1, "3.0").remote_cpu_percent is None
