"""Parsers on real recorded device output (tests/switches/fixtures, from ../shared/device-outputs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from racfg.switches import PortFacts, get_driver
from racfg.switches.parsers import eos_json, mlnxos_ib, onyx
from racfg.switches.ports import canonical_port, device_port

FIX = Path(__file__).parent / "fixtures"


def read(name: str) -> str:
    return (FIX / name).read_text()


@pytest.mark.parametrize(
    ("parser", "fixture", "expected"),
    [
        (onyx.parse_interfaces, "onyx/onyx_interfaces_show.txt",
         {"1/1": PortFacts(1500, True, False, 40.0, "")}),
        (onyx.parse_interfaces, "onyx/onyx_facts_show_interfaces_ethernet.txt",
         {"1/1": PortFacts(1500, True, False, 100.0, ""), "1/2": PortFacts(1500, True, False, 100.0, "")}),
        (eos_json.parse_interfaces, "eos/show_interfaces.json", {
            "Ethernet1": PortFacts(9214, True, True, None, ""), "Ethernet2": PortFacts(9214, True, True, None, ""),
            "Ethernet3": PortFacts(9214, True, True, None, ""), "Ethernet4": PortFacts(9214, True, True, None, ""),
            "Ethernet5": PortFacts(9214, True, True, 0.0025, ""),
        }),
    ],
)
def test_interfaces(parser, fixture, expected):
    assert parser(read(fixture)) == expected


def test_pfc_onyx_per_port_tables():
    on = onyx.parse_pfc(read("onyx/onyx_pfc_interface_enabled.txt"))
    off = onyx.parse_pfc(read("onyx/onyx_pfc_interface_disabled.txt"))
    assert on.ports == {"1/1": True, "1/1/2": True} and on.any_enabled
    assert off.ports == {"1/1": False, "1/1/2": False} and not off.any_enabled


def test_pfc_onyx_three_tables_and_table2_forms():
    per_port = '{"Eth1/3": [{"PFC admin": "on", "PFC oper": "Enabled"}]}'
    new = f'[{{"PFC": "enabled", "Priority Enabled List": "3 4"}}, {{}}, {per_port}]'
    old = f'{{"Table 1": {{"PFC": "disabled"}}, "Table 2": {per_port}}}'
    facts = onyx.parse_pfc(new, "##\n   roce\n")
    assert facts.enabled and facts.lossless_priorities == (3, 4) and facts.ports == {"1/3": True} and facts.roce
    assert not onyx.parse_pfc(old).enabled and onyx.parse_pfc(old).ports == {"1/3": True}


@pytest.mark.parametrize(("parser", "fixture", "version"), [
    (onyx.parse_version, "onyx/onyx_facts_show_version.txt", "3.6.5000"),
    (eos_json.parse_version, "eos/show_version.json", "4.30.0F-31408673.4300F (engineering build)"),
])
def test_version(parser, fixture, version):
    assert parser(read(fixture)) == version


def test_lldp():
    neighbors = eos_json.parse_lldp(read("eos/show_lldp_neighbors.json"))
    assert neighbors["Ethernet1"].system_name == "precise64" and neighbors["Ethernet2"].port == "0800.27ca.c5be"
    # `show lldp` and `show lldp interfaces` carry no neighbors: parsed, empty
    assert onyx.parse_lldp(read("onyx/onyx_lldp_show.txt")) == {}
    assert onyx.parse_lldp(read("onyx/onyx_lldp_interface_show.txt")) == {}
    remote = '{"Eth1/1/2": [{"Remote system name": "dgx01", "Remote port-id": "data0"}]}'
    assert onyx.parse_lldp(remote)["1/1/2"].system_name == "dgx01"


def test_status_and_rates():
    assert onyx.parse_status(read("onyx/onyx_interfaces_status.txt")) == {"1/1": (False, 100.0)}
    assert onyx.parse_rates(read("onyx/onyx_interfaces_rates.txt"))["1/1"]["ingress_bps"] == 9000.0


def test_ib_text():
    raw = ("IB1/1 state:\n    Admin state : Enabled\n    Logical port state : Active\n"
           "    Physical port state : LinkUp\n    Current line rate : 100.0 Gbps\n    MTU : 4096\n"
           "    Description : dgx01:ib0\n\nIB1/2 state:\n    Admin state : Disabled\n"
           "    Physical port state : Polling\n    MTU : 2K\n    Description : N/A\n")
    assert mlnxos_ib.parse_interfaces(raw) == {"1/1": PortFacts(4096, True, True, 100.0, "dgx01:ib0"),
                                               "1/2": PortFacts(2048, False, False, None, "")}
    assert mlnxos_ib.parse_version("Product name: MLNX-OS\nProduct release:   3.6.8010\n") == "3.6.8010"


@pytest.mark.parametrize(("platform", "device", "canonical", "short"), [
    ("onyx", "Eth1/1", "1/1", "Eth1/1"), ("onyx", "Eth1/1/2", "1/1/2", "Eth1/1/2"),
    ("mlnxos-ib", "IB1/7", "1/7", "IB1/7"), ("eos", "Et1", "Ethernet1", "Et1"),
    ("eos", "Ethernet3/1", "Ethernet3/1", "Et3/1"), ("eos", "Et3/1/2", "Ethernet3/1/2", "Et3/1/2"),
])
def test_port_names_both_ways(platform, device, canonical, short):
    assert canonical_port(platform, device) == canonical
    assert device_port(platform, canonical, short=True) == short
    assert canonical_port(platform, "Vlan 10") is None and canonical_port(platform, "Po1") is None


def test_every_driver_has_the_same_shape():
    for platform in ("onyx", "eos", "mlnxos-ib"):
        driver = get_driver(platform)
        assert {"interfaces", "version"} <= set(driver.show) and driver.device_type and driver.save_command
