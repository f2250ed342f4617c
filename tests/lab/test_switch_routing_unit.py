"""The emulated CLI's layer-3 config without a lab: the grammar of each platform, what it keeps in
the running config (and shows, and saves), what FRR is told (routing.frr_config) and what the
namespace is told (l3dataplane.plan)."""

from __future__ import annotations

from pathlib import Path

import pytest

from racfg_lab.switchcli import l3dataplane
from racfg_lab.switchcli.config import CliConfig
from racfg_lab.switchcli.engine import CliSession
from racfg_lab.switchcli.routing import BgpConfig, RoutingConfig, frr_config
from racfg_lab.switchcli.state import ConfigStore
from racfg_lab.switchcli.switch import EmulatedSwitch

EOS_LEAF = [
    "enable", "configure", "ip routing", "vlan 10",
    "interface Ethernet1", "switchport access vlan 10",
    "interface Ethernet31", "no switchport", "ip address 10.255.0.0/31",
    "interface Ethernet32", "no switchport", "ip address 10.255.0.2/31",
    "interface Vlan10", "ip address 10.1.1.1/24",
    "router bgp 65001", "router-id 10.0.0.1", "maximum-paths 2 ecmp 2",
    "neighbor 10.255.0.1 remote-as 65100", "neighbor 10.255.0.3 remote-as 65100",
    "redistribute connected", "end",
]
ONYX_LEAF = [
    "enable", "configure terminal", "vlan 10",
    "interface ethernet 1/1 switchport access vlan 10",
    "interface ethernet 1/31 no switchport force", "interface ethernet 1/31 ip address 10.255.0.0/31 primary",
    "interface ethernet 1/32 no switchport force", "interface ethernet 1/32 ip address 10.255.0.2 255.255.255.254",
    "interface vlan 10 ip address 10.1.1.1/24 primary", "protocol bgp",
    "router bgp 65001 vrf default router-id 10.0.0.1 force", "router bgp 65001 maximum-paths 2",
    "router bgp 65001 neighbor 10.255.0.1 remote-as 65100", "router bgp 65001 neighbor 10.255.0.3 remote-as 65100",
    "router bgp 65001 network 10.1.1.0 /24", "exit",
]
EXPECTED = RoutingConfig(
    ip_routing=True, routed_ports={}, vlans=[10], access_vlan={}, svis={10: "10.1.1.1/24"},
    bgp=BgpConfig(65001, "10.0.0.1", {"10.255.0.1": 65100, "10.255.0.3": 65100}, 2, [], False))


def switch(tmp_path: Path, platform: str) -> EmulatedSwitch:
    model, count = {"onyx": ("SN2700", 32), "eos": ("7060CX-32S", 32)}[platform]
    (tmp_path / "password").write_text("x\n")
    return EmulatedSwitch(CliConfig("leaf1", platform, model, count, "127.0.0.1", 22, "admin",
                                    str(tmp_path / "password"), tmp_path / "state"))


def typed(sw: EmulatedSwitch, lines: list[str]) -> CliSession:
    session = CliSession(sw)
    for line in lines:
        output, _ = session.handle(line)
        assert "%" not in output, f"{line!r}: {output}"
    return session


@pytest.mark.parametrize("platform, lines", [("eos", EOS_LEAF), ("onyx", ONYX_LEAF)])
def test_a_leaf_config_lands_in_the_running_config_and_survives_save(tmp_path, platform, lines):
    sw = switch(tmp_path, platform)
    typed(sw, lines)
    l3 = sw.running.l3
    first, isl1, isl2 = ("Ethernet1", "Ethernet31", "Ethernet32") if platform == "eos" else ("1/1", "1/31", "1/32")
    assert l3.access_vlan == {first: 10}
    assert l3.routed_ports == {isl1: "10.255.0.0/31", isl2: "10.255.0.2/31"}
    assert (l3.ip_routing, l3.vlans, l3.svis) == (EXPECTED.ip_routing, EXPECTED.vlans, EXPECTED.svis)
    assert l3.bgp is not None and (l3.bgp.asn, l3.bgp.router_id, l3.bgp.neighbors, l3.bgp.maximum_paths) == (
        65001, "10.0.0.1", EXPECTED.bgp.neighbors, 2)
    assert l3.bgp.redistribute_connected == (platform == "eos")
    assert l3.bgp.networks == ([] if platform == "eos" else ["10.1.1.0/24"])
    sw.save()
    assert ConfigStore(tmp_path / "state").load().l3 == l3


def test_eos_running_config_shows_the_l3_config_as_eos_prints_it(tmp_path):
    sw = switch(tmp_path, "eos")
    session = typed(sw, EOS_LEAF)
    text, _ = session.handle("show running-config")
    for block in ("vlan 10\n!", "interface Ethernet1\n   switchport access vlan 10\n!",
                  "interface Ethernet31\n   no switchport\n   ip address 10.255.0.0/31\n!",
                  "interface Vlan10\n   ip address 10.1.1.1/24\n!", "ip routing\n!",
                  "router bgp 65001\n   router-id 10.0.0.1\n   maximum-paths 2 ecmp 2\n"
                  "   neighbor 10.255.0.1 remote-as 65100\n   neighbor 10.255.0.3 remote-as 65100\n"
                  "   redistribute connected\n!"):
        assert block in text


def test_onyx_running_config_replays_into_the_same_state(tmp_path):
    """What Onyx's running config prints is the one-line form it accepts: typed back into a
    factory-fresh switch it gives the same L3 config."""
    (tmp_path / "a").mkdir()
    first = switch(tmp_path / "a", "onyx")
    session = typed(first, ONYX_LEAF)
    text, _ = session.handle("show running-config")
    replay = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("##")]
    (tmp_path / "b").mkdir()
    second = switch(tmp_path / "b", "onyx")
    typed(second, ["enable", "configure terminal", *replay])
    assert second.running.l3 == first.running.l3


@pytest.mark.parametrize("platform, lines, error", [
    ("eos", ["interface Ethernet1", "ip address 10.0.0.0/31"], "not a routed port"),
    ("eos", ["interface Ethernet1", "no switchport", "ip address 10.0.0.0"], "prefix length"),
    ("eos", ["interface Ethernet1", "no switchport", "ip address 10.1.1.0/24"], "not a host address"),
    ("eos", ["router bgp 65001", "exit", "router bgp 65002"], "already running with AS number 65001"),
    ("eos", ["router bgp 65001", "neighbor 10.0.0.300 remote-as 65100"], "Invalid neighbor address"),
    ("eos", ["router bgp 0"], "Invalid AS number"),
    ("eos", ["vlan 4095"], "Invalid VLAN"),
    ("onyx", ["router bgp 65001 network 10.1.1.1 /24"], "Invalid prefix"),
    ("onyx", ["interface ethernet 1/1 no switchport force", "interface ethernet 1/1 switchport access vlan 10"],
     "routed port"),
])
def test_bad_l3_commands_are_refused_and_change_nothing(tmp_path, platform, lines, error):
    sw = switch(tmp_path, platform)
    session = typed(sw, ["enable", "configure terminal" if platform == "onyx" else "configure"])
    outputs = [session.handle(line)[0] for line in lines]
    assert error in outputs[-1]
    before = sw.running.l3
    assert session.handle(lines[-1])[0] and sw.running.l3 == before


def test_frr_config_of_a_leaf():
    routing = RoutingConfig(ip_routing=True, routed_ports={"Ethernet31": "10.255.0.0/31"}, svis={10: "10.1.1.1/24"},
                            bgp=BgpConfig(65001, "10.0.0.1", {"10.255.0.3": 65100, "10.255.0.1": 65100}, 2,
                                          ["10.1.1.0/24"], True))
    assert frr_config("leaf1", routing) == (
        "frr defaults datacenter\nhostname leaf1\n!\n"
        "router bgp 65001\n bgp router-id 10.0.0.1\n no bgp ebgp-requires-policy\n"
        " neighbor 10.255.0.1 remote-as 65100\n neighbor 10.255.0.3 remote-as 65100\n !\n"
        " address-family ipv4 unicast\n  network 10.1.1.0/24\n  redistribute connected\n  maximum-paths 2\n"
        " exit-address-family\nexit\n!\n")


def test_frr_config_without_bgp_is_a_bgpd_with_no_router():
    assert "router bgp" not in frr_config("spine1", RoutingConfig(ip_routing=True))


def test_dataplane_plan_routes_isls_and_puts_the_gateway_on_the_bridge():
    routing = RoutingConfig(ip_routing=True, routed_ports={"1/31": "10.255.0.0/31"}, access_vlan={"1/1": 10},
                            svis={10: "10.1.1.1/24"})
    ports = {"1/1": "swp1", "1/31": "swp31"}
    lines = l3dataplane.plan(routing, ports, {"swp31": set()}, {"swp1": "br0", "swp31": "br0"})
    assert lines == ["link set dev swp31 nomaster", "address add 10.1.1.1/24 dev br0",
                     "address add 10.255.0.0/31 dev swp31"]


def test_dataplane_plan_is_idempotent_and_undoes_what_was_removed():
    routing = RoutingConfig(routed_ports={"1/31": "10.255.0.0/31"})
    ports = {"1/31": "swp31", "1/32": "swp32"}
    done = {"swp31": {"10.255.0.0/31"}, "swp32": {"10.255.0.2/31"}, "br0": {"10.1.1.1/24"}}
    # 1/32 went back to a switchport: into the bridge, its address gone; the VLAN interface's too
    assert l3dataplane.plan(routing, ports, done, {"swp31": None, "swp32": None}) == [
        "link set dev swp32 master br0", "address del 10.1.1.1/24 dev br0", "address del 10.255.0.2/31 dev swp32"]
    assert l3dataplane.plan(routing, {"1/31": "swp31"}, {"swp31": {"10.255.0.0/31"}}, {"swp31": None}) == []


def test_dataplane_plan_isolates_an_isl_that_goes_back_to_a_switchport():
    """An ISL made a switchport again must not forward to the other ISLs (the loop racfg_lab.routed
    names); a host port stays an ordinary bridge port."""
    lines = l3dataplane.plan(RoutingConfig(), {"1/1": "swp1", "1/31": "swp31"}, {}, {"swp1": None, "swp31": None},
                             frozenset({"swp31"}))
    assert lines == ["link set dev swp1 master br0", "link set dev swp31 master br0",
                     "link set dev swp31 type bridge_slave isolated on"]


@pytest.mark.parametrize("platform", ["onyx", "eos"])
def test_what_the_drivers_type_for_a_leaf_is_kept_read_back_and_then_unchanged(tmp_path, platform):
    """racfg's own switch drivers against the emulated CLI: the routing changes they plan for a leaf,
    typed in their contexts, are all accepted; the running config, read back by the driver's parser,
    meets the intent, and a second plan changes nothing (what a second deploy relies on)."""
    from racfg.switches import get_driver
    from racfg.switches.intent import HostVlan, IntendedRouting, IntendedSwitch, RoutedPort
    from racfg.switches.routed import plan_routed, unmet_routed

    first, isl = ("Ethernet1", "Ethernet31") if platform == "eos" else ("1/1", "1/31")
    intended = IntendedSwitch("leaf1", platform, "SN2700" if platform == "onyx" else "7060CX-32S", 32, 0, {},
                              routing=IntendedRouting(65001, "10.0.0.1", (RoutedPort(isl, "10.255.0.1/31"),),
                                                      (HostVlan(100, "10.1.1.1/24", "10.1.1.0/24", (first,), 9000),),
                                                      (("10.255.0.0", 65100),), 4))
    driver = get_driver(platform)
    sw = switch(tmp_path, platform)
    session = typed(sw, ["enable", "configure terminal" if platform == "onyx" else "configure"])
    changes = plan_routed(driver, intended, driver.parse_config_lines(session.handle("show running-config")[0]))
    assert changes
    for change in changes:
        lines = [change.context, change.line] if change.context else [change.line]
        for line in lines:
            output, _ = session.handle(line)
            assert "%" not in output, f"{line!r}: {output}"
        if change.context:
            session.handle("exit")
    have = driver.parse_config_lines(session.handle("show running-config")[0])
    assert unmet_routed(driver, intended, have) == []
    assert plan_routed(driver, intended, have) == []
