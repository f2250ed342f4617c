"""PFC and RoCE are planned independently, EOS no-drop priorities are removed on every port that
has them (PFC on there or not), and an apply's postcondition reads the switch's facts."""

from __future__ import annotations

import json

from racfg.switches.drivers import get_driver
from racfg.switches.facts import PfcFacts, PortFacts, SwitchFacts
from racfg.switches.intent import IntendedPort, IntendedSwitch
from racfg.switches.parsers import eos_json

# The shape `show priority-flow-control | json` has on EOS: a port with PFC off keeps its no-drop priority.
EOS_PFC = json.dumps({"interfaceStatuses": {
    "Ethernet1/1": {"enabled": True, "active": True, "priorities": [3]},
    "Ethernet1/2": {"enabled": False, "active": False, "priorities": [4]},
    "Ethernet1/3": {"enabled": False, "active": False, "priorities": []}}})


def port(platform: str) -> str:
    """Port 1/1 as racfg names it on the platform."""
    return "Ethernet1/1" if platform == "eos" else "1/1"


def switch(platform: str, pfc: bool = False, roce: bool = False) -> IntendedSwitch:
    name = port(platform)
    return IntendedSwitch("sw1", platform, "m", 32, 32, {name: IntendedPort(name, "dgx01", 9000, None)},
                          pfc=pfc, roce=roce)


def facts(platform: str, pfc: PfcFacts, mtu: int = 9000) -> SwitchFacts:
    return SwitchFacts(name="sw1", platform=platform, version="x",
                       interfaces={port(platform): PortFacts(mtu, True, True, 100.0, "dgx01")}, pfc=pfc, lldp={})


def lines(platform: str, intended: IntendedSwitch, pfc: PfcFacts) -> list[str]:
    driver = get_driver(platform)
    return driver.commands(driver.plan(intended, facts(platform, pfc)))


def test_eos_no_drop_removed_on_every_port_with_pfc_on_or_off() -> None:
    pfc = eos_json.parse_pfc(EOS_PFC)
    assert pfc.port_priorities == {"Ethernet1/1": (3,), "Ethernet1/2": (4,)} and pfc.any_enabled
    planned = lines("eos", switch("eos"), pfc)
    assert planned == ["interface Ethernet1/1", "no priority-flow-control priority 3 no-drop", "exit",
                       "interface Ethernet1/2", "no priority-flow-control priority 4 no-drop", "exit",
                       "interface Ethernet1/1", "no priority-flow-control", "exit"]


def test_pfc_and_roce_are_planned_independently() -> None:
    pfc = eos_json.parse_pfc(EOS_PFC)
    only_pfc = lines("eos", switch("eos", pfc=True), pfc)  # PFC wanted, RoCE not: no-drop goes, PFC stays
    assert "no priority-flow-control priority 4 no-drop" in only_pfc and "no priority-flow-control" not in only_pfc
    only_roce = lines("eos", switch("eos", roce=True), pfc)  # RoCE wanted, PFC not: PFC goes, no-drop stays
    assert only_roce == ["interface Ethernet1/1", "no priority-flow-control", "exit"]
    onyx = PfcFacts(True, {"1/1": True}, roce=True, lossless_priorities=(3,))
    assert lines("onyx", switch("onyx", pfc=True), onyx) == [
        "no roce", "no dcb priority-flow-control priority 3 enable"]


def test_postcondition_names_what_the_re_read_switch_still_has() -> None:
    driver = get_driver("eos")
    left = PfcFacts(False, {"Ethernet1/2": False}, roce=True, lossless_priorities=(4,),
                    port_priorities={"Ethernet1/2": (4,)})
    unmet = driver.unmet(switch("eos"), facts("eos", left, mtu=1500))
    assert unmet == ["lossless/RoCE: Expected: none Actual: priorities [4] on Ethernet1/2 no-drop [4]",
                     "Ethernet1/1 mtu: Expected: 9000 Actual: 1500"]
    assert driver.unmet(switch("eos"), facts("eos", PfcFacts(False))) == []
