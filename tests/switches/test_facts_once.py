"""Facts read once serve a whole run: they survive the trip through Ansible's JSON, and a check
plans from them without logging in (drift reads each switch once for all its layers)."""

from __future__ import annotations

import json

import pytest

from racfg.switches.apply import apply_switch
from racfg.switches.facts import LldpNeighbor, PfcFacts, PortFacts, SwitchFacts
from racfg.switches.intent import IntendedPort, IntendedSwitch
from racfg.switches.session import SwitchTarget

FACTS = SwitchFacts(
    name="sw1", platform="eos", version="4.30.1F",
    interfaces={"Ethernet1/1": PortFacts(1500, False, False, 100.0, ""),
                "Ethernet1/2": PortFacts(9000, True, True, None, "stor01 data0")},
    pfc=PfcFacts(True, {"Ethernet1/1": True}, roce=False, lossless_priorities=(3, 4),
                 port_priorities={"Ethernet1/1": (3,), "Ethernet1/2": ()}),
    lldp={"Ethernet1/2": LldpNeighbor("stor01", "data0")}, config_saved=False)
# Nothing listens here (TEST-NET-1): a check that tried to log in would fail.
NOWHERE = SwitchTarget("sw1", "eos", "192.0.2.1", password="unused", timeout=1.0)


def intended() -> IntendedSwitch:
    port = IntendedPort("Ethernet1/1", "dgx01", 9000, None)
    return IntendedSwitch("sw1", "eos", "m", 32, 32, {port.port: port})


def test_facts_survive_a_json_round_trip():
    assert SwitchFacts.from_dict(json.loads(json.dumps(FACTS.to_dict()))) == FACTS


def test_a_check_plans_from_facts_read_earlier_without_logging_in():
    result = apply_switch(NOWHERE, intended(), check=True, facts=SwitchFacts.from_dict(FACTS.to_dict()))
    assert result.changed and result.facts == FACTS
    assert any("mtu 9000" in c for c in result.commands), result.commands
    assert any("no-drop" in c or "priority-flow-control" in c for c in result.commands), result.commands


def test_facts_read_earlier_never_drive_a_change():
    with pytest.raises(ValueError, match="check only"):
        apply_switch(NOWHERE, intended(), check=False, facts=FACTS)
