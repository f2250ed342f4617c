"""A leaf-spine fabric's faults, judged (racfg.validate.fabric_checks.judge_fabric) and diagnosed together with
the hosts' path matrix: each fault is one problem with its cause and fix, explaining what it breaks
further on (the other end, the sessions, the paths through its spine, cross-leaf pings), never a host.
leaf1's BGP and routes are the real FRR 8.4.4 recordings of those faults (tests/switches/fixtures/frr-lab);
the other switches' tables and the ports are written as the common facts every platform's parsers give."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_fabric_routing import SITE, clean, lab

from racfg.results import Result, Status
from racfg.switches.facts import BgpFacts, BgpPeer, ConfigLine, NextHop, PortFacts, Route, RouteFacts
from racfg.switches.parsers import frr
from racfg.validate.diagnosis import diagnose
from racfg.validate.fabric_checks import judge_fabric
from racfg.validate.fabric_diagnosis import IslPlan

ISLS = [IslPlan(leaf.name, u.local_port, u.peer_switch, u.peer_port, u.local_ip, u.peer_ip)
        for leaf in SITE.leaves for u in leaf.uplinks]
BGP_ON = (ConfigLine(None, "router bgp", "router bgp 65100"),)
SUBNETS = {"leaf1": "10.1.1.0/24", "leaf2": "10.1.2.0/24"}


def bgp(switch: str, down: set[str] = frozenset(), removed: set[str] = frozenset()) -> BgpFacts:
    """The switch's sessions as planned, Established but those ``down`` (Active) or ``removed``."""
    asn = next((leaf.asn for leaf in SITE.leaves if leaf.name == switch), SITE.spine_asn)
    peers = {}
    for leaf in SITE.leaves:
        for up in leaf.uplinks:
            if switch in (leaf.name, up.peer_switch):
                address, peer_asn = (up.peer_ip, up.peer_asn) if switch == leaf.name else (up.local_ip, leaf.asn)
                if address not in removed:
                    peers[address] = BgpPeer(address, peer_asn, "Active" if address in down else "Established", 1)
    return BgpFacts(asn, "10.0.0.1", peers)


def routes(leaf: str, lost: set[str] = frozenset()) -> RouteFacts:
    """The other leaf's subnet over every uplink of ``leaf`` but those to spines in ``lost``."""
    other = next(s for name, s in SUBNETS.items() if name != leaf)
    ups = next(lf for lf in SITE.leaves if lf.name == leaf).uplinks
    hops = tuple(NextHop(u.peer_ip, u.local_port) for u in ups if u.peer_switch not in lost)
    return RouteFacts({other: Route(other, "bgp", hops)} if hops else {})


def facts(fault: str) -> dict:
    have = {n: replace(f, config_lines=BGP_ON, bgp=bgp(n), routes=routes(n) if n in SUBNETS else None)
            for n, f in clean().items()}
    if fault == "isl shut on spine2":  # spine2 1/1 (to leaf1 1/32) shut: leaf1's tables as FRR printed them
        have["spine2"] = replace(have["spine2"], bgp=bgp("spine2", down={"172.16.0.3"}),
                                 interfaces={**have["spine2"].interfaces, "1/1": PortFacts(9216, False, False, 100.0)})
        have["leaf1"] = replace(have["leaf1"], bgp=frr.parse_bgp_summary(lab("bgp_summary_leaf1_isl-to-spine2-down")),
                                routes=frr.parse_routes(lab("route_leaf1_isl-to-spine2-down_one-path")),
                                interfaces={**have["leaf1"].interfaces, "1/32": PortFacts(9216, True, False, 100.0)})
        have["leaf2"] = replace(have["leaf2"], routes=routes("leaf2", lost={"spine2"}))
    elif fault == "isl mtu 1500":  # leaf2 1/32 <-> spine2 1/2 at 1500 on both ends; BGP stays up
        for name, port in (("leaf2", "1/32"), ("spine2", "1/2")):
            ports = {**have[name].interfaces, port: PortFacts(1500, True, True, 100.0)}
            have[name] = replace(have[name], interfaces=ports)
    elif fault == "neighbour removed on leaf1":  # both ends as FRR printed them
        have["leaf1"] = replace(have["leaf1"], routes=routes("leaf1", lost={"spine1"}),
                                bgp=frr.parse_bgp_summary(lab("bgp_summary_leaf1_neighbor-spine1-removed")))
        have["spine1"] = replace(have["spine1"], bgp=frr.parse_bgp_summary(
            lab("bgp_summary_spine1_neighbor-removed-on-leaf1")))
        have["leaf2"] = replace(have["leaf2"], routes=routes("leaf2", lost={"spine1"}))
    elif fault == "uplinks swapped on leaf1":  # LLDP crossed; leaf1's sessions cannot come up, it has no routes
        from test_fabric_routing import planted
        for name, f in planted("swap").items():
            have[name] = replace(have[name], lldp=f.lldp)
        have["leaf1"] = replace(have["leaf1"], bgp=bgp("leaf1", down={"172.16.0.0", "172.16.0.2"}), routes=RouteFacts())
        for spine in ("spine1", "spine2"):
            have[spine] = replace(have[spine], bgp=bgp(spine, down={"172.16.0.1", "172.16.0.3"}))
        have["leaf2"] = replace(have["leaf2"], routes=RouteFacts())
    return have


def path_failure(host: str) -> Result:
    """What the jumbo matrix files when a cross-leaf path through the faulty spine fails."""
    return Result(host, f"{host}/fabric/jumbo_frames[data0]", "fabric", Status.FAIL, "DF ping fails",
                  expected="pass", actual="MTU: 8972-byte DF ping to st2 fails", fix="check the MTU of " + host)


@pytest.mark.parametrize(("fault", "problem", "fix"), [
    ("isl shut on spine2", "isl_admin:spine2:1/1", "racfg deploy inventory/x.yaml --limit spine2 --tags switch"),
    ("isl mtu 1500", "isl_mtu:leaf2:1/32", "racfg deploy inventory/x.yaml --limit spine2,leaf2 --tags switch"),
    ("neighbour removed on leaf1", "bgp:leaf1:172.16.0.0", "racfg deploy inventory/x.yaml --limit leaf1 --tags switch"),
    ("uplinks swapped on leaf1", "isl_cabling:leaf1:1/31+1/32", "swap the cables at leaf1 1/31 and 1/32 back"),
])
def test_each_fabric_fault_is_one_problem_that_explains_the_cross_leaf_paths(fault, problem, fix):
    results = [*judge_fabric(SITE, facts(fault)), path_failure("dgx1"), path_failure("st2")]
    problems, explained = diagnose(results, [], ISLS)
    assert [(p.id, p.fix) for p in problems] == [(problem, fix)]
    failing = [r for r in explained if r.status in (Status.FAIL, Status.ERROR)]
    assert len(failing) > 2 and all(r.cause == problem for r in failing)


def test_a_clean_fabric_passes_every_check_and_a_leaf_with_an_uplink_down_is_oversubscribed():
    results = judge_fabric(SITE, facts("clean"))
    assert results and {r.status for r in results} == {Status.PASS}
    over = {r.check: r for r in judge_fabric(SITE, facts("isl shut on spine2"))}["leaf1/switches/oversubscription"]
    assert over.status is Status.FAIL and over.actual == "2.00" and "1/32 down" in over.message


def test_a_switch_without_bgp_fails_its_sessions_and_an_unreadable_table_is_an_error():
    have = facts("clean")
    have["leaf2"] = replace(have["leaf2"], config_lines=(), bgp=None, routes=None)
    have["spine1"] = replace(have["spine1"], bgp=None,
                             routing_error="'show ip bgp summary' failed: % BGP is not running")
    got = {r.check: r for r in judge_fabric(SITE, have)}
    assert got["leaf2/switches/bgp_session[172.16.0.4]"].actual == "no such neighbor"
    assert got["leaf2/switches/bgp_prefixes"].status is Status.FAIL
    unread = got["spine1/switches/bgp_session[172.16.0.1]"]
    assert unread.status is Status.ERROR and "BGP is not running" in unread.message


# --- how a validate run selects them ------------------------------------------------------------------

def _unread() -> dict:
    raise AssertionError("the switches were read although no fabric check was wanted")


def test_fabric_checks_follow_the_runs_selection_and_a_site_that_does_not_route_reads_nothing():
    from test_fabric_routing import ROOT

    from racfg.inventory.loader import load_cluster
    from racfg.validate.fabric_checks import fabric_results

    plain = load_cluster(ROOT / "inventory/lab.yaml")
    assert fabric_results(plain, _unread, list(plain.switches), [], []) == []
    routed = load_cluster(ROOT / "inventory/ra-leafspine.yaml")
    names = list(routed.switches)
    assert fabric_results(routed, _unread, names, [], ["network"]) == []
    assert fabric_results(routed, _unread, [], [], []) == []
    down = {n: ConnectionError(f"cannot reach {n}") for n in names}
    every = fabric_results(routed, lambda: down, names, [], [])
    assert every and {r.status for r in every} == {Status.ERROR} and all("cannot reach" in r.message for r in every)
    one = names[0]
    some = fabric_results(routed, lambda: down, [one], ["*/isl_mtu*"], ["switches"])
    assert some and {r.target for r in some} == {one} and all("/switches/isl_mtu[" in r.check for r in some)
