"""BGP and route parsers of every platform, on real recordings (tests/switches/fixtures, copied
byte for byte from ../shared/device-outputs): EOS ``| json`` from napalm's mocked data, FRR text from
FRR's documentation (indented as published). Onyx has no recording (hosts/SOURCES.md, "Not found"):
its inputs in fixtures/onyx-manual/ are typed to the manual's layout, NOT recorded (see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racfg.switches.facts import BgpFacts, BgpPeer, NextHop, Route, RouteFacts
from racfg.switches.parsers import eos_json, frr, onyx
from racfg.switches.parsers.bgp_summary import asplain, bgp_state, uptime_seconds
from racfg.switches.parsers.vendor_values import ParseError

FIX = Path(__file__).parent / "fixtures"
FRR_DESC = "frr/show_bgp_summary_desc-software-version_3-ibgp-peers_RST-INDENTED_frr-doc.txt"
FRR_POLICY = "frr/show_bgp_summary_ebgp-requires-policy_Policy-columns_RST-INDENTED_frr-doc.txt"
FRR_WIDE = "frr/show_ip_bgp_summary_wide_LocalAS-column_RST-INDENTED_frr-doc.txt"
EOS_ACTIVE = "eos/show_ip_bgp_summary_vrf_all_one-peer-Active_napalm.json"
EOS_ASDOT = "eos/show_ip_bgp_summary_vrf_all_unnumbered-ipv6-LL-peers_asdot_napalm-issue1759.json"
ONYX_MANUAL_BGP = "onyx-manual/show_ip_bgp_summary.txt"  # built from the manual's layout, not recorded


def read(name: str) -> str:
    return (FIX / name).read_text()


@pytest.mark.parametrize(("parser", "fixture", "asn", "router_id", "peers"), [
    (frr.parse_bgp_summary, FRR_DESC, 65001, "10.0.0.6", {
        "10.0.0.4": BgpPeer("10.0.0.4", 65001, "Established", 5, 11.0),
        "10.0.0.5": BgpPeer("10.0.0.5", 65001, "Established", 5, 11.0),
        "192.168.67.7": BgpPeer("192.168.67.7", 65001, "Established", 2, 23.0)}),
    (frr.parse_bgp_summary, FRR_POLICY, 65001, "10.10.10.1", {
        "192.168.0.2": BgpPeer("192.168.0.2", 65002, "Established", 5, 189.0),
        "fe80:1::2222": BgpPeer("fe80:1::2222", 65002, "Established", None, 189.0, detail="Policy")}),
    (frr.parse_bgp_summary, FRR_WIDE, 65534, "192.168.100.1", {  # LocalAS column (123) not taken for AS
        "192.168.0.2": BgpPeer("192.168.0.2", 65030, "Established", 0, 420.0)}),
    (eos_json.parse_bgp_summary, EOS_ACTIVE, 65001, "192.168.0.0", {
        "10.0.0.1": BgpPeer("10.0.0.1", 65002, "Established", 3, None),
        "10.0.0.3": BgpPeer("10.0.0.3", 65003, "Active", 0, None)}),
    (eos_json.parse_bgp_summary, EOS_ASDOT, 65002 * 65536 + 2048, "172.18.8.0", {
        "fe80::a8c1:abff:fe94:4171": BgpPeer("fe80::a8c1:abff:fe94:4171", 65001 * 65536 + 1028, "Established", 3,
                                             None, "Ethernet3"),
        "fe80::a8c1:abff:fea1:b618": BgpPeer("fe80::a8c1:abff:fea1:b618", 65001 * 65536 + 1027, "Established", 5,
                                             None, "Ethernet2"),
        "fe80::a8c1:abff:fedc:fb58": BgpPeer("fe80::a8c1:abff:fedc:fb58", 65001 * 65536 + 1026, "Established", 6,
                                             None, "Ethernet1")}),
    (onyx.parse_bgp_summary, ONYX_MANUAL_BGP, 65101, "10.0.0.11", {
        "172.16.0.0": BgpPeer("172.16.0.0", 65100, "Established", 2, 1297.0),
        "172.16.0.2": BgpPeer("172.16.0.2", 65100, "Active", 0, 0.0)}),
])
def test_bgp_summary(parser, fixture, asn, router_id, peers):
    facts = parser(read(fixture))
    assert (facts.local_asn, facts.router_id, facts.peers) == (asn, router_id, peers)


def test_eos_uptime_needs_the_clock():
    """upDownTime is the epoch of the last change: the uptime is now minus it, never guessed."""
    facts = eos_json.parse_bgp_summary(read(EOS_ACTIVE), now=1721080627.052693)
    assert facts.peers["10.0.0.1"].uptime_s == pytest.approx(100.0)


HOPS_16 = tuple(NextHop(f"192.168.161.{n}", "enp39s0") for n in range(1, 17))


@pytest.mark.parametrize(("parser", "fixture", "routes"), [
    (eos_json.parse_routes, "eos/show_ip_route_vrf_default_1.0.4.0-24_bgp_detail_napalm-iss1347.json", {
        "1.0.4.0/24": Route("1.0.4.0/24", "bgp", tuple(
            NextHop(f"169.254.232.{a}", f"Ethernet{k}/1") for k, a in enumerate((148, 152, 156, 160), 1)))}),
    (frr.parse_routes, "frr/show_ip_route_prefix_16-way-ECMP_INDENTED_frr-doc.txt", {
        "4.4.4.4/32": Route("4.4.4.4/32", "sharp", HOPS_16)}),
    (frr.parse_routes, "frr/show_ip_route_kernel-static-recursive-local_linkdown_INDENTED_frr-doc.txt", {
        "0.0.0.0/0": Route("0.0.0.0/0", "kernel", (NextHop("192.168.119.1", "enp13s0"),)),
        # the recursive hop is replaced by the hop it resolves through; FIB-installed by that line's *
        "4.5.6.7/32": Route("4.5.6.7/32", "static", (NextHop("192.168.119.1", "enp13s0"),)),
        "169.254.0.0/16": Route("169.254.0.0/16", "kernel", (NextHop(None, "virbr2"),)),
        "192.168.119.205/32": Route("192.168.119.205/32", "local", (NextHop(None, "enp13s0"),))}),
    (frr.parse_routes, "frr/show_ip_route_failed_rejected-route_INDENTED_frr-doc.txt", {
        "0.0.0.0/0": Route("0.0.0.0/0", "unknown", (NextHop("10.0.0.1", "Ethernet120"),), installed=False)}),
    (onyx.parse_routes, "onyx-manual/show_ip_route.txt", {  # built from the manual's layout, not recorded
        "0.0.0.0/0": Route("0.0.0.0/0", "static", (NextHop("10.209.0.1", "mgmt0"),)),
        "10.1.1.0/24": Route("10.1.1.0/24", "connected", (NextHop(None, "vlan101"),)),
        "10.1.2.0/24": Route("10.1.2.0/24", "bgp", (NextHop("172.16.0.0", "1/31"), NextHop("172.16.0.2", "1/32"))),
        "172.16.0.0/31": Route("172.16.0.0/31", "connected", (NextHop(None, "1/31"),))}),
])
def test_routes(parser, fixture, routes):
    assert parser(read(fixture)).routes == routes


def test_frr_selected_entry_wins_and_bgp_ecmp_lines():
    """Lines as the lab's FRR prints a leaf's table: a candidate without > loses to the selected one."""
    raw = ("B   10.1.2.0/24 [20/0] via 172.16.0.4, swp3, weight 1, 00:01:00\n"
           "B>* 10.1.2.0/24 [20/0] via 172.16.0.0, swp1, weight 1, 00:01:02\n"
           "  *                    via 172.16.0.2, swp2, weight 1, 00:01:02\n")
    route = frr.parse_routes(raw).of_protocol("bgp")["10.1.2.0/24"]
    assert route.next_hops == (NextHop("172.16.0.0", "swp1"), NextHop("172.16.0.2", "swp2")) and route.installed


@pytest.mark.parametrize(("text", "state"), [
    ("Idle (Admin)", ("Idle", "Admin")), ("ESTABLISHED", ("Established", "")), ("Estab", ("Established", "")),
    ("OpenSent", ("OpenSent", "")), ("Connect", ("Connect", "")),
])
def test_states(text, state):
    assert bgp_state(text) == state


@pytest.mark.parametrize(("text", "seconds"), [
    ("00:03:09", 189.0), ("0:00:21:37", 1297.0), ("1d01h44m", 92640.0), ("01w2d03h", 788400.0), ("never", None),
])
def test_uptimes(text, seconds):
    assert uptime_seconds(text) == seconds


def test_onyx_layout_shut_neighbour():
    """A shut neighbour in the Onyx layout (state and detail before the count), as the lab prints it."""
    raw = read(ONYX_MANUAL_BGP).replace("ACTIVE/0", "IDLE (ADMIN)/0")
    assert onyx.parse_bgp_summary(raw).peers["172.16.0.2"] == BgpPeer("172.16.0.2", 65100, "Idle", 0, 0.0,
                                                                      detail="ADMIN")


def test_frr_idle_admin_and_hostname_peer():
    """Cumulus-style rows: a peer named host(ifname), a shut neighbour; the IPv6 section is not read."""
    raw = ("IPv4 Unicast Summary:\nBGP router identifier 10.10.10.1, local AS number 65101 vrf-id 0\n\n"
           "Neighbor        V         AS   MsgRcvd   MsgSent   TblVer  InQ OutQ  Up/Down State/PfxRcd\n"
           "spine01(swp51)  4      65199     31122     31194        0    0    0 1d01h44m            7\n"
           "10.0.0.9        4      65199         0         0        0    0    0    never Idle (Admin)\n\n"
           "IPv6 Unicast Summary:\nBGP router identifier 10.10.10.1, local AS number 65101 vrf-id 0\n"
           "Neighbor        V         AS   MsgRcvd   MsgSent   TblVer  InQ OutQ  Up/Down State/PfxRcd\n"
           "fe80::1         4      65199         0         0        0    0    0    never Active\n")
    peers = frr.parse_bgp_summary(raw).peers
    assert peers == {"spine01": BgpPeer("spine01", 65199, "Established", 7, 92640.0, "swp51"),
                     "10.0.0.9": BgpPeer("10.0.0.9", 65199, "Idle", None, None, detail="Admin")}


@pytest.mark.parametrize(("call", "raw"), [
    (frr.parse_bgp_summary, "% BGP instance not found\n"),
    (onyx.parse_bgp_summary, "% Unrecognized command \"bgp\".\n"),
    (eos_json.parse_bgp_summary, '{"vrfs": {}}'),
    (eos_json.parse_routes, "% Invalid input"),
    (onyx.parse_routes, "% Unrecognized command\n"),
    (frr.parse_routes, "% Unknown command: show ip rout\n"),
])
def test_wrong_output_is_a_parse_error(call, raw):
    with pytest.raises(ParseError):
        call(raw)


def test_asplain():
    assert asplain("65002.2048") == 4259973120 and asplain(65001) == 65001
    with pytest.raises(ParseError):
        asplain("AS65001")


def test_facts_survive_a_json_round_trip():
    """Drift keeps them in a JSON baseline: what comes back equals what was read."""
    bgp = eos_json.parse_bgp_summary(read(EOS_ASDOT))
    routes = frr.parse_routes(read("frr/show_ip_route_prefix_16-way-ECMP_INDENTED_frr-doc.txt"))
    assert BgpFacts.from_dict(json.loads(json.dumps(bgp.to_dict()))) == bgp
    assert RouteFacts.from_dict(json.loads(json.dumps(routes.to_dict()))) == routes


LAB = "frr-lab/"  # real FRR 8.4.4 daemons on this machine (fixtures/frr-lab/README.md)


@pytest.mark.parametrize(("fixture", "asn", "peers"), [
    ("show_ip_bgp_summary_leaf1_2-spines-established_frr-8.4.4-lab.txt", 65101, {
        "172.16.0.0": BgpPeer("172.16.0.0", 65100, "Established", 1, 40.0),
        "172.16.0.2": BgpPeer("172.16.0.2", 65100, "Established", 1, 40.0)}),
    ("show_bgp_summary_leaf1_2-spines-established_frr-8.4.4-lab.txt", 65101, {
        "172.16.0.0": BgpPeer("172.16.0.0", 65100, "Established", 1, 40.0),
        "172.16.0.2": BgpPeer("172.16.0.2", 65100, "Established", 1, 40.0)}),
    ("show_ip_bgp_summary_leaf1_isl-to-spine2-down_frr-8.4.4-lab.txt", 65101, {
        "172.16.0.0": BgpPeer("172.16.0.0", 65100, "Established", 1, 44.0),
        "172.16.0.2": BgpPeer("172.16.0.2", 65100, "Active", None, 4.0)}),
    ("show_ip_bgp_summary_spine1_neighbor-removed-on-leaf1_frr-8.4.4-lab.txt", 65100, {
        "172.16.0.1": BgpPeer("172.16.0.1", 65101, "Active", None, 5.0),
        "172.16.0.5": BgpPeer("172.16.0.5", 65102, "Established", 1, 49.0)}),
    ("show_ip_bgp_summary_leaf2_no-neighbors_frr-8.4.4-lab.txt", None, {}),
])
def test_frr_lab_bgp_summary(fixture, asn, peers):
    facts = frr.parse_bgp_summary(read(LAB + fixture))
    assert (facts.local_asn, facts.peers) == (asn, peers)


@pytest.mark.parametrize(("fixture", "hops"), [
    ("show_ip_route_leaf1_bgp-ecmp-2-spines_frr-8.4.4-lab.txt",
     (NextHop("172.16.0.0", "swp31"), NextHop("172.16.0.2", "swp32"))),
    ("show_ip_route_leaf1_isl-to-spine2-down_one-path_frr-8.4.4-lab.txt", (NextHop("172.16.0.0", "swp31"),)),
])
def test_frr_lab_routes(fixture, hops):
    routes = frr.parse_routes(read(LAB + fixture))
    assert routes.of_protocol("bgp") == {"10.1.2.0/24": Route("10.1.2.0/24", "bgp", hops)}
    assert routes.routes["10.1.1.0/24"] == Route("10.1.1.0/24", "connected", (NextHop(None, "vlan101"),))
