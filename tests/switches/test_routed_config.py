"""Leaf-spine switch configs (issue 37 point 4): the drivers' rendered routing config per platform
against expected text, the running-config parse of routing lines, and plans from a running config
(nothing when it matches; the minimal commands when one neighbour or one ISL address differs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from racfg.switches.apply import push_lines
from racfg.switches.drivers import Change, SwitchDriver, get_driver
from racfg.switches.facts import ConfigLine, PfcFacts, PortFacts, SwitchFacts
from racfg.switches.intent import IntendedSwitch, intended_from_vars
from racfg.switches.session import SwitchSession, SwitchTarget
from racfg.switches.switch_errors import SwitchConfigError

EXPECTED = Path(__file__).parent / "fixtures" / "routed"
# A small leaf-spine site: 2 leaves, 2 spines, one link from each leaf to each spine, two hosts on
# leaf1. Ports per platform: hosts on the first two, ISLs from the 31st (leaf) / the first (spine).
PORTS = {"onyx": lambda n: f"1/{n}", "eos": lambda n: f"Ethernet{n}"}
MODELS = {"onyx": "SN2700", "eos": "7060CX-32S"}


def switch_vars(platform: str, role: str) -> tuple[dict, list[dict], dict]:
    """(racfg_switch, racfg_switch_ports, racfg_switch_routing) as render writes them."""
    port = PORTS[platform]
    name = "leaf1" if role == "leaf" else "spine1"
    switch = {"name": name, "platform": platform, "model": MODELS[platform], "shutdown_unused": True}
    if role == "leaf":
        hosts = [{"port": port(i), "description": f"dgx0{i}:eth0", "mtu": 9000, "speed_gbps": 100.0,
                  "host": f"dgx0{i}", "nic": "eth0"} for i in (1, 2)]
        isls = [{"port": port(31), "address": "10.255.0.1/31", "peer": "spine1", "peer_port": port(1),
                 "peer_address": "10.255.0.0", "peer_asn": 65100, "mtu": 9216, "speed_gbps": 100.0},
                {"port": port(32), "address": "10.255.0.3/31", "peer": "spine2", "peer_port": port(1),
                 "peer_address": "10.255.0.2", "peer_asn": 65100, "mtu": 9216, "speed_gbps": 100.0}]
        routing = {"role": "leaf", "asn": 65101, "router_id": "10.0.0.11", "spine_asn": 65100, "isls": isls,
                   "subnets": [{"subnet": "10.1.1.0/24", "gateway": "10.1.1.1/24", "ports": [port(1), port(2)]}],
                   "maximum_paths": 2}
    else:
        hosts = []
        isls = [{"port": port(1), "address": "10.255.0.0/31", "peer": "leaf1", "peer_port": port(31),
                 "peer_address": "10.255.0.1", "peer_asn": 65101, "mtu": 9216, "speed_gbps": 100.0},
                {"port": port(2), "address": "10.255.0.4/31", "peer": "leaf2", "peer_port": port(31),
                 "peer_address": "10.255.0.5", "peer_asn": 65102, "mtu": 9216, "speed_gbps": 100.0}]
        routing = {"role": "spine", "asn": 65100, "router_id": "10.0.0.1", "spine_asn": 65100, "isls": isls,
                   "subnets": [], "maximum_paths": 1}
    routing["neighbors"] = [{"address": i["peer_address"], "asn": i["peer_asn"], "peer": i["peer"],
                             "port": i["port"]} for i in isls]
    return switch, hosts, routing


def intended(platform: str, role: str) -> IntendedSwitch:
    switch, ports, routing = switch_vars(platform, role)
    return intended_from_vars(switch, ports, {"switch_mtu": 9000}, routing)


def facts_from_text(platform: str, want: IntendedSwitch, running: str) -> SwitchFacts:
    """The switch with every port as intended and ``running`` as its running config."""
    driver = get_driver(platform)
    ports = {p: PortFacts(w.mtu, True, True, w.speed_gbps, w.description) for p, w in want.ports.items()}
    ports.update({p: PortFacts(1500, False, False, 100.0) for p in want.panel_ports() if p not in ports})
    return SwitchFacts(want.name, platform, "x", ports, PfcFacts(False), {},
                       config_lines=driver.parse_config_lines(running))


def plan_after_edit(platform: str, old: str, new: str) -> tuple[SwitchDriver, SwitchFacts, list[Change]]:
    """The plan for leaf1 whose running config is the rendered one with ``old`` replaced by ``new``."""
    want = intended(platform, "leaf")
    driver = get_driver(platform)
    facts = facts_from_text(platform, want, driver.render(want).replace(old, new))
    return driver, facts, driver.plan(want, facts)


CASES = [(p, r) for p in ("onyx", "eos") for r in ("leaf", "spine")]


@pytest.mark.parametrize(("platform", "role"), CASES)
def test_rendered_config_matches_expected_text(platform: str, role: str) -> None:
    want = intended(platform, role)
    text = get_driver(platform).render(want)
    assert text == (EXPECTED / f"{platform}-{role}.txt").read_text()


@pytest.mark.parametrize(("platform", "role"), CASES)
def test_running_config_as_rendered_plans_nothing(platform: str, role: str) -> None:
    """Idempotence: a switch whose running config holds what racfg renders needs no change."""
    want = intended(platform, role)
    driver = get_driver(platform)
    facts = facts_from_text(platform, want, driver.render(want))
    assert driver.plan(want, facts) == []
    assert driver.unmet(want, facts) == []


@pytest.mark.parametrize(("platform", "role"), CASES)
def test_isl_ports_are_managed_up_and_named_by_their_peer(platform: str, role: str) -> None:
    want = intended(platform, role)
    port = PORTS[platform]
    isl = want.wanted(port(31) if role == "leaf" else port(1))
    assert isl is not None and isl.admin_up and isl.mtu == 9216
    assert isl.description == ("spine1:" + port(1) if role == "leaf" else "leaf1:" + port(31))
    assert want.wanted(port(20)) is not None and not want.wanted(port(20)).admin_up  # unused: shut


@pytest.mark.parametrize(("platform", "expected"), [
    ("onyx", ["router bgp 65101 vrf default", "no neighbor 10.255.0.9",
              "neighbor 10.255.0.2 remote-as 65100", "exit"]),
    ("eos", ["router bgp 65101", "no neighbor 10.255.0.9", "neighbor 10.255.0.2 remote-as 65100", "exit"]),
])
def test_one_neighbour_differs(platform: str, expected: list[str]) -> None:
    driver, _, changes = plan_after_edit(platform, "neighbor 10.255.0.2 ", "neighbor 10.255.0.9 ")
    assert driver.commands(changes) == expected
    assert [c.undo for c in changes] == ["neighbor 10.255.0.9 remote-as 65100", "no neighbor 10.255.0.2"]


@pytest.mark.parametrize(("platform", "expected"), [
    # Onyx cannot change a primary address in place: remove, then set
    ("onyx", ["interface ethernet 1/32", "no ip address", "ip address 10.255.0.3/31 primary", "exit"]),
    ("eos", ["interface Ethernet32", "ip address 10.255.0.3/31", "exit"]),
])
def test_one_isl_address_differs(platform: str, expected: list[str]) -> None:
    driver, facts, changes = plan_after_edit(platform, "10.255.0.3/31", "10.255.0.7/31")
    assert driver.commands(changes) == expected
    assert driver.unmet(intended(platform, "leaf"), facts) == [
        f"{driver.context(PORTS[platform](32))} ip address: Expected: {expected[-2]!r} "
        f"Actual: {expected[-2].replace('10.255.0.3', '10.255.0.7')!r}"]


@pytest.mark.parametrize("platform", ["onyx", "eos"])
def test_bare_switch_gets_every_routing_line(platform: str) -> None:
    """From a running config without routing, the plan types every routing line, VLAN before its
    interface, and each undo removes what it added."""
    want = intended(platform, "leaf")
    driver = get_driver(platform)
    changes = [c for c in driver.plan(want, facts_from_text(platform, want, "")) if c.undo != c.line]
    lines = driver.commands(changes)
    assert lines.index("vlan 100") < lines.index(driver.vlan_context(100))
    assert lines[0] == ("protocol bgp" if platform == "onyx" else "ip routing")
    assert {c.line: c.undo for c in changes}[driver.maximum_paths(2)] == "no maximum-paths"


def test_bgp_under_another_asn_is_removed_first() -> None:
    want = intended("eos", "spine")
    driver = get_driver("eos")
    running = driver.render(want).replace("router bgp 65100", "router bgp 65000")
    changes = driver.plan(want, facts_from_text("eos", want, running))
    assert changes[0].line == "no router bgp 65000" and changes[0].context is None
    assert [c.line for c in changes[1:]] == ["router-id 10.0.0.1",
                                             "neighbor 10.255.0.1 remote-as 65101",
                                             "neighbor 10.255.0.5 remote-as 65102"]


ONYX_RUNNING = """\
##
## Interface Ethernet configuration
##
   interface ethernet 1/31 mtu 9216 force
   interface ethernet 1/31 no switchport force
   interface ethernet 1/1 switchport access vlan 100
   interface ethernet 1/31 description "spine1:1/1"
##
## VLAN configuration
##
   vlan 100
   vlan 100 name "racfg-hosts-100"
##
## L3 configuration
##
   interface vlan 100
   interface ethernet 1/31 ip address 10.255.0.1/31 primary
   interface vlan 100 ip address 10.1.1.1/24 primary
   interface vlan 100 mtu 9000
   interface vlan 100 ip address 10.1.2.1/24
##
## BGP configuration
##
   protocol bgp
   router bgp 65101 vrf default
   router bgp 65101 vrf default router-id 10.0.0.11 force
   router bgp 65101 vrf default maximum-paths 2
   router bgp 65101 vrf default neighbor 10.255.0.0 remote-as 65100
   router bgp 65101 vrf default neighbor 10.255.0.0 ebgp-multihop 2
   router bgp 65101 vrf default network 10.1.1.0 /24
"""

EOS_RUNNING = """\
! Command: show running-config
hostname leaf1
!
vlan 100
   name racfg-hosts-100
!
interface Ethernet1
   mtu 9000
   switchport access vlan 100
!
interface Ethernet31
   description spine1:Ethernet1
   mtu 9216
   no switchport
   ip address 10.255.0.1/31
!
interface Vlan100
   mtu 9000
   ip address 10.1.1.1/24
!
ip routing
!
router bgp 65101
   router-id 10.0.0.11
   maximum-paths 2 ecmp 2
   neighbor 10.255.0.0 remote-as 65100
   neighbor 10.255.0.0 description spine1
   network 10.1.1.0/24
   !
   address-family ipv4
      neighbor 10.255.0.0 activate
!
end
"""


def _lines(onyx: bool) -> set[ConfigLine]:
    eth, vl, bgp = (("interface ethernet 1/", "interface vlan 100", "router bgp 65101 vrf default") if onyx
                    else ("interface Ethernet", "interface Vlan100", "router bgp 65101"))
    return {
        ConfigLine(None, "protocol bgp" if onyx else "ip routing", "protocol bgp" if onyx else "ip routing"),
        ConfigLine(f"{eth}31", "switchport", "no switchport force" if onyx else "no switchport"),
        ConfigLine(f"{eth}31", "ip address", "ip address 10.255.0.1/31" + (" primary" if onyx else "")),
        ConfigLine(f"{eth}1", "switchport access vlan", "switchport access vlan 100"),
        ConfigLine("vlan 100", "name", "name racfg-hosts-100"),
        ConfigLine(vl, "mtu", "mtu 9000"),
        ConfigLine(vl, "ip address", "ip address 10.1.1.1/24" + (" primary" if onyx else "")),
        ConfigLine(None, "router bgp", bgp),
        ConfigLine(bgp, "router-id", "router-id 10.0.0.11" + (" force" if onyx else "")),
        ConfigLine(bgp, "maximum-paths", "maximum-paths 2" + ("" if onyx else " ecmp 2")),
        ConfigLine(bgp, "neighbor 10.255.0.0", "neighbor 10.255.0.0 remote-as 65100"),
        ConfigLine(bgp, "network 10.1.1.0/24", "network 10.1.1.0 /24" if onyx else "network 10.1.1.0/24"),
    }


@pytest.mark.parametrize(("platform", "text"), [("onyx", ONYX_RUNNING), ("eos", EOS_RUNNING)])
def test_running_config_routing_lines(platform: str, text: str) -> None:
    """Only the settings racfg manages: an Ethernet port's MTU and description (read from show
    interfaces), a second Onyx address, neighbour options and address families are not among them."""
    parsed = get_driver(platform).parse_config_lines(text)
    assert set(parsed) == _lines(platform == "onyx")
    assert len(parsed) == len(set(parsed))


def test_facts_keep_config_lines_through_json() -> None:
    import json

    facts = facts_from_text("onyx", intended("onyx", "leaf"), ONYX_RUNNING)
    again = SwitchFacts.from_dict(json.loads(json.dumps(facts.to_dict())))
    assert again.config_lines == facts.config_lines


@pytest.mark.parametrize(("example", "leaf", "spine"), [("ra-leafspine.yaml", "leaf1", "spine1"),
                                                        ("ra-leafspine-eos.yaml", "leaf1", "spine1")])
def test_examples_switches_route_from_their_inventory(example: str, leaf: str, spine: str) -> None:
    """What validate and drift use (intended_for) carries the routing intent the deploy renders: every
    ISL of the example is a managed, up port named by its peer, and the leaf advertises its subnet."""
    from racfg.inventory import load_cluster
    from racfg.render.routing import switch_routing
    from racfg.switches.intent import intended_for

    cluster = load_cluster(Path(__file__).parents[2] / "inventory" / example)
    for name in (leaf, spine):
        want = intended_for(cluster, name)
        routing = switch_routing(cluster, name)
        assert want.routing is not None and want.routing.routed_ports
        for isl in want.routing.routed_ports:
            port = want.ports[isl.port]
            assert port.admin_up and port.mtu == cluster.fabric.effective_isl_mtu and ":" in port.description
        assert routing is not None
        assert {p.port for p in want.routing.routed_ports} == {i["port"] for i in routing["isls"]}
    leaf_routing = intended_for(cluster, leaf).routing
    assert leaf_routing is not None and leaf_routing.vlans and leaf_routing.vlans[0].ports
    assert get_driver(cluster.switches[leaf].spec.platform).network(leaf_routing.vlans[0].subnet) in \
        get_driver(cluster.switches[leaf].spec.platform).render(intended_for(cluster, leaf))


class _Conn:
    def exit_config_mode(self) -> None:
        pass


class RejectingOnyx(SwitchSession):
    """An Onyx session that rejects one line and accepts every other (what push_lines sees)."""

    def __init__(self, reject: str) -> None:
        super().__init__(SwitchTarget("leaf1", "onyx", "192.0.2.1", username="admin", password="x"))
        self.reject, self.sent, self.conn = reject, [], _Conn()

    def send_line(self, line: str, expect: str) -> str:
        self.sent.append(line)
        return "% Invalid peer\nleaf1 (config) #" if line == self.reject else "leaf1 (config) #"


def test_onyx_rejected_routing_line_undoes_what_was_applied() -> None:
    """No atomic commit on Onyx: the lines typed before a rejected one are undone, last first, each in
    its mode (the added VLAN interface address, the host ports' VLAN, the ISL address ...)."""
    want = intended("onyx", "leaf")
    driver = get_driver("onyx")
    changes = [c for c in driver.plan(want, facts_from_text("onyx", want, "")) if c.undo != c.line]
    session = RejectingOnyx("neighbor 10.255.0.2 remote-as 65100")
    with pytest.raises(SwitchConfigError) as caught:
        push_lines(session, changes)
    rejected_at = [c.line for c in changes].index(session.reject)
    undo = [Change(c.context, c.undo, None, "") for c in reversed(changes[:rejected_at]) if c.undo]
    typed_undo = session.sent[session.sent.index(session.reject) + 1:]
    assert [line for line in typed_undo if line != "exit"] == [
        line for line in driver.commands(undo) if line != "exit"]
    assert typed_undo[:2] == ["router bgp 65101 vrf default", "no neighbor 10.255.0.0"]
    assert "no protocol bgp" in typed_undo and "no ip address" in typed_undo
    assert "were undone: running config unchanged" in str(caught.value)


@pytest.mark.parametrize("platform", ["eos", "onyx"])
def test_one_path_is_the_default_a_configured_maximum_paths_is_removed(platform: str) -> None:
    """A spine with one link per leaf wants one path: the platforms' default, which no running config
    prints, so racfg types no line for it and removes a maximum-paths someone configured."""
    want = intended(platform, "spine")
    driver = get_driver(platform)
    rendered = driver.render(want)
    assert "maximum-paths" not in rendered
    bgp = driver.bgp_context(want.routing.asn)
    running = (rendered + f"{bgp} {driver.maximum_paths(4)}\n" if platform == "onyx"
               else rendered.replace(f"{bgp}\n", f"{bgp}\n   {driver.maximum_paths(4)}\n", 1))
    changes = driver.plan(want, facts_from_text(platform, want, running))
    assert [(c.context, c.line) for c in changes] == [(bgp, "no maximum-paths")]
    assert driver.plan(want, facts_from_text(platform, want, rendered)) == []
