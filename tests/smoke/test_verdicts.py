"""Plan, verdicts, bottleneck, compare and plots on measured series (no lab needed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from racfg.connection import ConnectionOverrides
from racfg.hostfacts.iperf3 import Iperf3Result
from racfg.inventory import load_cluster
from racfg.inventory.model import Reference, UserBenchmark
from racfg.results import Report, Status
from racfg.smoke.compare import compare_reports
from racfg.smoke.measured import FlowResult, LoadResult
from racfg.smoke.metrics import reference_text, within
from racfg.smoke.phases.link_saturation import LinkMeasurement, link_result, outlier_results
from racfg.smoke.phases.read_scaling import StepMeasurement, judge_scaling, step_capacity, step_margin
from racfg.smoke.phases.user_benchmark import figure, render
from racfg.smoke.plots import plot_links, plot_scaling
from racfg.smoke.smoke_plan import Link, SmokePlan, build_plan, default_steps, tcp_ceiling
from racfg.smoke.tcp import plan_flows

INVENTORY = Path(__file__).parent / "smokelab.yaml"
RA = Path(__file__).parents[2] / "inventory" / "ra-ethernet.yaml"
LAB = ConnectionOverrides(provider="lab", link_rates_mbit={
    ("smdgx01", "data0"): 250, ("smdgx02", "data0"): 250, ("smdgx03", "data0"): 250,
    ("smstor01", "data0"): 500, ("smstor02", "data0"): 500})


@pytest.fixture(scope="module")
def plan() -> SmokePlan:
    return build_plan(load_cluster(INVENTORY), LAB)


def load(plan: SmokePlan, per_client: dict[str, float], direction: str = "read",
         sources: Mapping[str, Sequence[Link]] | None = None) -> LoadResult:
    """A load whose flows received the given Mbit/s per client host, split over its flows."""
    clients = [link for link in plan.clients if link.host in per_client]
    flows = plan_flows(plan, clients, sources)
    results = []
    for flow in flows:
        share = sum(1 for f in flows if f.client.host == flow.client.host)
        bits = per_client[flow.client.host] * 1e6 / share
        results.append(FlowResult(flow, Iperf3Result(bits, bits, 3.0, int(bits * 3 / 8), 0, direction == "read", 1,
                                                     "iperf 3.12", cpu_percent=5.0)))
    return LoadResult(direction, results, 4.0)


def test_tcp_ceiling_matches_the_ra_figures() -> None:
    assert tcp_ceiling(9000) == pytest.approx(0.990, abs=0.001)
    assert tcp_ceiling(1500) == pytest.approx(0.941, abs=0.002)


def test_plan_from_the_lab_inventory(plan: SmokePlan) -> None:
    assert [link.key for link in plan.clients] == ["smdgx01:data0", "smdgx02:data0", "smdgx03:data0"]
    assert {link.rate_source for link in plan.clients} == {"lab shaper"}
    assert plan.steps == [1, 2, 3] and plan.lab
    assert (plan.duration_s, plan.omit_s) == (3, 1)  # lab defaults, shorter than a real cluster's
    assert plan.processes_for(plan.clients[0]) == 2  # one per storage host


def test_plan_for_the_ra_uses_inventory_rates_and_real_durations() -> None:
    plan = build_plan(load_cluster(RA), ConnectionOverrides())
    assert len(plan.clients) == 9 and plan.clients[0].rate_mbit == 100_000
    assert plan.clients[0].rate_source == "inventory" and not plan.lab
    assert plan.steps == [1, 2, 4, 8] and (plan.duration_s, plan.omit_s) == (10, 2)
    assert plan.processes_for(plan.clients[0]) == 8  # 100G / 25G per iperf3, but one per storage node


@pytest.mark.parametrize(("processes", "timing"), [
    (64, (1, 3)),    # a batch of 8 links: the lab's own timing
    (96, (1, 3)),    # the 40-host demo's 8-client step, started together within a second
    (192, (3, 6)),   # its 16-client step: 2 s more warm-up, measured twice as long
    (288, (5, 9)),
])
def test_a_lab_load_of_more_processes_than_its_cpus_start_together_is_given_time(plan: SmokePlan, processes: int,
                                                                                timing: tuple[int, int]) -> None:
    """The 40-host demo's 16-client step read E(16) = 0.88-0.98 and failed 2 runs of 8 on the lab's timing, its
    processes summing up to 2.6 times what the NICs took in; with 3 s of warm-up and 6 measured, 0.99-1.0."""
    assert plan.load_timing(processes) == timing
    site = build_plan(load_cluster(RA), ConnectionOverrides())
    assert site.load_timing(processes) == (2, 10)  # a site's hosts start their own: the plan's timing always


def test_multi_rail_links_load_from_their_own_rail_and_rails_without_storage_are_named() -> None:
    """ra-arista: 4 rails per DGX-1, storage on the first two. A link is loaded only from storage on its
    own subnet (an address elsewhere would be reached through another NIC); the others are left out, named."""
    plan = build_plan(load_cluster(RA.with_name("ra-arista.yaml")), ConnectionOverrides())
    assert {link.nic for link in plan.clients} == {"enp5s0", "enp12s0"} and len(plan.clients) == 18
    assert {link.nic for link in plan.unreached} == {"enp132s0", "enp139s0"} and len(plan.unreached) == 18
    assert plan.notes == ["18 dgx data link(s) not measured: no storage link on their subnet "
                          "(198.19.34.0/24, 198.19.35.0/24)"]
    for client in plan.clients:
        targets = plan.targets_for(client)
        assert len(targets) == 8 and {t.network for t in targets} == {client.network}
    assert plan.client_hosts == [f"dgx{i:02d}" for i in range(1, 10)]


def test_default_steps() -> None:
    assert default_steps(1) == [1]
    assert default_steps(9) == [1, 2, 4, 8, 9]
    assert default_steps(8) == [1, 2, 4, 8]


def test_flows_spread_over_storage_hosts_on_their_own_ports(plan: SmokePlan) -> None:
    flows = plan_flows(plan, plan.clients)
    assert len(flows) == 6
    ports = [(f.server.host, f.port) for f in flows]
    assert len(set(ports)) == len(ports)
    assert {f.server.host for f in flows if f.client.host == "smdgx01"} == {"smstor01", "smstor02"}


def test_link_verdicts_say_whether_link_or_protocol_limits(plan: SmokePlan) -> None:
    full = link_result(plan, LinkMeasurement(plan.clients[0], "read", load(plan, {"smdgx01": 248})))
    assert full.status is Status.PASS and "the link is full" in full.message
    assert full.data["share_of_ceiling"] == pytest.approx(248 / 250 / plan.clients[0].tcp_ceiling, rel=1e-4)
    half = link_result(plan, LinkMeasurement(plan.clients[1], "read", load(plan, {"smdgx02": 124})))
    assert half.status is Status.FAIL
    assert half.message.startswith("Expected: >= 90.0% of 250 Mbit/s (lab shaper) Actual: 124 Mbit/s")
    assert "not the protocol" in half.message


def test_outlier_named_even_above_the_floor(plan: SmokePlan) -> None:
    ms = [LinkMeasurement(link, "read", load(plan, {link.host: rate}))
          for link, rate in zip(plan.clients, (248, 247, 228), strict=True)]  # 91%: above the 90% floor
    results = outlier_results(plan, ms)
    failed = [r for r in results if r.status is Status.FAIL]
    assert [r.target for r in failed] == ["smdgx03:data0"]
    assert "of the best link of its kind (smdgx01:data0" in failed[0].message


@pytest.mark.parametrize(("rates", "slow", "held_to"), [
    # the best within its line rate: it is the reference
    ((248, 247, 228), ["smdgx03:data0"], 248),
    # the best overshot its line rate (250 Mbit/s, TCP ceiling 99.3% at MTU 9000): the others are held to
    # what the line carries, so full links are not outliers of a figure no link can carry
    ((305, 247, 246), [], 250 * tcp_ceiling(9000, 14)),
    # ... and a slow link is still named against that
    ((305, 247, 200), ["smdgx03:data0"], 250 * tcp_ceiling(9000, 14)),
])
def test_outliers_are_held_to_the_best_link_at_most_its_line_rate(plan: SmokePlan, rates: tuple[float, ...],
                                                                  slow: list[str], held_to: float) -> None:
    ms = [LinkMeasurement(link, "read", load(plan, {link.host: rate}))
          for link, rate in zip(plan.clients, rates, strict=True)]
    results = outlier_results(plan, ms)
    assert [r.target for r in results if r.status is Status.FAIL] == slow
    for r in results:
        if r.status is Status.FAIL:
            assert r.data["reference_bps"] == pytest.approx(held_to * 1e6, rel=1e-6)
            assert r.data["best"] == "smdgx01:data0" and r.data["best_bps"] == pytest.approx(rates[0] * 1e6)
            assert ("counted as" in r.message) is (rates[0] * 1e6 > held_to * 1e6)
        else:
            assert r.status is Status.PASS and "every link within 93.0% of the best (smdgx01:data0" in r.message


def test_linear_scaling(plan: SmokePlan) -> None:
    steps = [StepMeasurement(n, plan.client_hosts[:n], load(plan, dict.fromkeys(plan.client_hosts[:n], 248.0)),
                             n * 215e6) for n in (1, 2, 3)]
    verdict, results = judge_scaling(plan, steps)
    assert verdict.knee is None
    linear = next(r for r in results if r.check == "scaling/linear")
    assert linear.status is Status.PASS and linear.data["series"]["clients"] == [1, 2, 3]


C9000 = tcp_ceiling(9000, 14)  # the lab shaper's framing


@pytest.mark.parametrize(("storage_mbit", "hosts", "capacity_mbit"), [
    (500, ["smdgx01"], 250 * C9000),                          # one client link is the limit
    (500, ["smdgx01", "smdgx02", "smdgx03"], 750 * C9000),    # 3 x 250 clients < 2 x 500 storage
    (150, ["smdgx01", "smdgx02", "smdgx03"], 300 * C9000),    # the storage links are the limit
    (150, ["smdgx01"], 250 * C9000),
])
def test_step_capacity_is_the_smaller_side_at_its_tcp_ceiling(plan: SmokePlan, storage_mbit: float,
                                                              hosts: list[str], capacity_mbit: float) -> None:
    cut = plan.with_rates({k: (storage_mbit, "lab shaper") for k in ("smstor01:data0", "smstor02:data0")})
    assert step_capacity(cut, hosts) == pytest.approx(capacity_mbit * 1e6)


@pytest.mark.parametrize("per_client_n3", [
    99.0,   # 3 x 99 = 297 Mbit/s: within what the 2 x 150 storage links carry (298), judged as measured
    100.5,  # 3 x 100.5 = 301.5: above the 298 the links carry by less than the timing's tolerance
    #         (racfg.smoke.link_ceiling.OVER_CEILING), counted as the 298 they carry; more is an error (below)
])
def test_a_step_is_judged_on_no_more_than_its_links_carry(plan: SmokePlan, per_client_n3: float) -> None:
    cut = plan.with_rates({k: (150.0, "lab shaper") for k in ("smstor01:data0", "smstor02:data0")})
    steps = [StepMeasurement(n, cut.client_hosts[:n], load(cut, dict.fromkeys(cut.client_hosts[:n], rate)),
                             0.0, capacity_bits=step_capacity(cut, cut.client_hosts[:n]))
             for n, rate in ((1, 99.0), (3, per_client_n3))]
    verdict, results = judge_scaling(cut, steps)
    counted = min(3 * per_client_n3, 300 * C9000)
    assert verdict.knee is None and verdict.efficiency[3] == pytest.approx(counted / (3 * 99.0))
    step3 = next(r for r in results if r.check == "scaling/step003")
    assert step3.data["measured_bps"] == round(3 * per_client_n3 * 1e6)
    assert step3.data["aggregate_bps"] == round(counted * 1e6)
    assert ("more than the links carry" in step3.message) is (3 * per_client_n3 > 300 * C9000)


def test_a_sum_far_above_what_the_links_carry_is_no_reading(plan: SmokePlan) -> None:
    """The ra-leafspine demo's step 16 once added up to 48% above what its links carry (its processes
    did not run over the same seconds): an error that says so, left out of the series' verdict, and a
    margin below any real reading's so it is measured again and never decides over one."""
    cut = plan.with_rates({k: (150.0, "lab shaper") for k in ("smstor01:data0", "smstor02:data0")})
    steps = [StepMeasurement(n, cut.client_hosts[:n], load(cut, dict.fromkeys(cut.client_hosts[:n], rate)),
                             0.0, capacity_bits=step_capacity(cut, cut.client_hosts[:n]))
             for n, rate in ((1, 99.0), (2, 99.0), (3, 148.0))]  # 3 x 148 = 444 on 298: 49% over
    assert not steps[2].together and steps[1].together
    verdict, results = judge_scaling(cut, steps)
    checks = {r.check: r for r in results}
    step3 = checks["scaling/step003"]
    assert step3.status is Status.ERROR and "did not run over the same seconds" in step3.message, step3.message
    assert verdict.knee is None and checks["scaling/linear"].status is Status.PASS
    assert "linear over 1, 2 clients" in checks["scaling/linear"].message
    assert step_margin(cut, steps[2], 99e6) == -1.0 < step_margin(cut, steps[1], 99e6)


def test_nine_clients_on_eight_storage_links_of_their_speed_are_not_linear() -> None:
    """ra-ethernet in the lab: 9 x 1 Gbit/s clients read from 8 x 1 Gbit/s storage links. The sum of the
    iperf3 figures came out above what the links carry (E(9) = 0.914 judged as measured); counted
    as what they carry, E(9) = 8/9 and the storage links are named, at no more than 100% of their rate.
    (It came out 3% above: more than the tolerance, today a measurement error, measured again.)"""
    rates = {(h, "enp5s0"): 1000.0 for h in [f"dgx{i:02d}" for i in range(1, 10)]}
    rates |= {(f"weka{i:02d}", "enp24s0f0"): 1000.0 for i in range(1, 9)}
    ra = build_plan(load_cluster(RA), ConnectionOverrides(provider="lab", link_rates_mbit=rates))
    one = step_capacity(ra, ra.client_hosts[:1])
    steps = [StepMeasurement(1, ra.client_hosts[:1], load(ra, {"dgx01": 994.0}), 0.0, capacity_bits=one),
             StepMeasurement(9, ra.client_hosts, load(ra, dict.fromkeys(ra.client_hosts, 8050.0 / 9)), 0.0,
                             capacity_bits=step_capacity(ra, ra.client_hosts))]
    verdict, results = judge_scaling(ra, steps)
    assert verdict.knee == 9 and verdict.efficiency[9] == pytest.approx(8 / 9, rel=1e-3)
    linear = next(r for r in results if r.check == "scaling/linear")
    assert linear.status is Status.FAIL and "storage links saturated" in linear.message
    assert "8000 Mbit/s of 8000 Mbit/s (100.0%)" in linear.message, linear.message  # 8050 measured: never > 100%


def test_storage_bottleneck_names_the_knee_and_the_links(plan: SmokePlan) -> None:
    cut = plan.with_rates({"smstor01:data0": (150.0, "lab shaper"), "smstor02:data0": (150.0, "lab shaper")})
    steps = [StepMeasurement(1, ["smdgx01"], load(cut, {"smdgx01": 248}), 215e6),
             StepMeasurement(2, ["smdgx01", "smdgx02"], load(cut, {"smdgx01": 148, "smdgx02": 148}), 258e6),
             StepMeasurement(3, cut.client_hosts, load(cut, dict.fromkeys(cut.client_hosts, 98.0)), 258e6)]
    verdict, results = judge_scaling(cut, steps)
    assert verdict.knee == 2
    linear = next(r for r in results if r.check == "scaling/linear")
    assert linear.status is Status.FAIL and "knee is at n=2" in linear.message
    assert linear.data["bottleneck"]["kind"] == "storage-links"
    assert "storage links saturated" in linear.message and "98.7%" in linear.message


def test_slow_client_is_named_when_storage_has_room(plan: SmokePlan) -> None:
    steps = [StepMeasurement(1, ["smdgx01"], load(plan, {"smdgx01": 248}), 215e6),
             StepMeasurement(2, ["smdgx01", "smdgx02"], load(plan, {"smdgx01": 248, "smdgx02": 124}), 430e6)]
    _, results = judge_scaling(plan, steps)
    step2 = next(r for r in results if r.check == "scaling/step002")
    assert step2.data["bottleneck"]["kind"] == "slow-client" and "smdgx02" in step2.data["bottleneck"]["text"]


def test_references_reframe_style() -> None:
    ref = Reference(value=10.8, lower=-0.1, unit="GB/s")
    assert within(9.8, ref) and not within(9.7, ref)
    assert reference_text(ref) == "10.8 GB/s (-10%/+inf)"


def test_benchmark_template_launcher_and_regex(plan: SmokePlan) -> None:
    spec = UserBenchmark(name="fabric_read", command="python3 bench.py --from {storage} -t {duration}",
                         launcher="mpirun", regex=r"rate: ([0-9.]+) MB/s", unit="MB/s")
    fields = {"host": "smdgx01", "hosts": "smdgx01,smdgx02", "nodes": "2", "hosts_slots": "", "first": "smdgx01",
              "address": "198.19.56.11", "storage": "198.19.56.21,198.19.56.22", "duration": "3"}
    assert render(spec, fields) == ("mpirun -np 2 -H smdgx01,smdgx02 python3 bench.py --from "
                                    "198.19.56.21,198.19.56.22 -t 3")
    assert figure(spec, "warming up\nrate: 30.5 MB/s\n") == 30.5
    assert figure(spec, "no figure here") is None
    with pytest.raises(ValidationError, match="group"):
        UserBenchmark(name="x", command="true", regex="rate: [0-9]+")


def test_smoke_settings_in_the_inventory(tmp_path: Path) -> None:
    data = yaml.safe_load(INVENTORY.read_text())
    data["acceptance"]["smoke"] = {"duration_s": 20, "scaling_steps": [1, 3, 9], "processes_per_link": 4}
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(data))
    plan = build_plan(load_cluster(path), LAB)
    assert plan.duration_s == 20 and plan.processes_for(plan.clients[0]) == 4
    assert plan.steps == [1, 3] and "9" in plan.notes[0]  # a step above the client count is said, not run
    data["acceptance"]["smoke"] = {"durations": 3}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(Exception, match="durations"):
        load_cluster(path)


def test_compare_by_direction() -> None:
    def report(values: dict[str, float]) -> Report:
        from racfg.results import Result

        return Report("smoke", "s", [Result("x", name, "c", Status.PASS, "m", data={"metrics": [
            {"name": name, "value": v, "unit": "Mbit/s", "better": "higher"}]}) for name, v in values.items()])

    out = compare_reports(report({"a": 100, "b": 100, "c": 100}), report({"a": 90, "b": 104, "d": 1}), 0.05,
                          ("A", "B"))
    by = {r.check: r for r in out.results}
    assert by["a"].status is Status.FAIL and by["a"].data["verdict"] == "worse"
    assert by["b"].data["verdict"] == "same" and by["c"].status is Status.SKIP and by["d"].status is Status.SKIP
    assert out.exit_code() == 1


def test_plots_are_pngs(tmp_path: Path) -> None:
    rows = [{"link": "dgx01:data0", "direction": d, "share": s, "ceiling": 0.993, "measured_text": "248 Mbit/s"}
            for d, s in (("read", 0.99), ("write", 0.5))]
    links = plot_links(tmp_path / "links.png", "site", rows, 0.9, {"write:dgx01:data0"})
    scaling = plot_scaling(tmp_path / "scaling.png", "t", [1, 2, 3], [248, 300, 300], "Mbit/s", 0.9,
                           [215, 258, 258], 2, [(1, 250, 225, None)], ("storage link capacity", 300))
    for path in (links, scaling):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
