"""A routing switch's facts carry its BGP and route tables (read in the same session as its ports),
on recorded output; a switch with no BGP process is not asked; the facts survive the baseline's
JSON round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from racfg.switches.drivers import get_driver
from racfg.switches.facts import SwitchFacts
from racfg.switches.session import SwitchSession, SwitchTarget

FIX = Path(__file__).parent / "fixtures"
ONYX = {  # the Onyx driver's show commands -> recorded (or manual-built, onyx-manual/README.md) output
    "show interfaces ethernet | json-print": "onyx/onyx_facts_show_interfaces_ethernet.txt",
    "show dcb priority-flow-control | json-print": "onyx/onyx_pfc_interface_disabled.txt",
    "show version | json-print": "onyx/onyx_facts_show_version.txt",
    "show lldp interfaces ethernet remote | json-print": "onyx/onyx_lldp_interface_show.txt",
    "show running-config": "routed/onyx-leaf.txt",
    "show ip bgp summary": "onyx-manual/show_ip_bgp_summary.txt",
    "show ip route": "onyx-manual/show_ip_route.txt",
}


class RecordedCli:
    """A netmiko connection that answers each show command with its recording and logs what it was asked."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers, self.asked = answers, []

    def send_command(self, command: str, **_: Any) -> str:
        self.asked.append(command)
        return self.answers.get(command, "Unsaved changes: no\n")


def session(overrides: dict[str, str] | None = None) -> tuple[SwitchSession, RecordedCli]:
    answers = {cmd: (FIX / path).read_text() for cmd, path in ONYX.items()} | (overrides or {})
    sess = SwitchSession(SwitchTarget("leaf1", "onyx", "198.18.82.11"))
    sess.conn = RecordedCli(answers)
    return sess, sess.conn


def test_a_routing_switch_is_read_with_its_bgp_and_routes():
    sess, cli = session()
    facts = sess.facts(routing=True)
    assert facts.routes_traffic and facts.routing_error is None
    assert facts.bgp is not None and facts.bgp.peers and all(p.remote_asn for p in facts.bgp.peers.values())
    assert facts.routes is not None and facts.routes.of_protocol("bgp")
    assert cli.asked[-2:] == ["show ip bgp summary", "show ip route"]


def test_apply_reads_no_routing_tables_and_a_switch_without_bgp_is_not_asked():
    sess, cli = session()
    assert sess.facts().bgp is None and "show ip bgp summary" not in cli.asked
    plain = "\n".join(line for line in (FIX / ONYX["show running-config"]).read_text().splitlines()
                      if not line.startswith(("router bgp", "protocol bgp")))
    sess, cli = session({"show running-config": plain})
    facts = sess.facts(routing=True)
    assert not facts.routes_traffic and facts.bgp is None and facts.routes is None
    assert not any(cmd.startswith("show ip") for cmd in cli.asked)


def test_a_routing_table_that_cannot_be_read_is_said_and_the_ports_stay():
    sess, _ = session({"show ip bgp summary": "% BGP is not running"})
    facts = sess.facts(routing=True)
    assert facts.bgp is None and facts.interfaces
    assert "show ip bgp summary" in (facts.routing_error or "") and "BGP is not running" in facts.routing_error


def test_eos_reads_the_json_forms():
    driver = get_driver("eos")
    config = driver.parse_config_lines((FIX / "routed/eos-leaf.txt").read_text())
    facts = SwitchFacts("leaf1", "eos", "4.30", {}, get_driver("onyx").parse_pfc({"pfc": "{}"}), {},
                        config_lines=config)
    commands = driver.routing_commands(facts)
    assert commands == {"bgp": "show ip bgp summary | json", "routes": "show ip route | json"}
    raw = {"bgp": (FIX / "eos/show_ip_bgp_summary_vrf_all_one-peer-Active_napalm.json").read_text(),
           "routes": (FIX / "eos/show_ip_route_vrf_default_1.0.4.0-24_bgp_detail_napalm-iss1347.json").read_text()}
    read = driver.with_routing(facts, raw)
    assert read.bgp.peers["10.0.0.3"].state == "Active" and read.bgp.peers["10.0.0.1"].uptime_s is not None
    assert read.routes.routes["1.0.4.0/24"].protocol == "bgp"


def test_routing_facts_survive_the_baselines_json_round_trip():
    facts = session()[0].facts(routing=True)
    back = SwitchFacts.from_dict(json.loads(json.dumps(facts.to_dict())))
    assert back == facts and back.bgp == facts.bgp and back.routes == facts.routes
    error = SwitchFacts.from_dict(json.loads(json.dumps(session({"show ip route": "% x"})[0].facts(
        routing=True).to_dict())))
    assert error.routing_error and error.bgp is None
    old = {k: v for k, v in facts.to_dict().items() if k not in ("bgp", "routes", "routing_error")}
    assert SwitchFacts.from_dict(old).bgp is None  # a baseline written before these fields still loads
