"""The node, not the step (issue 54, point 4): a step's suspects, their partners, and the verdict from the
pairs' figures (racfg.smoke.pair_isolation), through the scaling phase (a step of the lab inventory's clients,
tests/smoke/smokelab.yaml) and the storage phase (fio's recorded lab run)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from racfg.hostfacts.fio import parse_fio
from racfg.inventory import load_cluster
from racfg.results import Status
from racfg.smoke.measured import SEQ_JOB, FioRun, FioTarget, LoadResult, StepProbe
from racfg.smoke.pair_isolation import MAX_SUSPECTS, isolate_suspects, pick_pairs, shares
from racfg.smoke.phases.read_scaling import StepMeasurement, isolate_knee, judge_scaling, pair_results
from racfg.smoke.phases.storage_throughput import fio_pair_results
from racfg.smoke.smoke_plan import Link, SmokePlan, build_plan
from tests.smoke.test_judge_figures import DRIVE, LAB_FIO
from tests.smoke.test_verdicts import INVENTORY, LAB, load

FRACTION = 0.93


@pytest.fixture(scope="module")
def plan() -> SmokePlan:
    return build_plan(load_cluster(INVENTORY), LAB)


@pytest.mark.parametrize(("figures", "capacity", "pairs"), [
    ({"a": 240, "b": 240, "c": 240}, {}, []),  # every node at its share: no suspect, no extra load
    ({"a": 240, "b": 120, "c": 240}, {}, [("b", "a")]),
    ({"a": 240, "b": 120, "c": 235, "d": 60}, {}, [("d", "a"), ("b", "c")]),  # lowest first, partners in turn
    ({"a": 480, "b": 240}, {"a": 2, "b": 1}, []),  # a client of two links reads twice: at its share
    ({"a": 240, "b": 240}, {"a": 2, "b": 1}, [("a", "b")]),  # ... and half of that is below it
    ({"a": 0, "b": 0}, {}, []),  # the load carried nothing: no node passed to pair with
])
def test_suspects_are_the_nodes_below_their_share_each_beside_one_that_passed(figures, capacity, pairs) -> None:
    assert pick_pairs(figures, capacity, FRACTION) == pairs


def test_the_suspects_are_bounded() -> None:
    figures = {f"n{i}": 100.0 for i in range(10)} | {f"s{i}": 10.0 + i for i in range(6)}
    pairs = pick_pairs(figures, {}, FRACTION)
    assert [s for s, _ in pairs] == ["s0", "s1", "s2"] and len(pairs) == MAX_SUSPECTS
    assert all(p.startswith("n") for _, p in pairs)
    assert shares({"a": 1.0, "b": 3.0}, {}) == {"a": 0.5, "b": 1.5}


def pair_table(slow: dict[str, float], noisy: frozenset[str] = frozenset(), failed: frozenset[str] = frozenset()):
    """A pair's figures: 240 each, a slow node's own figure (``slow``) wherever it runs; a ``noisy`` suspect
    low in its first pair only; a ``failed`` partner carries nothing. Records the pairs loaded."""
    loaded: list[tuple[str, str]] = []

    def measure(suspect: str, partner: str) -> dict[str, float]:
        first = (suspect, partner) not in loaded
        loaded.append((suspect, partner))
        mine = slow.get(suspect, 120.0 if suspect in noisy and first else 240.0)
        return {suspect: mine, partner: 0.0 if partner in failed else 240.0}
    return measure, loaded


def test_a_node_that_stays_low_beside_a_good_partner_is_named_after_its_remeasurement() -> None:
    step = {"a": 240.0, "b": 110.0, "c": 235.0}
    measure, loaded = pair_table({"b": 115.0})
    said: list[str] = []
    [found] = isolate_suspects(step, {}, FRACTION, measure, 2, said.append, "scaling: step 3")
    assert (found.suspect, found.partner, found.loads) == ("b", "a", 3) and loaded == [("b", "a")] * 3
    assert found.low(FRACTION) and found.ratio == pytest.approx(115 / 240)
    assert said[0] == "scaling: step 3: b below its share, measured beside a, which passed"


def test_noise_in_a_pair_is_measured_through() -> None:
    measure, loaded = pair_table({}, noisy=frozenset({"b"}))
    [found] = isolate_suspects({"a": 240.0, "b": 110.0}, {}, FRACTION, measure, 2, lambda _: None, "x")
    assert found.loads == 2 and not found.low(FRACTION) and found.ratio == pytest.approx(1.0)
    assert loaded == [("b", "a")] * 2


def test_a_step_of_two_is_its_own_pair() -> None:
    """Its reading is the pair's first: only the re-measurements load, a fault reproduces, noise does not."""
    measure, loaded = pair_table({"b": 115.0})
    [found] = isolate_suspects({"a": 240.0, "b": 110.0}, {}, FRACTION, measure, 2, lambda _: None, "x")
    assert found.loads == 2 and loaded == [("b", "a")] * 2 and found.low(FRACTION)
    measure, loaded = pair_table({})
    [found] = isolate_suspects({"a": 240.0, "b": 110.0}, {}, FRACTION, measure, 2, lambda _: None, "x")
    assert found.loads == 1 and loaded == [("b", "a")] and not found.low(FRACTION)


def scaling_step(plan: SmokePlan, per_client: dict[str, float]) -> StepMeasurement:
    hosts = list(per_client)
    return StepMeasurement(len(hosts), hosts, load(plan, per_client), 0.0)


def measure_pairs(plan: SmokePlan, per_client: dict[str, float], loads: list[list[str]]):
    """``run.load`` for the pairs: each client reads its figure from ``per_client``; the clients loaded kept."""
    def measure(clients: list[Link], direction: str, label: str, sources=None) -> tuple[LoadResult, StepProbe]:
        hosts = list(dict.fromkeys(link.host for link in clients))
        loads.append(hosts)
        assert direction == "read" and label == f"scaling/isolate/{hosts[0]}"
        return load(plan, {h: per_client[h] for h in hosts}), StepProbe()
    return measure


def test_the_knee_names_the_client_that_stays_low_in_its_pair(plan: SmokePlan) -> None:
    """A 3-client step short of E(n) because smdgx02 reads at half rate: smdgx02, beside smdgx01, stays low."""
    steps = [scaling_step(plan, {"smdgx01": 240}),
             scaling_step(plan, {"smdgx01": 240, "smdgx02": 240}),
             scaling_step(plan, {"smdgx01": 240, "smdgx02": 120, "smdgx03": 235})]
    verdict, _ = judge_scaling(plan, steps)
    assert verdict.knee == 3
    loads: list[list[str]] = []
    results = isolate_knee(plan, measure_pairs(plan, {"smdgx01": 240, "smdgx02": 118}, loads), verdict, 2,
                           lambda _: None)
    assert loads == [["smdgx02", "smdgx01"]] * 3  # the pair, and its two re-measurements: low every time
    [named] = results
    assert (named.target, named.check, named.status) == ("smdgx02", "scaling/isolate/smdgx02", Status.FAIL)
    assert "client smdgx02 stays low beside smdgx01" in named.message and "the 3-client step" in named.message
    assert "racfg validate --limit smdgx02" in named.fix
    assert named.data["pairs"][0]["figures"] == {"smdgx02": 118_000_000, "smdgx01": 240_000_000}


def test_healthy_pairs_leave_the_step_at_fault(plan: SmokePlan) -> None:
    step = scaling_step(plan, {"smdgx01": 240, "smdgx02": 120, "smdgx03": 235})
    verdict, _ = judge_scaling(plan, [scaling_step(plan, {"smdgx01": 240}), step])
    loads: list[list[str]] = []
    [result] = isolate_knee(plan, measure_pairs(plan, {"smdgx01": 240, "smdgx02": 238}, loads), verdict, 2,
                            lambda _: None)
    assert loads == [["smdgx02", "smdgx01"]]
    assert (result.target, result.check, result.status) == ("cluster", "scaling/isolate", Status.PASS)
    assert "no client is at fault" in result.message and "smdgx02 beside smdgx01" in result.message


def test_no_extra_load_without_a_suspect_or_a_knee(plan: SmokePlan) -> None:
    """A step short with every client at its share (the storage links): the bottleneck, as before, no pair."""
    even = [scaling_step(plan, {"smdgx01": 240}), scaling_step(plan, {"smdgx01": 150, "smdgx02": 150})]
    linear = [scaling_step(plan, {"smdgx01": 240}), scaling_step(plan, {"smdgx01": 240, "smdgx02": 235})]
    for steps in (even, linear):
        loads: list[list[str]] = []
        verdict, _ = judge_scaling(plan, steps)
        assert isolate_knee(plan, measure_pairs(plan, {}, loads), verdict, 2, lambda _: None) == []
        assert loads == []


def test_a_pair_whose_partner_carried_nothing_decides_nothing(plan: SmokePlan) -> None:
    step = scaling_step(plan, {"smdgx01": 240, "smdgx02": 120, "smdgx03": 235})
    measure, _ = pair_table({}, failed=frozenset({"smdgx01"}))
    pairs = isolate_suspects(step.load.per_client_host(), {}, FRACTION, measure, 1, lambda _: None, "x")
    [result] = pair_results(plan, step, pairs)
    assert result.status is Status.ERROR and "not told apart" in result.message


def fio(host: str, gbytes: float) -> FioRun:
    """fio's recorded lab run on ``host``, its sequential figure set to ``gbytes`` GB/s."""
    recorded = parse_fio(LAB_FIO)
    jobs = [replace(j, read_bytes_per_s=gbytes * 1e9) if j.name == SEQ_JOB else j for j in recorded.jobs]
    return FioRun(FioTarget(host, ["/dev/nvme0n1"]), replace(recorded, jobs=jobs))


@pytest.mark.parametrize(("in_pair", "status", "target", "says"), [
    (0.4, Status.FAIL, "st2", "storage node st2 stays low beside st1"),
    (1.0, Status.PASS, "cluster", "no storage node is at fault"),
])
def test_a_storage_node_far_below_the_others_is_named_or_cleared_by_its_pair(in_pair, status, target, says) -> None:
    runs = [fio("st1", 1.0), fio("st2", 0.4), fio("st3", 0.98)]
    figures = {r.target.host: r.seq_bytes_per_s for r in runs}
    assert pick_pairs(figures, {}, FRACTION) == [("st2", "st1")]

    def measure(suspect: str, partner: str) -> dict[str, float]:
        return {suspect: in_pair * 1e9, partner: 1e9}
    pairs = isolate_suspects(figures, {}, FRACTION, measure, 0, lambda _: None, "storage")
    [result] = fio_pair_results(DRIVE, figures, FRACTION, pairs)
    assert (result.status, result.target) == (status, target) and says in result.message
    assert result.check == ("storage/drive/isolate/st2" if status is Status.FAIL else "storage/drive/isolate")


def test_a_storage_node_low_only_while_the_cpus_were_at_their_limit_is_an_error_naming_the_machine() -> None:
    """Seen in the 40-host demo on a loaded lab machine: weka05 read 80.6% of its partner's figure beside
    it, with the machine's two CPUs (every lab host's) busy throughout. A pair read on CPUs at their limit
    in every reading says nothing about the node: an error naming the machine, never a fail blaming it;
    without limits (one reading on free CPUs) the node is named as before."""
    runs = [fio("st1", 1.0), fio("st2", 0.4), fio("st3", 0.98)]
    figures = {r.target.host: r.seq_bytes_per_s for r in runs}
    pairs = isolate_suspects(figures, {}, FRACTION, lambda s, p: {s: 0.8e9, p: 1e9}, 0, lambda _: None, "storage")
    limits = {"st2": ["CPUs busy on st1 99%, st2 99%"]}
    [limited] = fio_pair_results(DRIVE, figures, FRACTION, pairs, limits)
    assert limited.status is Status.ERROR and limited.target == "st2"
    assert limited.message.startswith("the measuring machine was the limit (CPUs busy on st1 99%, st2 99%)")
    assert limited.data["machine_limit"] == limits["st2"] and "with the machines to themselves" in limited.fix
    assert "is at fault" not in limited.message
    [named] = fio_pair_results(DRIVE, figures, FRACTION, pairs, {})
    assert named.status is Status.FAIL and named.target == "st2"
