"""The gate's plan, pure: problems + Slurm's node states + partitions -> drain, resume, keep, held,
left to others, unknown; the breaker's edge cases; the drain reason's form and length."""

from __future__ import annotations

import pytest

from racfg.errors import ExitCode
from racfg.hostfacts.scontrol import SlurmNode
from racfg.scheduler.breaker import drain_cap
from racfg.scheduler.drain_reason import CHECK_PREFIX, PREFIX, REASON_MAX, drain_reason, is_racfg_reason, safe_text
from racfg.scheduler.gate_plan import Action, plan_gate
from racfg.scheduler.node_health import NodeHealth, NodeProblem


def node(name: str, state: str = "IDLE", reason: str | None = None, user: str | None = None) -> SlurmNode:
    base, *flags = state.split("+")
    return SlurmNode(name, base, frozenset(flags), reason, user, ("gpu",))


def broken(*ids: str, fix: str = "racfg deploy lab.yaml --limit X") -> NodeHealth:
    return NodeHealth({i: NodeProblem(i, fix, "dgx01") for i in ids})


def unreadable(why: str = "dgx01/system/reach: unreachable") -> NodeHealth:
    return NodeHealth(unreadable=[why])


NODES = [f"dgx{i:02d}" for i in range(1, 11)]  # 10 nodes: the 10% cap is one node


def actions(plan) -> dict[str, Action]:
    return {d.node: d.action for d in plan.decisions}


def test_a_broken_node_is_drained_with_its_problem_id_and_fix_and_the_rest_left_alone():
    plan = plan_gate({"gpu": NODES}, {"dgx03": broken("host_mtu:dgx03:data0")}, {n: node(n) for n in NODES}, 0.10)
    assert plan.of(Action.DRAIN)[0].node == "dgx03"
    assert {a for n, a in actions(plan).items() if n != "dgx03"} == {Action.OK}
    reason = plan.of(Action.DRAIN)[0].reason
    assert reason == "racfg: host_mtu:dgx03:data0 fix: racfg deploy lab.yaml --limit X"
    assert plan.exit_code() is ExitCode.FINDINGS


def test_racfgs_own_drain_is_resumed_once_the_problem_is_gone_and_kept_while_it_stays():
    mine = drain_reason(["host_mtu:dgx03:data0"], "racfg deploy lab.yaml --limit X")
    slurm = {n: node(n) for n in NODES} | {"dgx03": node("dgx03", "IDLE+DRAIN", mine, "root"),
                                          "dgx04": node("dgx04", "IDLE+DRAIN", mine, "root")}
    plan = plan_gate({"gpu": NODES}, {"dgx04": broken("host_mtu:dgx03:data0")}, slurm, 0.10)
    assert actions(plan)["dgx03"] is Action.RESUME
    assert actions(plan)["dgx04"] is Action.KEEP  # same problems: the same reason, nothing to run
    changed = plan_gate({"gpu": NODES}, {"dgx04": broken("nic_admin:dgx04:data0")}, slurm, 0.10)
    assert actions(changed)["dgx04"] is Action.DRAIN and "nic_admin:dgx04:data0" in changed.of(Action.DRAIN)[0].reason
    assert not changed.trips  # a racfg drain brought up to date is not a new one


def test_the_node_checks_drain_is_racfgs_too_brought_to_gates_reason_or_resumed():
    """The node check (HealthCheckProgram) drains with ``racfg-check:``; gate re-reads the whole site,
    so it takes that drain as racfg's: while racfg still finds a problem the node stays drained under
    gate's reason, once it finds none gate resumes it. Otherwise a node the check drained between two
    gates would be held as someone else's for ever, or gate's lab proof would depend on which came first."""
    check = f"{CHECK_PREFIX} network/carrier[data0]: ip link set data0 up"
    slurm = {n: node(n) for n in NODES} | {"dgx03": node("dgx03", "IDLE+DRAIN", check, "root"),
                                          "dgx04": node("dgx04", "IDLE+DRAIN", check, "root")}
    plan = plan_gate({"gpu": NODES}, {"dgx04": broken("nic_admin:dgx04:data0")}, slurm, 0.10)
    assert actions(plan)["dgx03"] is Action.RESUME and actions(plan)["dgx04"] is Action.DRAIN
    assert plan.of(Action.DRAIN)[0].reason.startswith(f"{PREFIX} nic_admin:dgx04:data0")
    assert is_racfg_reason(check) and not is_racfg_reason("racfgx: not ours")


def test_someone_elses_drain_or_down_is_never_touched_broken_or_not():
    slurm = {n: node(n) for n in NODES} | {
        "dgx01": node("dgx01", "IDLE+DRAIN", "bad DIMM, ticket 4711", "alice"),
        "dgx02": node("dgx02", "DOWN+NOT_RESPONDING", "Not responding", "slurm"),
        "dgx03": node("dgx03", "IDLE+DRAIN", "racfg-like but not racfg: x", "bob")}
    plan = plan_gate({"gpu": NODES}, {"dgx01": broken("host_mtu:dgx01:data0")}, slurm, 0.10)
    assert actions(plan)["dgx01"] is Action.OTHERS and plan.of(Action.OTHERS)[0].problems == ("host_mtu:dgx01:data0",)
    assert actions(plan)["dgx02"] is Action.OTHERS and actions(plan)["dgx03"] is Action.OTHERS
    assert not plan.of(Action.DRAIN, Action.RESUME)
    assert plan.exit_code() is ExitCode.FINDINGS  # a broken node, even if someone else holds it


def test_a_node_whose_read_failed_is_unknown_never_drained_never_resumed():
    mine = drain_reason(["host_mtu:dgx02:data0"], None)
    slurm = {n: node(n) for n in NODES} | {"dgx02": node("dgx02", "IDLE+DRAIN", mine, "root")}
    plan = plan_gate({"gpu": NODES}, {"dgx01": unreadable(), "dgx02": unreadable()}, slurm, 0.10)
    assert actions(plan)["dgx01"] is Action.UNKNOWN and actions(plan)["dgx02"] is Action.UNKNOWN
    assert not plan.of(Action.DRAIN, Action.RESUME)
    assert plan.exit_code() is ExitCode.CANNOT_RUN


def test_a_read_failure_beside_a_failure_that_was_read_still_drains():
    health = NodeHealth({"agent:dgx01:chronyd": NodeProblem("agent:dgx01:chronyd", "systemctl start chrony", "dgx01")},
                        ["dgx01/system/clock_synchronised: cannot read"])
    plan = plan_gate({"gpu": NODES}, {"dgx01": health}, {n: node(n) for n in NODES}, 0.10)
    assert actions(plan)["dgx01"] is Action.DRAIN


def test_a_host_slurm_does_not_know_is_absent():
    plan = plan_gate({"gpu": NODES}, {"dgx01": broken("x")}, {n: node(n) for n in NODES[1:]}, 0.10)
    assert actions(plan)["dgx01"] is Action.ABSENT and not plan.of(Action.DRAIN)


def test_nothing_wrong_is_exit_0():
    plan = plan_gate({"gpu": NODES}, {}, {n: node(n) for n in NODES}, 0.10)
    assert set(actions(plan).values()) == {Action.OK} and plan.exit_code() is ExitCode.OK


# --- the circuit breaker -----------------------------------------------------------------------

@pytest.mark.parametrize(("size", "share", "cap"), [(1, 0.10, 1), (9, 0.10, 1), (10, 0.10, 1), (19, 0.10, 1),
                                                     (20, 0.10, 2), (30, 0.10, 3), (4, 0.5, 2), (3, 1.0, 3)])
def test_the_cap_is_the_share_rounded_down_never_below_one(size, share, cap):
    assert drain_cap(size, share) == cap


def test_a_one_node_partition_can_lose_its_one_broken_node():
    plan = plan_gate({"solo": ["dgx01"]}, {"dgx01": broken("x")}, {"dgx01": node("dgx01")}, 0.10)
    assert actions(plan)["dgx01"] is Action.DRAIN and not plan.trips


def test_exactly_at_the_cap_drains_one_over_it_drains_none_of_the_partition_and_says_so():
    nodes = NODES + [f"dgx{i}" for i in range(11, 21)]  # 20 nodes: cap 2
    slurm = {n: node(n) for n in nodes}
    at_cap = plan_gate({"gpu": nodes}, {"dgx01": broken("a"), "dgx02": broken("b")}, slurm, 0.10)
    assert {d.node for d in at_cap.of(Action.DRAIN)} == {"dgx01", "dgx02"} and not at_cap.trips
    over = plan_gate({"gpu": nodes}, {n: broken("a") for n in ("dgx01", "dgx02", "dgx03")}, slurm, 0.10)
    assert not over.of(Action.DRAIN)
    assert {d.node for d in over.of(Action.HELD)} == {"dgx01", "dgx02", "dgx03"}
    (trip,) = over.trips
    assert (trip.partition, trip.size, trip.cap, trip.would_drain) == ("gpu", 20, 2, ("dgx01", "dgx02", "dgx03"))
    assert "dgx01, dgx02, dgx03" in trip.sentence() and "cap of 2" in trip.sentence()
    assert over.exit_code() is ExitCode.FINDINGS


def test_racfgs_drains_already_held_count_toward_the_cap_and_others_do_not():
    mine = drain_reason(["a"], "racfg deploy lab.yaml --limit X")
    slurm = {n: node(n) for n in NODES} | {"dgx01": node("dgx01", "IDLE+DRAIN", mine, "root"),
                                          "dgx02": node("dgx02", "IDLE+DRAIN", "maintenance", "alice")}
    plan = plan_gate({"gpu": NODES}, {"dgx01": broken("a"), "dgx03": broken("c")}, slurm, 0.10)
    assert actions(plan)["dgx01"] is Action.KEEP and actions(plan)["dgx03"] is Action.HELD
    freed = plan_gate({"gpu": NODES}, {"dgx03": broken("c")}, slurm, 0.10)  # dgx01 fixed: resumed, room for dgx03
    assert actions(freed)["dgx01"] is Action.RESUME and actions(freed)["dgx03"] is Action.DRAIN


def test_a_node_in_two_partitions_is_held_when_either_trips_and_the_other_partition_still_drains():
    small, big = ["dgx01", "dgx02"], NODES  # small: cap 1 at 50%; big: cap 5 at 50%
    slurm = {n: node(n) for n in NODES}
    health = {"dgx01": broken("a"), "dgx02": broken("b"), "dgx05": broken("e")}
    plan = plan_gate({"small": small, "big": big}, health, slurm, 0.5)
    assert actions(plan)["dgx01"] is Action.HELD and actions(plan)["dgx02"] is Action.HELD
    assert actions(plan)["dgx05"] is Action.DRAIN
    assert [t.partition for t in plan.trips] == ["small"]


# --- the reason --------------------------------------------------------------------------------

def test_the_reason_names_the_problem_first_counts_the_others_and_stays_within_the_limit():
    assert drain_reason(["a", "b", "c"], "fix it") == "racfg: a +2 more fix: fix it"
    long_fix = "racfg deploy inventory/a-very-long-site-name.yaml --limit " + ",".join(NODES * 5)
    reason = drain_reason(["port_mtu:sw1:1/2"], long_fix)
    assert len(reason) == REASON_MAX and reason.startswith("racfg: port_mtu:sw1:1/2 fix: racfg deploy")
    assert reason.endswith("...")
    huge_id = drain_reason(["x" * 300], "fix")
    assert len(huge_id) == REASON_MAX and huge_id.startswith(PREFIX) and huge_id.endswith("...")
    assert drain_reason(["a"], "b", limit=12) == "racfg: a"  # no room for the fix: the id alone
    assert is_racfg_reason(reason) and not is_racfg_reason("maintenance") and not is_racfg_reason(None)


def test_the_reason_keeps_to_a_safe_character_set():
    reason = drain_reason(["agent:dgx01:chronyd"], "systemctl start chrony; rm -rf / `id` $(x) 'q' \"d\" a=b\nnext")
    assert set(reason) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/,+()[]@#%- ")
    assert "=" not in reason and "\n" not in reason and ";" not in reason
    assert safe_text("a\tb  c") == "a b c"
