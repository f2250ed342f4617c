"""Leaf-spine checks (racfg.validate.fabric_routing) on tables: BGP and routes read by the parsers
from the recordings in tests/switches/fixtures (EOS and FRR published output; issue 38's planted
faults as real FRR 8.4.4 daemons printed them, fixtures/frr-lab; Onyx's inputs are built from its
manual's layout, not recorded: fixtures/onyx-manual/README.md), and planted ISL faults, ECMP
counters and failed uplinks written as the common facts every platform's parsers produce."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from racfg.inventory.loader import load_cluster
from racfg.results import Status
from racfg.switches.facts import BgpFacts, BgpPeer, LldpNeighbor, PfcFacts, PortFacts, RouteFacts, SwitchFacts
from racfg.switches.parsers import eos_json, frr, onyx
from racfg.switches.parsers.port_counters import PortCounters
from racfg.validate import fabric_ecmp as ecmp
from racfg.validate import fabric_routing as fr
from racfg.validate.fabric_routing import FabricIntent, LeafIntent, Uplink

FIX = Path(__file__).parents[1] / "switches" / "fixtures"
ROOT = Path(__file__).parents[2]


def read(name: str) -> str:
    return (FIX / name).read_text()


def leaf(name: str, asn: int, subnet: str, ups: list[tuple[str, str, str, str, str, int]],
         host_gbps: float = 200.0) -> LeafIntent:
    return LeafIntent(name, asn, (subnet,), tuple(Uplink(*u) for u in ups), host_gbps)


# The small form: 2 leaves, 2 spines, one link each; the addresses the Onyx manual-layout files use.
SITE = FabricIntent((
    leaf("leaf1", 65101, "10.1.1.0/24", [("1/31", "spine1", "1/1", "172.16.0.1", "172.16.0.0", 65100),
                                         ("1/32", "spine2", "1/1", "172.16.0.3", "172.16.0.2", 65100)]),
    leaf("leaf2", 65102, "10.1.2.0/24", [("1/31", "spine1", "1/2", "172.16.0.5", "172.16.0.4", 65100),
                                         ("1/32", "spine2", "1/2", "172.16.0.7", "172.16.0.6", 65100)]),
), spine_asn=65100, deploy="racfg deploy inventory/x.yaml")


DEPLOY = "racfg deploy inventory/x.yaml --limit {} --tags switch"


def by_id(results):
    return {r.check: r for r in results}


# --- BGP sessions on recorded summaries -------------------------------------------------------------

@pytest.mark.parametrize(("raw", "ups", "want"), [
    # EOS (napalm): 10.0.0.1 Established, 10.0.0.3 Active
    (eos_json.parse_bgp_summary(read("eos/show_ip_bgp_summary_vrf_all_one-peer-Active_napalm.json")),
     [("Ethernet1", "spineA", "Ethernet1", "10.0.0.0", "10.0.0.1", 65002),
      ("Ethernet2", "spineB", "Ethernet1", "10.0.0.2", "10.0.0.3", 65003)],
     {"10.0.0.1": (Status.PASS, "Established, AS 65002"), "10.0.0.3": (Status.FAIL, "Active, AS 65003")}),
    # FRR (doc): the IPv6 peer is up but every prefix held back for want of a policy
    (frr.parse_bgp_summary(read("frr/show_bgp_summary_ebgp-requires-policy_Policy-columns_RST-INDENTED_frr-doc.txt")),
     [("swp1", "spineA", "swp1", "192.168.0.1", "192.168.0.2", 65002),
      ("swp2", "spineB", "swp1", "fe80:1::1", "fe80:1::2222", 65002)],
     {"192.168.0.2": (Status.PASS, "Established, AS 65002"),
      "fe80:1::2222": (Status.FAIL, "Established (Policy), AS 65002")}),
    # FRR (doc): planned eBGP to 65002 but the peer is in 65001 (iBGP): wrong ASN
    (frr.parse_bgp_summary(read("frr/show_bgp_summary_desc-software-version_3-ibgp-peers_RST-INDENTED_frr-doc.txt")),
     [("swp1", "spineA", "swp1", "10.0.0.7", "10.0.0.4", 65001),
      ("swp2", "spineB", "swp1", "10.0.0.8", "10.0.0.5", 65002)],
     {"10.0.0.4": (Status.PASS, "Established, AS 65001"), "10.0.0.5": (Status.FAIL, "Established, AS 65001")}),
    # Onyx (manual layout, not recorded): the second spine's session is Active
    (onyx.parse_bgp_summary(read("onyx-manual/show_ip_bgp_summary.txt")),
     [("1/31", "spine1", "1/1", "172.16.0.1", "172.16.0.0", 65100),
      ("1/32", "spine2", "1/1", "172.16.0.3", "172.16.0.2", 65100)],
     {"172.16.0.0": (Status.PASS, "Established, AS 65100"), "172.16.0.2": (Status.FAIL, "Active, AS 65100")}),
])
def test_bgp_sessions_on_recordings(raw, ups, want):
    intent = FabricIntent((leaf("leaf1", raw.local_asn, "10.9.0.0/24", ups),), spine_asn=0)
    results = by_id(r for r in fr.check_bgp_sessions(intent, {"leaf1": raw}) if r.target == "leaf1")
    assert results.pop("leaf1/switches/bgp_local_asn").status is Status.PASS
    got = {c.split("[")[1].rstrip("]"): (r.status, r.actual) for c, r in results.items()}
    assert got == want
    for r in results.values():
        assert (r.fix is None) == (r.status is Status.PASS)


def test_bgp_neighbour_removed_on_one_leaf_is_named_from_both_ends():
    established = {name: BgpFacts(asn, name, {p: BgpPeer(p, pasn, "Established", 1) for p, pasn, _ in peers})
                   for name, asn, peers in [("leaf1", 65101, fr._sessions(SITE)["leaf1"]),
                                            ("leaf2", 65102, fr._sessions(SITE)["leaf2"]),
                                            ("spine1", 65100, fr._sessions(SITE)["spine1"]),
                                            ("spine2", 65100, fr._sessions(SITE)["spine2"])]}
    assert {r.status for r in fr.check_bgp_sessions(SITE, established)} == {Status.PASS}
    broken = dict(established)
    broken["leaf1"] = replace(established["leaf1"], peers={"172.16.0.2": established["leaf1"].peers["172.16.0.2"]})
    broken["spine1"] = replace(established["spine1"], peers={
        **established["spine1"].peers, "172.16.0.1": BgpPeer("172.16.0.1", 65101, "Active")})
    failed = {r.check: r for r in fr.check_bgp_sessions(SITE, broken) if r.status is Status.FAIL}
    assert set(failed) == {"leaf1/switches/bgp_session[172.16.0.0]", "spine1/switches/bgp_session[172.16.0.1]"}
    assert failed["leaf1/switches/bgp_session[172.16.0.0]"].actual == "no such neighbor"
    assert failed["leaf1/switches/bgp_session[172.16.0.0]"].fix == DEPLOY.format("leaf1")
    broken["leaf2"] = replace(established["leaf2"], local_asn=65109)
    local = by_id(fr.check_bgp_sessions(SITE, broken))["leaf2/switches/bgp_local_asn"]
    assert (local.status, local.expected, local.actual) == (Status.FAIL, "65102", "65109")
    del broken["spine2"]
    assert {r.status for r in fr.check_bgp_sessions(SITE, broken) if r.target == "spine2"} == {Status.ERROR}


# --- prefixes and ECMP on recorded route tables -----------------------------------------------------

def test_routes_onyx_manual_table_both_spines():
    """leaf1 (Onyx layout) reaches leaf2's 10.1.2.0/24 through both spines."""
    results = by_id(fr.check_routes(SITE, {"leaf1": onyx.parse_routes(read("onyx-manual/show_ip_route.txt"))}))
    assert results["leaf1/switches/bgp_prefixes"].status is Status.PASS
    ecmp = results["leaf1/switches/route_ecmp[10.1.2.0/24]"]
    assert (ecmp.status, ecmp.expected, ecmp.actual) == (Status.PASS, "2 paths via spine1, spine2", "2 paths")
    assert results["leaf2/switches/bgp_prefixes"].status is Status.ERROR  # leaf2's table not read: not a pass


EOS_ROUTE = "eos/show_ip_route_vrf_default_1.0.4.0-24_bgp_detail_napalm-iss1347.json"


@pytest.mark.parametrize(("spines", "status", "actual"), [
    (4, Status.PASS, "4 paths"),
    (5, Status.FAIL, "4 paths, none via spine5 (169.254.232.164)"),
])
def test_routes_eos_four_way_ecmp(spines, status, actual):
    hops = [148, 152, 156, 160, 164][:spines]
    ups = [(f"Ethernet{k}/1", f"spine{k}", "Ethernet1", f"169.254.232.{a + 1}", f"169.254.232.{a}", 65100)
           for k, a in enumerate(hops, 1)]
    intent = FabricIntent((leaf("leaf1", 65001, "10.9.0.0/24", ups), leaf("leaf2", 65002, "1.0.4.0/24", [])), 65100)
    result = by_id(fr.check_routes(intent, {"leaf1": eos_json.parse_routes(read(EOS_ROUTE))}))
    ecmp = result["leaf1/switches/route_ecmp[1.0.4.0/24]"]
    assert (ecmp.status, ecmp.actual) == (status, actual)
    assert ecmp.fix is None if status is Status.PASS else "spine5" in ecmp.fix


def test_routes_only_bgp_counts():
    """FRR's 16-way route is sharpd's, not BGP's: the leaf did not receive the subnet from BGP."""
    table = frr.parse_routes(read("frr/show_ip_route_prefix_16-way-ECMP_INDENTED_frr-doc.txt"))
    intent = FabricIntent((leaf("leaf1", 65001, "10.9.0.0/24", []), leaf("leaf2", 65002, "4.4.4.4/32", [])), 65100)
    result = by_id(fr.check_routes(intent, {"leaf1": table}))["leaf1/switches/bgp_prefixes"]
    assert (result.status, result.actual) == (Status.FAIL, "missing 4.4.4.4/32")


def test_a_summary_route_covers_a_subnet():
    raw = "B>* 10.1.0.0/16 [20/0] via 172.16.0.0, swp1, weight 1, 00:01:02\n"
    assert fr._best_route(frr.parse_routes(raw), "10.1.2.0/24").prefix == "10.1.0.0/16"
    assert fr._best_route(RouteFacts(), "10.1.2.0/24") is None


# --- the planted faults of issue 38 as real FRR daemons printed them (fixtures/frr-lab) ----------------

def lab(name: str) -> str:
    return read(f"frr-lab/show_ip_{name}_frr-8.4.4-lab.txt")


@pytest.mark.parametrize(("fault", "bgp", "routes", "failed"), [
    ("clean", {"leaf1": "bgp_summary_leaf1_2-spines-established", "spine1": "bgp_summary_spine1_2-leaves-established"},
     "route_leaf1_bgp-ecmp-2-spines", {}),
    ("isl down", {"leaf1": "bgp_summary_leaf1_isl-to-spine2-down"}, "route_leaf1_isl-to-spine2-down_one-path",
     {"leaf1/switches/bgp_session[172.16.0.2]": "Active, AS 65100",
      "leaf1/switches/route_ecmp[10.1.2.0/24]": "1 paths, none via spine2 (172.16.0.2)"}),
    ("neighbour removed", {"leaf1": "bgp_summary_leaf1_neighbor-spine1-removed",
                           "spine1": "bgp_summary_spine1_neighbor-removed-on-leaf1"}, None,
     {"leaf1/switches/bgp_session[172.16.0.0]": "no such neighbor",
      "spine1/switches/bgp_session[172.16.0.1]": "Active, AS 65101"}),
])
def test_planted_faults_on_real_frr_output(fault, bgp, routes, failed):
    """leaf1 and spine1 as the lab's FRR printed them; the other switches were not read (errors)."""
    facts = {switch: frr.parse_bgp_summary(lab(name)) for switch, name in bgp.items()}
    results = fr.check_bgp_sessions(SITE, facts)
    if routes:
        results += fr.check_routes(SITE, {"leaf1": frr.parse_routes(lab(routes))})
    read_ = {r.check: r for r in results if r.target in bgp}
    assert {c: r.actual for c, r in read_.items() if r.status is Status.FAIL} == failed
    assert {r.status for r in read_.values()} <= {Status.PASS, Status.FAIL}


def test_no_neighbour_left_is_named_per_session():
    facts = {"leaf2": frr.parse_bgp_summary(lab("bgp_summary_leaf2_no-neighbors"))}
    results = by_id(r for r in fr.check_bgp_sessions(SITE, facts) if r.target == "leaf2")
    assert results.pop("leaf2/switches/bgp_local_asn").status is Status.SKIP
    assert {c: r.actual for c, r in results.items()} == {"leaf2/switches/bgp_session[172.16.0.4]": "no such neighbor",
                                                          "leaf2/switches/bgp_session[172.16.0.6]": "no such neighbor"}


# --- ISLs: planted faults on the common facts -------------------------------------------------------

def switch(name: str, ports: dict[str, tuple[str, str]], **overrides: PortFacts) -> SwitchFacts:
    interfaces = {p: overrides.get(p.replace("/", "_"), PortFacts(9216, True, True, 100.0)) for p in ports}
    return SwitchFacts(name, "onyx", "3.9", interfaces, PfcFacts(False),
                       {p: LldpNeighbor(sys, f"Eth{port}") for p, (sys, port) in ports.items()})


def clean() -> dict[str, SwitchFacts]:
    return {
        "leaf1": switch("leaf1", {"1/31": ("spine1", "1/1"), "1/32": ("spine2", "1/1")}),
        "leaf2": switch("leaf2", {"1/31": ("spine1", "1/2"), "1/32": ("spine2", "1/2")}),
        "spine1": switch("spine1", {"1/1": ("leaf1", "1/31"), "1/2": ("leaf2", "1/31")}),
        "spine2": switch("spine2", {"1/1": ("leaf1", "1/32"), "1/2": ("leaf2", "1/32")}),
    }


def planted(fault: str) -> dict[str, SwitchFacts]:
    facts = clean()
    if fault == "shut":  # ISL shut on spine1: its port admin down, the leaf's end oper down
        facts["spine1"] = switch("spine1", {"1/1": ("leaf1", "1/31"), "1/2": ("leaf2", "1/31")},
                                 **{"1_1": PortFacts(9216, False, False, 100.0)})
        facts["leaf1"] = switch("leaf1", {"1/31": ("spine1", "1/1"), "1/32": ("spine2", "1/1")},
                                **{"1_31": PortFacts(9216, True, False, 100.0)})
    elif fault == "mtu":  # one ISL at 1500 on both ends
        facts["leaf2"] = switch("leaf2", {"1/31": ("spine1", "1/2"), "1/32": ("spine2", "1/2")},
                                **{"1_32": PortFacts(1500, True, True, 100.0)})
        facts["spine2"] = switch("spine2", {"1/1": ("leaf1", "1/32"), "1/2": ("leaf2", "1/32")},
                                 **{"1_2": PortFacts(1500, True, True, 100.0)})
    elif fault == "swap":  # leaf1's two uplinks swapped at the leaf
        facts["leaf1"] = switch("leaf1", {"1/31": ("spine2", "1/1"), "1/32": ("spine1", "1/1")})
        facts["spine1"] = switch("spine1", {"1/1": ("leaf1", "1/32"), "1/2": ("leaf2", "1/31")})
        facts["spine2"] = switch("spine2", {"1/1": ("leaf1", "1/31"), "1/2": ("leaf2", "1/32")})
    elif fault == "recabled":  # leaf2's second uplink lands on spine2 1/9, not 1/2
        facts["leaf2"] = switch("leaf2", {"1/31": ("spine1", "1/2"), "1/32": ("spine2", "1/9")})
        spine2 = switch("spine2", {"1/1": ("leaf1", "1/32"), "1/2": ("leaf2", "1/32")},
                        **{"1_2": PortFacts(9216, True, False, 100.0)})
        facts["spine2"] = replace(spine2, lldp={"1/1": spine2.lldp["1/1"]})
    elif fault == "unread":
        del facts["spine2"]
    return facts


@pytest.mark.parametrize(("fault", "failed"), [
    ("clean", {}),
    ("shut", {"spine1/switches/isl_admin_up[1/1]": "racfg deploy inventory/x.yaml --limit spine1 --tags switch",
              "spine1/switches/isl_oper_up[1/1]": "racfg deploy inventory/x.yaml --limit spine1 --tags switch",
              "leaf1/switches/isl_oper_up[1/31]": "check the cable leaf1 1/31 <-> spine1 1/1"}),
    ("mtu", {"leaf2/switches/isl_mtu[1/32]": "racfg deploy inventory/x.yaml --limit leaf2 --tags switch",
             "spine2/switches/isl_mtu[1/2]": "racfg deploy inventory/x.yaml --limit spine2 --tags switch"}),
    ("swap", {"leaf1/switches/isl_lldp[1/31]": "swap the cables at leaf1 1/31 and 1/32 back",
              "leaf1/switches/isl_lldp[1/32]": "swap the cables at leaf1 1/31 and 1/32 back",
              "spine1/switches/isl_lldp[1/1]": "swap the cables at leaf1 1/31 and 1/32 back",
              "spine2/switches/isl_lldp[1/1]": "swap the cables at leaf1 1/31 and 1/32 back"}),
    ("recabled", {"leaf2/switches/isl_lldp[1/32]": "recable leaf2 1/32 to spine2 1/2",
                  "spine2/switches/isl_lldp[1/2]": "check the cable spine2 1/2 <-> leaf2 1/32",
                  "spine2/switches/isl_oper_up[1/2]": "check the cable spine2 1/2 <-> leaf2 1/32"}),
])
def test_isl_faults_named_exactly(fault, failed):
    results = fr.check_isls(SITE, planted(fault))
    assert len(results) == 8 * 5  # 4 ISLs, both ends, 5 checks each
    assert {r.check: r.fix for r in results if r.status is not Status.PASS} == failed
    if fault == "swap":
        swapped = by_id(results)["leaf1/switches/isl_lldp[1/31]"]
        assert swapped.message.startswith("uplinks swapped at leaf1 1/31 and 1/32: ")
        assert (swapped.expected, swapped.actual) == ("spine1 1/1", "spine2 Eth1/1")


def test_a_swap_between_two_links_to_one_spine_is_named_at_the_leaf():
    """Two links leaf1 -> spine1, crossed: the spine's ends name leaf1's ports too (one pair, one fix)."""
    intent = FabricIntent((leaf("leaf1", 65101, "10.1.1.0/24", [
        ("1/31", "spine1", "1/1", "172.16.0.1", "172.16.0.0", 65100),
        ("1/32", "spine1", "1/2", "172.16.0.3", "172.16.0.2", 65100)]),), 65100)
    facts = {"leaf1": switch("leaf1", {"1/31": ("spine1", "1/2"), "1/32": ("spine1", "1/1")}),
             "spine1": switch("spine1", {"1/1": ("leaf1", "1/32"), "1/2": ("leaf1", "1/31")})}
    fixes = {r.check: r.fix for r in fr.check_isls(intent, facts) if r.status is not Status.PASS}
    assert fixes == {f"{end}/switches/isl_lldp[{port}]": "swap the cables at leaf1 1/31 and 1/32 back"
                     for end, port in [("leaf1", "1/31"), ("leaf1", "1/32"), ("spine1", "1/1"), ("spine1", "1/2")]}


def test_isl_unread_switch_is_an_error_and_unknown_speed_a_skip():
    results = fr.check_isls(SITE, planted("unread"))
    assert {r.status for r in results if r.target == "spine2"} == {Status.ERROR}
    facts = clean()
    facts["leaf1"] = switch("leaf1", {"1/31": ("spine1", "1/1"), "1/32": ("spine2", "1/1")},
                            **{"1_31": PortFacts(9216, True, True, None)})
    speed = by_id(fr.check_isls(SITE, facts))["leaf1/switches/isl_speed[1/31]"]
    assert speed.status is Status.SKIP and "no speed" in speed.message


# --- ECMP balance and the spine tier -----------------------------------------------------------------

GB = 2**30


def counters(shares: dict[str, float], total: int = 10 * GB) -> tuple[dict, dict]:
    """Before/after counters of every leaf uplink, the bytes split between the spines by ``shares``."""
    before: dict[str, dict[str, PortCounters]] = {}
    after: dict[str, dict[str, PortCounters]] = {}
    for lf in SITE.leaves:
        for up in lf.uplinks:
            moved = int(total * shares[up.peer_switch] / len(SITE.leaves))
            before.setdefault(lf.name, {})[up.local_port] = PortCounters(rx_bytes=5, tx_bytes=7)
            after.setdefault(lf.name, {})[up.local_port] = PortCounters(rx_bytes=5 + moved // 2,
                                                                        tx_bytes=7 + moved - moved // 2)
    return before, after


@pytest.mark.parametrize(("shares", "statuses"), [
    ({"spine1": 0.5, "spine2": 0.5}, {"spine1": Status.PASS, "spine2": Status.PASS}),
    ({"spine1": 0.7, "spine2": 0.3}, {"spine1": Status.PASS, "spine2": Status.PASS}),
    ({"spine1": 0.75, "spine2": 0.25}, {"spine1": Status.PASS, "spine2": Status.PASS}),  # the edge: still fair
    ({"spine1": 0.8, "spine2": 0.2}, {"spine1": Status.FAIL, "spine2": Status.FAIL}),
    ({"spine1": 1.0, "spine2": 0.0}, {"spine1": Status.FAIL, "spine2": Status.FAIL}),
])
def test_ecmp_balance(shares, statuses):
    results = ecmp.check_ecmp_balance(SITE, *counters(shares))
    assert {r.target: r.status for r in results} == statuses
    assert by_id(results)["fabric/switches/ecmp_share[spine1]"].actual == f"{shares['spine1']:.2f}"
    if statuses["spine1"] is Status.FAIL:
        assert "much more than its share" in by_id(results)["fabric/switches/ecmp_share[spine1]"].message
        assert by_id(results)["fabric/switches/ecmp_share[spine2]"].expected == "0.50 (within 0.25..0.75)"


def test_ecmp_balance_needs_traffic_and_counters():
    few = ecmp.check_ecmp_balance(SITE, *counters({"spine1": 1.0, "spine2": 0.0}, total=1000))
    assert {r.status for r in few} == {Status.SKIP} and "under the" in few[0].message
    before, after = counters({"spine1": 0.5, "spine2": 0.5})
    del after["leaf2"]["1/32"]
    assert {r.message for r in ecmp.check_ecmp_balance(SITE, before, after)} == {"no counters for leaf2 1/32"}


@pytest.mark.parametrize(("host_gbps", "down", "rates", "status", "ratio"), [
    (200.0, None, None, Status.PASS, "1.00"),
    (200.0, "1/31", None, Status.FAIL, "2.00"),  # a failed uplink halves the capacity
    (100.0, "1/31", None, Status.PASS, "1.00"),
    (200.0, None, {("leaf1", "1/32"): 50.0}, Status.FAIL, "1.33"),  # an uplink shaped down
    (200.0, "both", None, Status.FAIL, "inf"),
])
def test_oversubscription(host_gbps, down, rates, status, ratio):
    intent = replace(SITE, leaves=(replace(SITE.leaves[0], host_gbps=host_gbps), SITE.leaves[1]))
    facts = clean()
    ports = {"1/31": ("spine1", "1/1"), "1/32": ("spine2", "1/1")}
    if down == "both":
        facts["leaf1"] = switch("leaf1", ports, **{p: PortFacts(9216, True, False, 100.0) for p in ("1_31", "1_32")})
    elif down:
        facts["leaf1"] = switch("leaf1", ports, **{down.replace("/", "_"): PortFacts(9216, True, False, 100.0)})
    result = by_id(fr.check_oversubscription(intent, facts, rates))["leaf1/switches/oversubscription"]
    assert (result.status, result.actual) == (status, ratio)
    if down == "1/31" and status is Status.FAIL:
        assert "with 1/31 down" in result.message and result.fix == "bring leaf1 1/31 back up"


# --- the adapter from what render writes ------------------------------------------------------------

@pytest.mark.parametrize("example", ["inventory/ra-leafspine.yaml", "inventory/ra-leafspine-eos.yaml"])
def test_intent_from_the_examples(example):
    cluster = load_cluster(ROOT / example)
    intent = fr.intent_from_cluster(cluster, f"racfg deploy {example}")
    topo = cluster.topology
    assert [lf.name for lf in intent.leaves] == sorted(topo.of_role("leaf"))
    assert intent.spines == sorted(topo.of_role("spine")) and intent.spine_asn == cluster.fabric.spine_asn
    for lf in intent.leaves:
        assert len(lf.uplinks) == len(topo.links_of(lf.name)) and lf.host_gbps > 0
        assert {u.peer_ip for u in lf.uplinks}.isdisjoint({u.local_ip for u in lf.uplinks})
    assert len({s for lf in intent.leaves for s in lf.subnets}) == sum(len(lf.subnets) for lf in intent.leaves)


# Two links per leaf-spine pair: each leaf has 4 uplinks, 1/29-1/30 to spine1 and 1/31-1/32 to spine2.
BUNDLED = FabricIntent(tuple(
    leaf(f"leaf{n}", 65100 + n, f"10.1.{n}.0/24",
         [(f"1/{29 + k}", f"spine{k // 2 + 1}", f"1/{2 * n - 1 + k % 2}", f"172.16.{n}.{2 * k + 1}",
           f"172.16.{n}.{2 * k}", 65100) for k in range(4)]) for n in (1, 2)),
    spine_asn=65100)


def spread(shares: dict[str, tuple[float, float]], total: int = 4 * GB) -> tuple[dict, dict]:
    """Before/after counters of every BUNDLED uplink: each leaf's ``total`` bytes per direction split by
    ``shares`` (port -> (in, out) weight; a port not named weighs 1 both ways)."""
    before: dict[str, dict[str, PortCounters]] = {}
    after: dict[str, dict[str, PortCounters]] = {}
    for lf in BUNDLED.leaves:
        weights = {up.local_port: shares.get(up.local_port, (1.0, 1.0)) for up in lf.uplinks}
        rx_sum, tx_sum = (sum(w[i] for w in weights.values()) for i in (0, 1))
        for port, (w_in, w_out) in weights.items():
            before.setdefault(lf.name, {})[port] = PortCounters(rx_bytes=11, tx_bytes=13)
            after.setdefault(lf.name, {})[port] = PortCounters(rx_bytes=11 + int(total * w_in / rx_sum),
                                                               tx_bytes=13 + int(total * w_out / tx_sum))
    return before, after


@pytest.mark.parametrize(("shares", "idle_in", "idle_out", "fix"), [
    ({}, [], [], None),
    ({"1/29": (0.05, 0.05), "1/32": (1.6, 1.6)}, [], [], None),  # hashing's honest unevenness: 5% of fair
    # the spines hash as the leaves did: each uses one of its two links to the leaf (ECMP polarization)
    ({"1/29": (0.0002, 1.0), "1/32": (0.0002, 1.0)}, ["1/29", "1/32"], [], "own ECMP hash seed"),
    ({"1/30": (1.0, 0.0)}, [], ["1/30"], "maximum-paths"),  # the leaf's own route leaves 1/30 out
    ({"1/31": (0.0, 0.0)}, ["1/31"], ["1/31"], "ISL or BGP session is down"),  # no path in either direction
])
def test_uplink_spread(shares, idle_in, idle_out, fix):
    results = by_id(ecmp.check_uplink_spread(BUNDLED, *spread(shares)))
    assert set(results) == {"leaf1/switches/ecmp_links", "leaf2/switches/ecmp_links"}
    r = results["leaf1/switches/ecmp_links"]
    assert r.data["idle"] == {"in": idle_in, "out": idle_out}
    assert (r.status, r.fix is None) == ((Status.PASS, True) if fix is None else (Status.FAIL, False))
    if fix:
        idle = sorted(set(idle_in) | set(idle_out))
        assert fix in r.fix and r.actual == f"{len(idle)} of 4 idle: {', '.join(idle)}", r.message
        assert r.message.startswith(f"leaf1: {len(idle)} of its 4 uplinks moved under 1%")


def test_uplink_spread_needs_traffic_and_every_counter():
    few = ecmp.check_uplink_spread(BUNDLED, *spread({"1/29": (0.0, 0.0)}, total=1000))
    assert {r.status for r in few} == {Status.SKIP}
    before, after = spread({})
    del after["leaf2"]["1/32"]
    results = by_id(ecmp.check_uplink_spread(BUNDLED, before, after))
    assert results["leaf2/switches/ecmp_links"].status is Status.SKIP
    assert results["leaf1/switches/ecmp_links"].status is Status.PASS
    # one uplink per spine: a leaf still spreads over both
    even = ecmp.check_uplink_spread(SITE, *counters({"spine1": 0.5, "spine2": 0.5}))
    assert {r.status for r in even} == {Status.PASS}
    lost = ecmp.check_uplink_spread(SITE, *counters({"spine1": 1.0, "spine2": 0.0}))
    assert {r.actual for r in lost} == {"1 of 2 idle: 1/32"} and "ISL or BGP session is down" in lost[0].fix
