"""Environment drift of a routed fabric on recorded output: real FRR 8.4.4 (the small leaf-spine
form, tests/switches/fixtures/frr-lab), EOS (fixtures/eos, copies of device-outputs/eos) and the Onyx
layout (onyx-manual), parsed by the product's parsers. Each planted fault reads as the sentences a
person needs, on exactly the switches it touches, each with its cause and the repair of that cause."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
from pathlib import Path

import pytest

from racfg.drift.environment import switch_changes
from racfg.drift.fabric_environment import FabricView, fabric_changes
from racfg.intent import IslEnd
from racfg.switches.facts import BgpFacts, BgpPeer, NextHop, Route, RouteFacts
from racfg.switches.parsers import eos_json, frr, onyx

FIXTURES = Path(__file__).parents[1] / "switches" / "fixtures"
DEPLOY = "racfg deploy site.yaml"


def _frr(name: str) -> str:
    return (FIXTURES / "frr-lab" / f"{name}_frr-8.4.4-lab.txt").read_text()


def bgp(name: str) -> BgpFacts:
    return frr.parse_bgp_summary(_frr(f"show_ip_bgp_summary_{name}"))


def routes(name: str) -> RouteFacts:
    return frr.parse_routes(_frr(f"show_ip_route_{name}"))


def port(up: bool = True, oper: bool | None = None, mtu: int = 9216) -> dict:
    return {"mtu": mtu, "admin_up": up, "oper_up": up if oper is None else oper, "speed_gbps": 100.0,
            "description": ""}


def doc(ports: dict[str, dict], bgp_facts: BgpFacts | None = None, route_facts: RouteFacts | None = None) -> dict:
    """A switch's facts document as the baseline keeps it (SwitchFacts.to_dict), the parts drift's fabric reads."""
    return {"interfaces": ports, "bgp": bgp_facts.to_dict() if bgp_facts else None,
            "routes": route_facts.to_dict() if route_facts else None}


def isl(port: str, peer: str, peer_port: str, peer_address: str) -> IslEnd:
    """An ISL end of the plan: this end holds the other address of the peer's /31."""
    here = ipaddress.ip_address(peer_address) + (1 if int(ipaddress.ip_address(peer_address)) % 2 == 0 else -1)
    return IslEnd(port, f"{here}/31", peer, peer_port, peer_address, 65100 if peer.startswith("spine") else 65101,
                  9216, 100.0)


# The recordings' plan (frr-lab/README.md): leaf1 swp31 - spine1 swp1, leaf1 swp32 - spine2 swp1, leaf2 on swp2.
LAB = FabricView({
    "leaf1": (isl("swp31", "spine1", "swp1", "172.16.0.0"), isl("swp32", "spine2", "swp1", "172.16.0.2")),
    "leaf2": (isl("swp31", "spine1", "swp2", "172.16.0.4"), isl("swp32", "spine2", "swp2", "172.16.0.6")),
    "spine1": (isl("swp1", "leaf1", "swp31", "172.16.0.1"), isl("swp2", "leaf2", "swp31", "172.16.0.5")),
    "spine2": (isl("swp1", "leaf1", "swp32", "172.16.0.3"), isl("swp2", "leaf2", "swp32", "172.16.0.7")),
}, DEPLOY)
UP = {"swp31": port(), "swp32": port()}
SPINE_UP = {"swp1": port(), "swp2": port()}
LEAF1 = doc(UP, bgp("leaf1_2-spines-established"), routes("leaf1_bgp-ecmp-2-spines"))
SPINE1 = doc(SPINE_UP, bgp("spine1_2-leaves-established"))
LEAF1_ONE_PATH = routes("leaf1_isl-to-spine2-down_one-path")
LEAF1_ISL_DOWN = bgp("leaf1_isl-to-spine2-down")


def _fix(switch: str) -> str:
    return f"{DEPLOY} --limit {switch} --tags switch"


LOST_PATH = "leaf1: route 10.1.2.0/24 bgp, 2 paths -> bgp, 1 path (lost via 172.16.0.2 from spine2; {})"
LOST_LINK = "leaf1: route 172.16.0.2/31 connected, 1 path -> (removed) ({})"
LEAF_SHUT, SPINE_SHUT = "ISL swp32 shut here", "ISL swp32 down: its other end spine2 swp1 is shut"


def table(**prefixes: tuple[str, ...]) -> RouteFacts:
    """A route table of BGP routes: prefix (``n10_1_1_0__24`` for 10.1.1.0/24) -> gateways."""
    def prefix(name: str) -> str:
        return name[1:].replace("__", "/").replace("_", ".")

    return RouteFacts({prefix(p): Route(prefix(p), "bgp", tuple(NextHop(g) for g in gws))
                       for p, gws in prefixes.items()})


LEAF2_BGP = BgpFacts(65102, "10.0.0.12", {a: BgpPeer(a, 65100, "Established") for a in ("172.16.0.4", "172.16.0.6")})

CASES = [
    pytest.param(
        {"leaf1": LEAF1, "spine2": doc(SPINE_UP)},
        {"leaf1": doc({**UP, "swp32": port(False)}, LEAF1_ISL_DOWN, LEAF1_ONE_PATH), "spine2": doc(SPINE_UP)},
        {("leaf1: ISL swp32 (to spine2 swp1) admin up -> down", _fix("leaf1")),
         ("leaf1: ISL swp32 (to spine2 swp1) oper up -> down", _fix("leaf1")),
         ("leaf1: BGP session 172.16.0.2 (spine2, AS 65100) Established -> Active (ISL swp32 shut here)",
          _fix("leaf1")),
         (LOST_PATH.format(LEAF_SHUT), _fix("leaf1")), (LOST_LINK.format(LEAF_SHUT), _fix("leaf1"))},
        id="ISL shut on the leaf (ip link set swp32 down, recorded)"),
    pytest.param(
        {"leaf1": LEAF1, "spine2": doc(SPINE_UP)},
        {"leaf1": doc({**UP, "swp32": port(True, oper=False)}, LEAF1_ISL_DOWN, LEAF1_ONE_PATH),
         "spine2": doc({**SPINE_UP, "swp1": port(False)})},
        {("spine2: ISL swp1 (to leaf1 swp32) admin up -> down", _fix("spine2")),
         ("spine2: ISL swp1 (to leaf1 swp32) oper up -> down", _fix("spine2")),
         ("leaf1: ISL swp32 (to spine2 swp1) oper up -> down", _fix("spine2")),
         ("leaf1: BGP session 172.16.0.2 (spine2, AS 65100) Established -> Active "
          "(ISL swp32 down: its other end spine2 swp1 is shut)", _fix("spine2")),
         (LOST_PATH.format(SPINE_SHUT), _fix("spine2")), (LOST_LINK.format(SPINE_SHUT), _fix("spine2"))},
        id="ISL shut on the spine: the leaf's changes name the spine's port and repair"),
    pytest.param(
        {"leaf1": doc(UP, bgp("leaf1_2-spines-established")), "spine1": SPINE1},
        {"leaf1": doc(UP, bgp("leaf1_neighbor-spine1-removed")),
         "spine1": doc(SPINE_UP, bgp("spine1_neighbor-removed-on-leaf1"))},
        {("leaf1: BGP session 172.16.0.0 (spine1, AS 65100) Established -> (removed) "
          "(neighbour 172.16.0.0 no longer configured here)", _fix("leaf1")),
         ("spine1: BGP session 172.16.0.1 (leaf1, AS 65101) Established -> Active "
          "(leaf1 has no neighbour 172.16.0.0 any more)", _fix("leaf1"))},
        id="BGP neighbour removed on the leaf (no neighbor, recorded at both ends)"),
    pytest.param(
        {"leaf1": LEAF1}, {"leaf1": doc({**UP, "swp31": port(mtu=1500)}, bgp("leaf1_2-spines-established"),
                                        routes("leaf1_bgp-ecmp-2-spines"))},
        {("leaf1: ISL swp31 (to spine1 swp1) MTU 9216 -> 1500", _fix("leaf1"))},
        id="ISL MTU"),
    pytest.param(
        {"leaf2": doc(UP, LEAF2_BGP, table(n10_1_1_0__24=("172.16.0.4", "172.16.0.6"))),
         "spine1": doc(SPINE_UP, bgp("spine1_2-leaves-established"),
                       table(n10_1_1_0__24=("172.16.0.1",), n10_1_2_0__24=("172.16.0.5",)))},
        {"leaf2": doc(UP, LEAF2_BGP, table(n10_1_1_0__24=("172.16.0.6",))),
         "spine1": doc({**SPINE_UP, "swp1": port(False)}, bgp("spine1_neighbor-removed-on-leaf1"),
                       table(n10_1_2_0__24=("172.16.0.5",)))},
        {("spine1: ISL swp1 (to leaf1 swp31) admin up -> down", _fix("spine1")),
         ("spine1: ISL swp1 (to leaf1 swp31) oper up -> down", _fix("spine1")),
         ("spine1: BGP session 172.16.0.1 (leaf1, AS 65101) Established -> Active (ISL swp1 shut here)",
          _fix("spine1")),
         ("spine1: route 10.1.1.0/24 bgp, 1 path -> (removed) (lost via 172.16.0.1 from leaf1; ISL swp1 shut here)",
          _fix("spine1")),
         ("leaf2: route 10.1.1.0/24 bgp, 2 paths -> bgp, 1 path (lost via 172.16.0.4 from spine1; "
          "spine1 lost it: ISL swp1 shut here)", _fix("spine1"))},
        id="a path lost behind an up session: the spine lost the route, the other leaf's ISL is shut there"),
    pytest.param({"leaf1": LEAF1, "spine1": SPINE1}, {"leaf1": LEAF1, "spine1": SPINE1}, set(), id="clean"),
    pytest.param({"leaf1": doc(UP)}, {"leaf1": LEAF1}, set(),
                 id="a baseline from before BGP and routes were read: nothing to compare them with"),
]


@pytest.mark.parametrize(("before", "now", "expected"), CASES)
def test_fabric_faults_read_as_sentences_with_their_cause_and_repair(before, now, expected):
    got = {(c.sentence(), c.repair) for c in fabric_changes(LAB, before, now)}
    assert got == expected


def test_the_limit_keeps_the_switches_it_selects():
    before = {"leaf1": LEAF1, "spine2": doc(SPINE_UP)}
    now = {"leaf1": doc(UP, LEAF1_ISL_DOWN, LEAF1_ONE_PATH), "spine2": doc({**SPINE_UP, "swp1": port(False)})}
    assert {c.target for c in fabric_changes(LAB, before, now, ["spine2"])} == {"spine2"}


def test_peer_asn_and_router_id_changes():
    changed = dataclasses.replace(bgp("spine1_2-leaves-established"), router_id="10.0.0.9")
    changed.peers["172.16.0.5"] = dataclasses.replace(changed.peers["172.16.0.5"], remote_asn=65199)
    got = [c.sentence() for c in fabric_changes(LAB, {"spine1": SPINE1}, {"spine1": doc(SPINE_UP, changed)})]
    assert got == ["spine1: BGP router id 10.0.0.1 -> 10.0.0.9",
                   "spine1: BGP session 172.16.0.5 peer AS 65102 -> 65199"]


def test_eos_recording_a_session_down_and_paths_lost():
    """EOS JSON (napalm recordings): a peer Active where it was Established, two of four ECMP paths gone.
    No ISL plan for this switch: the cause is left to validate."""
    recorded = FIXTURES / "eos"
    down = eos_json.parse_bgp_summary(json.loads((recorded / "show_ip_bgp_summary_vrf_all_one-peer-Active_napalm.json")
                                            .read_text()))
    table = eos_json.parse_routes(json.loads((recorded / "show_ip_route_vrf_default_1.0.4.0-24_bgp_detail_"
                                                    "napalm-iss1347.json").read_text()))
    up = dataclasses.replace(down, peers={a: dataclasses.replace(p, state="Established")
                                          for a, p in down.peers.items()})
    route = table.routes["1.0.4.0/24"]
    fewer = RouteFacts({"1.0.4.0/24": dataclasses.replace(route, next_hops=route.next_hops[:2])})
    view = FabricView({"eos1": ()}, DEPLOY)
    got = [c.sentence() for c in fabric_changes(view, {"eos1": doc({}, up, table)}, {"eos1": doc({}, down, fewer)})]
    assert got == ["eos1: BGP session 10.0.0.3 (AS 65003) Established -> Active (session down)",
                   "eos1: route 1.0.4.0/24 bgp, 4 paths -> bgp, 2 paths (lost via 169.254.232.156; "
                   "lost via 169.254.232.160)"]


def test_onyx_layout_a_session_back_up_and_a_route_new():
    """Onyx's layout (onyx-manual, built from the manual): the baseline had spine2's session Active and
    no default route; now it is up and the route is there: changes too, each named."""
    now_bgp = onyx.parse_bgp_summary((FIXTURES / "onyx-manual" / "show_ip_bgp_summary.txt").read_text())
    now_routes = onyx.parse_routes((FIXTURES / "onyx-manual" / "show_ip_route.txt").read_text())
    then_bgp = dataclasses.replace(now_bgp, peers={**now_bgp.peers, "172.16.0.2": dataclasses.replace(
        now_bgp.peers["172.16.0.2"], state="Established")})
    then_routes = RouteFacts({p: r for p, r in now_routes.routes.items() if p != "0.0.0.0/0"})
    view = FabricView({"leaf1": (isl("1/31", "spine1", "1/1", "172.16.0.0"),
                                 isl("1/32", "spine2", "1/1", "172.16.0.2"))}, DEPLOY)
    ports = {"1/31": port(), "1/32": port()}
    got = [(c.sign, c.sentence()) for c in fabric_changes(view, {"leaf1": doc(ports, then_bgp, then_routes)},
                                                          {"leaf1": doc(ports, now_bgp, now_routes)})]
    assert got == [("~", "leaf1: BGP session 172.16.0.2 (spine2, AS 65100) Established -> Active (session down)"),
                   ("+", "leaf1: route 0.0.0.0/0 (none) -> static, 1 path (new via 10.209.0.1)")]


def test_isl_ports_are_left_to_the_fabric_comparison():
    """A port that is an ISL is named once, as the ISL (racfg.drift.fabric_environment), not also as a plain port."""
    before = {"version": "8.4.4", "interfaces": {"swp31": port(), "swp1": port()}, "pfc": {}}
    after = {"version": "8.4.4", "interfaces": {"swp31": port(mtu=1500), "swp1": port(mtu=1500)}, "pfc": {}}
    got = [c.sentence() for c in switch_changes("leaf1", before, after, {"swp31"})]
    assert got == ["leaf1: port swp1 MTU 9216 -> 1500"]


def test_a_routing_switch_read_without_its_tables_is_read_again_for_the_baseline():
    """The switch play reads no BGP or route table (apply plans from the config): a routing switch's facts
    from it are not the fabric's state, so the baseline reads that switch again; a switch that does not
    route, or whose tables were read (or could not be, with the reason), is kept as read."""
    from racfg.baseline.collect import _routing_unread
    from racfg.switches.facts import ConfigLine, PfcFacts, SwitchFacts

    bgp_line = ConfigLine("router bgp 65101 vrf default", "neighbor 172.16.0.0", "neighbor 172.16.0.0 remote-as 65100")
    plain = SwitchFacts("leaf1", "onyx", "3.10", {}, PfcFacts(False), {}, config_lines=())
    routing = dataclasses.replace(plain, config_lines=(bgp_line,))
    assert _routing_unread(routing.to_dict())
    assert not _routing_unread(dataclasses.replace(routing, bgp=bgp("leaf1_2-spines-established")).to_dict())
    assert not _routing_unread(dataclasses.replace(routing, routing_error="show ip route: timed out").to_dict())
    assert not _routing_unread(plain.to_dict())
