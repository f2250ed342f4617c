"""The diagnosis on tables of results: one problem per root cause, its symptoms linked, the rest alone."""

from __future__ import annotations

from racfg.results import Result, Status
from racfg.validate.analysis import CableEnd
from racfg.validate.diagnosis import diagnose

CABLES = [CableEnd("sw1", "1/1", "dgx01", "data0"), CableEnd("sw1", "1/2", "dgx02", "data0"),
          CableEnd("sw1", "1/17", "stor01", "data0"), CableEnd("sw1", "1/18", "stor02", "data0")]
DEPLOY_SW = "racfg deploy lab.yaml --limit sw1 --tags switch"


def fail(check: str, expected: str = "x", actual: str = "y", fix: str | None = "fix it",
         status: Status = Status.FAIL) -> Result:
    return Result(check.split("/")[0], check, check.split("/")[1], status, expected=expected, actual=actual, fix=fix)


def passing(check: str) -> Result:
    return Result(check.split("/")[0], check, check.split("/")[1], Status.PASS)


def by_id(results: list[Result]) -> dict[str, str | None]:
    return {r.check: r.cause for r in results}


def test_a_port_shut_by_hand_is_one_problem_holding_all_its_symptoms() -> None:
    results = [fail("sw1/switches/port_admin_up[1/17]", "up", "shutdown", DEPLOY_SW),
               fail("sw1/switches/port_oper_up[1/17]", "up", "down"),
               fail("stor01/network/carrier[data0]", "up", "no carrier"),
               fail("sw1/switches/port_lldp_neighbour[1/17]", "stor01:data0", "(no neighbour heard)"),
               fail("stor01/fabric/lldp_neighbour[data0]", "sw1 1/17", "(no neighbour heard)"),
               fail("stor01/fabric/jumbo_frames[data0]"),
               fail("sw1/switches/config_saved", "running config saved", "unsaved changes"),
               passing("dgx01/fabric/jumbo_frames[data0]"), passing("sw1/switches/port_admin_up[1/1]")]
    problems, linked = diagnose(results, CABLES)
    (problem,) = problems
    assert problem.id == "port_admin:sw1:1/17"
    assert problem.cause == "sw1 1/17 shut down in the running config (not saved)"
    assert problem.fix == DEPLOY_SW
    assert problem.root == "sw1/switches/port_admin_up[1/17]"
    assert len(problem.symptoms) == 6
    causes = by_id(linked)
    assert {causes[r.check] for r in results if r.status is Status.FAIL} == {problem.id}
    assert causes["dgx01/fabric/jumbo_frames[data0]"] is None


def test_a_failure_with_its_cause_absent_is_its_own_problem() -> None:
    results = [fail("stor01/fabric/jumbo_frames[data0]", actual="all 5 inbound paths fail"),
               passing("stor01/network/address[data0]")]
    (problem,), linked = diagnose(results, CABLES)
    assert (problem.kind, problem.root, problem.symptoms) == ("check", "stor01/fabric/jumbo_frames[data0]", ())
    assert linked[0].cause == problem.id and linked[1].cause is None


def test_a_moved_address_explains_the_paths_into_that_host() -> None:
    results = [fail("stor01/network/address[data0]", "198.19.50.21/24", "198.19.50.29/24"),
               fail("stor01/fabric/jumbo_frames[data0]")]
    (problem,), _ = diagnose(results, CABLES)
    assert problem.id == "address:stor01:data0"
    assert problem.cause == "stor01:data0 has 198.19.50.29/24, the inventory says 198.19.50.21/24"
    assert problem.symptoms == ("stor01/fabric/jumbo_frames[data0]",)


def test_two_independent_causes_are_two_problems() -> None:
    results = [fail("dgx01/network/mtu[data0]", "9000", "1500"), fail("dgx01/fabric/jumbo_frames[data0]"),
               fail("dgx01/consistency/same_as_peers[nic_mtu]"),
               fail("sw1/switches/port_mtu[1/2]", "9000", "1500", DEPLOY_SW), fail("dgx02/fabric/jumbo_frames[data0]")]
    problems, _ = diagnose(results, CABLES)
    assert {p.id: p.symptoms for p in problems} == {
        "port_mtu:sw1:1/2": ("dgx02/fabric/jumbo_frames[data0]",),
        "host_mtu:dgx01:data0": ("dgx01/fabric/jumbo_frames[data0]", "dgx01/consistency/same_as_peers[nic_mtu]")}


def test_a_symptom_two_causes_could_explain_goes_to_the_earlier_cause() -> None:
    """Switch port and host NIC both at MTU 1500: the path failure is filed once, under the switch port
    (the causal order reads the switch side first); the host's MTU is still its own problem."""
    results = [fail("dgx01/network/mtu[data0]", "9000", "1500"), fail("sw1/switches/port_mtu[1/1]", "9000", "1500"),
               fail("dgx01/fabric/jumbo_frames[data0]")]
    problems, linked = diagnose(results, CABLES)
    assert [(p.id, p.symptoms) for p in problems] == [
        ("port_mtu:sw1:1/1", ("dgx01/fabric/jumbo_frames[data0]",)), ("host_mtu:dgx01:data0", ())]
    assert by_id(linked)["dgx01/fabric/jumbo_frames[data0]"] == "port_mtu:sw1:1/1"


def test_a_stopped_lldpd_explains_lldp_at_both_ends_not_a_cable() -> None:
    deploy = "racfg deploy lab.yaml --limit dgx01 --tags common"
    results = [fail("dgx01/system/lldpd_running", "active", "inactive", deploy),
               fail("dgx01/fabric/lldp_neighbour[data0]", status=Status.ERROR),
               fail("sw1/switches/port_lldp_neighbour[1/1]", "dgx01:data0", "(no neighbour heard)")]
    (problem,), _ = diagnose(results, CABLES)
    assert problem.id == "agent:dgx01:lldpd" and problem.cause == "lldpd is not running on dgx01"
    assert problem.fix == deploy
    assert len(problem.symptoms) == 2


def test_swapped_cables_are_one_problem_from_expected_and_actual() -> None:
    results = [fail("sw1/switches/port_lldp_neighbour[1/2]", "dgx02:data0", "stor02:data0", "swap the cables"),
               fail("sw1/switches/port_lldp_neighbour[1/18]", "stor02:data0", "dgx02:data0"),
               fail("dgx02/fabric/lldp_neighbour[data0]", "sw1 1/2", "sw1 1/18"),
               fail("stor02/fabric/lldp_neighbour[data0]", "sw1 1/18", "sw1 1/2")]
    (problem,), _ = diagnose(results, CABLES)
    assert problem.id == "cabling:sw1:1/2+1/18"
    assert problem.cause == "cables swapped at sw1: 1/2 has stor02:data0 and 1/18 has dgx02:data0"
    assert problem.fix == "swap the cables" and len(problem.symptoms) == 3
    (again,), _ = diagnose(results, list(reversed(CABLES)))
    assert again == problem, "the id does not depend on the order of the cabling plan"


def test_a_host_nic_set_down_is_told_from_a_dead_cable() -> None:
    results = [fail("dgx01/network/carrier[data0]", "up", "admin down"), fail("sw1/switches/port_oper_up[1/1]")]
    (problem,), _ = diagnose(results, CABLES)
    assert problem.id == "nic_admin:dgx01:data0" and problem.symptoms == ("sw1/switches/port_oper_up[1/1]",)
    (dead,), _ = diagnose([fail("sw1/switches/port_oper_up[1/1]"), fail("dgx01/network/carrier[data0]", "up",
                                                                         "no carrier")], CABLES)
    assert dead.id == "carrier:sw1:1/1" and dead.symptoms == ("dgx01/network/carrier[data0]",)


def test_pfc_on_a_switch_is_one_problem_and_errors_of_an_unreachable_host_are_one() -> None:
    results = [fail("sw1/switches/port_pfc_off[1/17]", "PFC off", "PFC on"),
               fail("sw1/switches/no_lossless_priority", "none", "3"),
               *(fail(f"dgx02/system/{c}", status=Status.ERROR) for c in ("kernel", "hostname"))]
    problems, _ = diagnose([r if r.status is Status.FAIL else Result(r.target, r.check, r.category, r.status,
                                                                       message="cannot reach dgx02 over SSH")
                            for r in results], CABLES)
    assert [(p.id, len(p.symptoms)) for p in problems] == [("pfc:sw1", 1), ("unreadable:dgx02", 1)]
    assert problems[0].cause == "lossless settings on sw1: lossless priority 3; port 1/17 PFC on"


DEPLOY_COMMON = "racfg deploy lab.yaml --limit stor01 --tags common"


def test_chrony_pointed_elsewhere_is_the_cause_of_the_clock_that_does_not_synchronise() -> None:
    results = [fail("stor01/system/time_sources", "198.18.0.1", "203.0.113.99", DEPLOY_COMMON),
               fail("stor01/system/clock_synchronised", "synchronised", "Not synchronised", DEPLOY_COMMON),
               passing("stor01/system/chronyd_running")]
    (problem,), linked = diagnose(results, CABLES)
    assert (problem.id, problem.kind, problem.fix) == ("time_sources:stor01:chrony", "time_sources", DEPLOY_COMMON)
    assert problem.cause == ("chrony on stor01 is configured with 203.0.113.99, not the site's time sources "
                             "198.18.0.1 (site.time_sources)")
    assert problem.root == "stor01/system/time_sources" and problem.symptoms == ("stor01/system/clock_synchronised",)
    assert by_id(linked)["stor01/system/clock_synchronised"] == problem.id


def test_lldpd_announcing_the_wrong_name_is_not_a_cable() -> None:
    results = [fail("dgx01/system/lldpd_config", "system name dgx01, port id ifname",
                    "system name dgx09, port id ifname", "racfg deploy lab.yaml --limit dgx01 --tags common"),
               fail("sw1/switches/port_lldp_neighbour[1/1]", "dgx01:data0", "dgx09:data0", "re-cable")]
    (problem,), linked = diagnose(results, CABLES)
    assert problem.kind == "lldpd_config" and problem.symptoms == ("sw1/switches/port_lldp_neighbour[1/1]",)
    assert "announce system name dgx09, port id ifname" in problem.cause
    assert {r.fix for r in linked} == {"racfg deploy lab.yaml --limit dgx01 --tags common"}


def test_a_missing_sysctl_file_is_one_problem_not_one_per_parameter() -> None:
    missing = "(/etc/sysctl.d/90-racfg.conf missing)"
    results = [fail(f"stor01/tuning/sysctl_persisted[{k}]", "1", missing, DEPLOY_COMMON)
               for k in ("net.ipv4.tcp_mtu_probing", "net.core.rmem_max", "net.core.wmem_max")]
    results.append(fail("stor01/tuning/sysctl_live[net.ipv4.tcp_mtu_probing]", "1", "0", DEPLOY_COMMON))
    problems, _ = diagnose(results, CABLES)
    sysctl_file, live = problems
    assert sysctl_file.kind == "sysctl_file" and len(sysctl_file.checks) == 3
    assert sysctl_file.cause.startswith("/etc/sysctl.d/90-racfg.conf missing on stor01")
    assert live.kind == "check" and live.root == "stor01/tuning/sysctl_live[net.ipv4.tcp_mtu_probing]"


def test_a_route_or_neighbour_entry_overriding_a_nic_explains_its_failing_paths() -> None:
    deploy = "racfg deploy lab.yaml --limit dgx01 --tags fabric"
    results = [fail("dgx01/network/nothing_overrides[data0]", "data0's routes as planned, nothing overriding them",
                    "data0: blackhole 198.19.0.21 overrides 198.19.0.0/24 dev data0", deploy),
               fail("dgx01/fabric/jumbo_frames[data0]", actual="path dgx01:data0->stor01:data0 fails (route)",
                    fix=deploy),
               passing("dgx02/fabric/jumbo_frames[data0]")]
    (problem,), _ = diagnose(results, CABLES)
    assert (problem.id, problem.fix) == ("dataplane:dgx01:data0", deploy)
    assert problem.cause == "dgx01: data0: blackhole 198.19.0.21 overrides 198.19.0.0/24 dev data0"
    assert problem.symptoms == ("dgx01/fabric/jumbo_frames[data0]",)


def test_a_planned_route_missing_is_one_problem_with_the_route_check_it_fails() -> None:
    deploy = "racfg deploy ls.yaml --limit dgx01 --tags fabric"
    results = [fail("dgx01/network/nothing_overrides[data0]", actual="data0: no route 10.0.0.0/16 via 10.0.1.1 "
                    "metric 100", fix=deploy),
               fail("dgx01/network/route[data0:10.0.0.0/16]", "10.0.0.0/16 via 10.0.1.1 dev data0 metric 100",
                    "no route", fix=deploy),
               fail("dgx01/fabric/jumbo_frames[data0]", fix=deploy)]
    (problem,), _ = diagnose(results, CABLES)
    assert problem.id == "dataplane:dgx01:data0"
    assert set(problem.symptoms) == {"dgx01/network/route[data0:10.0.0.0/16]", "dgx01/fabric/jumbo_frames[data0]"}


def error(check: str, message: str, fix: str | None = None) -> Result:
    return Result(check.split("/")[0], check, check.split("/")[1], Status.ERROR, message=message, fix=fix)


NO_PASSWORD = "switch sw1: environment variable RACFG_SW_PASSWORD is not set"
EXPORT = "export RACFG_SW_PASSWORD=... before running"


def test_a_switch_that_cannot_be_read_is_one_unreadable_problem_not_its_ports_shut() -> None:
    """Errors are not readings: a port check that could not read the switch says nothing of the port.
    Found on ra-leafspine with no password set: 428 problems, each "leaf1 1/N shut down in the
    running config" with the password's fix; the switch's errors, whatever they were checking
    (ports, BGP, routes), are one problem, rooted where the fix is, with its own id."""
    unread = f"sw1: its facts could not be read, so this was not checked: {NO_PASSWORD} (hint: {EXPORT})"
    results = [error("sw1/switches/port_admin_up[1/1]", NO_PASSWORD, EXPORT),
               error("sw1/switches/port_oper_up[1/1]", NO_PASSWORD, EXPORT),
               error("sw1/switches/config_saved", NO_PASSWORD, EXPORT),
               error("sw1/fabric/isl_admin_up[1/31]", unread),
               error("sw1/fabric/bgp_session[172.16.0.0]", unread.replace("its facts", "its BGP summary")),
               fail("dgx01/network/carrier[data0]", "up", "no carrier"),
               error("dgx02/network/carrier[data0]", "dgx02: cannot reach root@198.18.0.12:22 over SSH",
                     "power dgx02 on or restore its management network")]
    problems, linked = diagnose(results, CABLES)
    assert [(p.id, p.cause, p.fix) for p in problems] == [
        ("carrier:sw1:1/1", "no link between sw1 1/1 and dgx01:data0 (sw1 could not be read)", "fix it"),
        ("unreadable:dgx02", "dgx02: cannot reach root@198.18.0.12:22 over SSH",
         "power dgx02 on or restore its management network"),
        ("unreadable:sw1", NO_PASSWORD, EXPORT)]
    (switch,) = [p for p in problems if p.id == "unreadable:sw1"]
    assert set(switch.checks) == {r.check for r in results if r.target == "sw1"}
    assert all(r.cause == "unreadable:sw1" for r in linked if r.target == "sw1")


def test_a_cause_does_not_claim_the_errors_of_another_machine() -> None:
    """A port shut on the switch explains the host's carrier it reads wrong, not the host it cannot reach."""
    results = [fail("sw1/switches/port_admin_up[1/17]", "up", "shutdown", DEPLOY_SW),
               fail("sw1/switches/port_oper_up[1/17]", "up", "down"),
               error("stor01/network/carrier[data0]", "stor01: cannot reach root@198.18.0.21:22 over SSH")]
    problems, _ = diagnose(results, CABLES)
    assert [(p.id, p.symptoms) for p in problems] == [
        ("port_admin:sw1:1/17", ("sw1/switches/port_oper_up[1/17]",)),
        ("unreadable:stor01", ())]


def test_two_read_failures_on_one_machine_are_two_problems_with_ids_of_their_own() -> None:
    results = [error("dgx01/gpu/driver", "nvidia-smi: command not found"),
               error("dgx01/gpu/dcgm_health", "dcgmi: command not found"),
               error("dgx01/gpu/count", "nvidia-smi: command not found")]
    problems, _ = diagnose(results, CABLES)
    assert sorted((p.id, p.cause, len(p.checks)) for p in problems) == [
        ("unreadable:dgx01/gpu/count", "nvidia-smi: command not found", 2),
        ("unreadable:dgx01/gpu/dcgm_health", "dcgmi: command not found", 1)]
