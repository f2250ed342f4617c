"""Smoke's leaf-spine verdicts on tables (no lab): cross-leaf pairing from the topology, the leaf whose
uplinks a load filled (ISL counters and uplink state), a link reading that fell short there, a step held
to what its links carry, the spine tier against the budget, and ECMP balance through validate's check."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from lslab import write_small_leafspine

from racfg.connection import ConnectionOverrides
from racfg.hostfacts.iperf3 import Iperf3Result
from racfg.inventory import load_cluster
from racfg.results import Status
from racfg.smoke.bottleneck import UPLINKS_FIX, leaf_uplinks
from racfg.smoke.measured import FlowResult, LoadResult, StepProbe
from racfg.smoke.phases.link_saturation import LinkMeasurement, link_result
from racfg.smoke.phases.read_scaling import (
    StepMeasurement,
    ecmp_results,
    judge_scaling,
    predicted,
    spine_tier_bits,
    spine_tier_result,
    step_capacity,
)
from racfg.smoke.smoke_plan import SmokePlan, build_plan
from racfg.smoke.tcp import plan_flows
from racfg.switches.parsers.port_counters import PortCounters

SITE = "lsunit"
RATES = {(f"{SITE}-{h}", "data0"): 1000 for h in ("dgx1", "dgx2", "st1", "st2")}


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> SmokePlan:
    path = write_small_leafspine(tmp_path_factory.mktemp(SITE), SITE, "198.18.99.0/24", "198.19.98.0/23")
    data = yaml.safe_load(path.read_text())
    data["links"][0]["speed"] = "50G"
    data["fabric"]["max_oversubscription"] = 2.0
    path.write_text(yaml.safe_dump(data))
    return build_plan(load_cluster(Path(path)), ConnectionOverrides(provider="lab", link_rates_mbit=RATES))


def load(plan: SmokePlan, hosts: list[str], per_client_mbit: float) -> LoadResult:
    clients = [link for link in plan.clients if link.host in hosts]
    flows = plan_flows(plan, clients)
    bits = per_client_mbit * 1e6 / plan.processes_for(clients[0])
    return LoadResult("read", [FlowResult(f, Iperf3Result(bits, bits, 3.0, int(bits * 3 / 8), 0, True, 1, "iperf 3.12"))
                               for f in flows], 4.0)


def probe(moved: dict[tuple[str, str], int]) -> StepProbe:
    """Counters before (zero) and after, ``moved`` bytes on each named (leaf, port), each way."""
    before = {key: PortCounters() for key in moved}
    after = {key: PortCounters(rx_bytes=b, tx_bytes=b) for key, b in moved.items()}
    return StepProbe(counters_before=before, counters_after=after)


def leaf(n: int) -> str:
    return f"{SITE}-leaf{n}"


def test_clients_read_across_the_spines_with_enough_flows_for_ecmp(plan: SmokePlan) -> None:
    assert plan.routed and plan.scale == pytest.approx(0.01)
    for client in plan.clients:
        assert [s.switch for s in plan.targets_for(client)] == [leaf(2) if client.switch == leaf(1) else leaf(1)]
        assert plan.processes_for(client) >= 8
    assert {(u.leaf, u.port, u.rate_mbit) for u in plan.uplinks} == {
        (leaf(n), port, 500.0) for n in (1, 2) for port in ("1/31", "1/32")}


CLEAN = {(leaf(n), p): 10**8 for n in (1, 2) for p in ("1/31", "1/32")}
CUT = {(leaf(1), "1/31"): 2 * 10**8, (leaf(1), "1/32"): 0, (leaf(2), "1/31"): 2 * 10**8, (leaf(2), "1/32"): 4000}


# (per client Mbit/s, counters, ports down, leaf named or None)
@pytest.mark.parametrize(("mbit", "moved", "down", "named", "idle"), [
    (985.0, CLEAN, frozenset(), leaf(2), []),  # full at 1:1, both uplinks carry: named only when the step fails
    (400.0, CLEAN, frozenset(), None, []),  # half-full uplinks limit nothing
    (495.0, CUT, frozenset({(leaf(1), "1/32")}), leaf(1), ["1/32"]),  # the leaf with the down uplink, not its peer
    (495.0, CUT, frozenset(), leaf(2), ["1/32"]),  # uplink state unread: the counters alone cannot tell the ends
])
def test_the_leaf_whose_uplinks_a_load_filled(plan, mbit, moved, down, named, idle) -> None:
    found = leaf_uplinks(replace(plan, uplinks_down=down), load(plan, [f"{SITE}-dgx1", f"{SITE}-dgx2"], mbit),
                         probe(moved).port_growth())
    assert (found.items["leaf"] if found else None) == named
    if found:
        assert found.kind == "leaf-uplinks" and found.items["idle"] == idle


# (client Mbit/s, counters, ports down, status, leaf named or None): one client's read from the other leaf
@pytest.mark.parametrize(("mbit", "moved", "down", "status", "named"), [
    (495.0, CUT, frozenset({(leaf(1), "1/32")}), Status.FAIL, leaf(1)),  # its leaf kept one uplink of two
    (300.0, CLEAN, frozenset(), Status.FAIL, None),  # uplinks at 30%: the link or the storage side, not them
    (985.0, CLEAN, frozenset(), Status.PASS, None),  # full: nothing to name
])
def test_a_cross_leaf_link_reading_names_the_uplinks_that_held_it_back(plan, mbit, moved, down, status,
                                                                      named) -> None:
    cut = replace(plan, uplinks_down=down)
    client = next(c for c in cut.clients if c.host == f"{SITE}-dgx1")
    result = link_result(cut, LinkMeasurement(client, "read", load(cut, [client.host], mbit), probe(moved)))
    assert result.status is status, result.message
    assert (result.data["bottleneck"] or {}).get("items", {}).get("leaf") == named
    if named:
        assert f"the leaf's uplinks are the limit: uplinks of {named}: 1 of 2" in result.message
        assert result.fix == UPLINKS_FIX
    elif status is Status.FAIL:
        assert "look at the link" in result.message and "cable" in (result.fix or "")


def test_a_cross_leaf_step_is_held_to_what_its_links_carry(plan: SmokePlan) -> None:
    """Two leaves: every cross-leaf flow crosses both, so a cut leaf lowers T(1) too and E(n) stays 1."""
    cut = replace(plan, uplinks_down=frozenset({(leaf(1), "1/32")}))
    steps = [StepMeasurement(n, hosts, load(cut, hosts, 495.0), predicted(cut, hosts), probe(CUT),
                             capacity_bits=step_capacity(cut, hosts))
             for n, hosts in ((1, [f"{SITE}-dgx1"]), (2, [f"{SITE}-dgx1", f"{SITE}-dgx2"]))]
    verdict, results = judge_scaling(cut, steps)
    assert verdict.knee == 1 and steps[0].bottleneck and steps[0].bottleneck.items["leaf"] == leaf(1)
    assert results[-1].status is Status.FAIL and "uplinks of lsunit-leaf1: 1 of 2" in results[-1].message
    tier = spine_tier_result(cut, steps, spine_tier_bits(cut))
    assert tier is not None and tier.status is Status.FAIL and "uplinks of lsunit-leaf1" in tier.message


def test_processes_that_ran_over_no_common_seconds_fill_no_leafs_uplinks(plan: SmokePlan) -> None:
    """The 40-host demo's 16-client step: its processes' own figures summed 2.6 times what the clients' NICs
    took in while all of them ran, and read as such they filled a healthy leaf's uplinks at 137%, so the
    step failed naming that leaf. What crossed a leaf is the flows' split of what the NICs took in: here
    700 of each 1,000 Mbit/s of uplinks, full nowhere, and the step is the measuring machine's, not a knee."""
    hosts = [f"{SITE}-dgx1", f"{SITE}-dgx2"]
    one = StepMeasurement(1, hosts[:1], replace(load(plan, hosts[:1], 985.0), received={f"{hosts[0]}:data0": 985e6}),
                          predicted(plan, hosts[:1]), probe(CLEAN), capacity_bits=step_capacity(plan, hosts[:1]))
    apart = replace(load(plan, hosts, 1300.0), received={f"{h}:data0": 700e6 for h in hosts})
    assert leaf_uplinks(plan, apart, probe(CLEAN).port_growth()) is None
    assert leaf_uplinks(plan, replace(apart, received=None), probe(CLEAN).port_growth()) is not None  # raw: 130%
    two = StepMeasurement(2, hosts, apart, predicted(plan, hosts), probe(CLEAN),
                          capacity_bits=step_capacity(plan, hosts))
    verdict, results = judge_scaling(plan, [one, two])
    step = next(r for r in results if r.check == "scaling/step002")
    assert verdict.knee is None and step.status is Status.ERROR, step.message
    assert "did not run over the same seconds" in step.message and "uplinks of" not in step.message


def test_a_full_cross_leaf_step_passes_beside_the_budget_spine_tier(plan: SmokePlan) -> None:
    hosts = [f"{SITE}-dgx1", f"{SITE}-dgx2"]
    step = StepMeasurement(2, hosts, load(plan, hosts, 985.0), predicted(plan, hosts), probe(CLEAN),
                           capacity_bits=step_capacity(plan, hosts))
    tier = spine_tier_result(plan, [step], spine_tier_bits(plan))
    # the budget: 2 x 50G uplinks per leaf at its NIC efficiency, half the reads crossing: 1.72 Gbit/s in the lab
    assert spine_tier_bits(plan) == pytest.approx(2 * 100e9 * plan.budget.nic_efficiency * 0.01, rel=1e-6)
    assert tier is not None and tier.status is Status.PASS and tier.data["budget"]["limiting_leaf"] == leaf(1)


@pytest.mark.parametrize(("moved", "down", "statuses", "fixes"), [
    (CLEAN, frozenset(), {"spine1": Status.PASS, "spine2": Status.PASS, "leaf1": Status.PASS,
                          "leaf2": Status.PASS}, {}),
    # leaf1's uplink to spine2 down: spine2 reaches leaf1 no way, so leaf2's healthy 1/32 idles too
    (CUT, frozenset({(leaf(1), "1/32")}),
     {"spine1": Status.FAIL, "spine2": Status.FAIL, "leaf1": Status.FAIL, "leaf2": Status.FAIL},
     {"leaf1": "1/32 on lsunit-leaf1 is down", "leaf2": "behind lsunit-leaf1 1/32 (down)"}),
])
def test_ecmp_balance_by_validates_checks_over_the_run(plan: SmokePlan, moved, down, statuses, fixes) -> None:
    results = ecmp_results(replace(plan, uplinks_down=down), [probe(moved)])
    assert {r.target.removeprefix(f"{SITE}-"): r.status for r in results} == statuses
    for target, fix in fixes.items():
        [spread] = [r for r in results if r.target == f"{SITE}-{target}"]
        assert fix in spread.fix and spread.data["idle"] == {"in": ["1/32"], "out": ["1/32"]}, spread.fix


def test_ecmp_unread_counters_is_a_skip(plan: SmokePlan) -> None:
    [result] = ecmp_results(plan, [StepProbe()])
    assert result.status is Status.SKIP and "not read" in result.message
