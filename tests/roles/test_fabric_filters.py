"""The fabric role's decisions (roles/fabric/filter_plugins/fabric.py) on a real ``ip -j addr show``
recording (tests/hostfacts/fixtures: data0/data1 at MTU 9000 with IPv4 and IPv6, data2 at 1500,
dead0 without an address): as tables of the inventory's NICs and what the role must conclude."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fabric_filters", ROOT / "roles/fabric/filter_plugins/fabric.py")
fabric = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fabric)

LINKS = json.loads((ROOT / "tests/hostfacts/fixtures/ip-j-addr-show_veth-mtu9000-ipv4-ipv6-nocarrier_iproute2-6.1.json")
                   .read_text())
NAMES = [link["ifname"] for link in LINKS]


def nic(name: str, address: str, mtu: int = 9000) -> dict[str, object]:
    return {"name": name, "address": address, "mtu": mtu}


def test_the_filters_are_registered_under_their_role_prefix():
    assert set(fabric.FilterModule().filters()) == {"fabric_mgmt_ifaces", "fabric_live_drift",
                                                     "fabric_nic_refusals", "fabric_nic_mismatches"}


@pytest.mark.parametrize(("address", "expected"), [
    ("198.18.101.11", ["data1"]),
    ("127.0.0.1", ["lo"]),
    ("198.18.9.9", []),
])
def test_management_interface_is_the_one_carrying_the_address(address, expected):
    assert fabric.mgmt_ifaces(LINKS, address) == expected


@pytest.mark.parametrize(("nics", "drifted"), [
    ([nic("data0", "198.18.100.11/24")], []),                      # as the inventory says
    ([nic("data0", "198.18.100.11/16")], []),                      # live drift compares the address, not the prefix
    ([nic("data0", "198.18.100.11/24", 1500)], ["data0"]),          # MTU changed by hand
    ([nic("data2", "198.18.102.29/24", 1500)], ["data2"]),          # address moved
    ([nic("nosuch0", "198.18.7.1/24")], []),                       # absent: the guard refuses it, not drift
    ([nic("data0", "198.18.100.11/24"), nic("data2", "198.18.102.11/24")], ["data2"]),  # data2 is at 1500
])
def test_live_drift_names_the_data_nics_whose_mtu_or_address_changed(nics, drifted):
    assert fabric.live_drift(nics, LINKS) == drifted


@pytest.mark.parametrize(("nics", "mgmt_address", "refusals"), [
    ([nic("data0", "198.18.100.11/24")], "198.18.0.11", []),
    ([nic("nosuch0", "198.18.7.1/24")], "198.18.0.11",
     [f"data NIC nosuch0: not present on this host (links: {', '.join(NAMES)})"]),
    ([nic("data1", "198.18.101.11/24")], "198.18.101.11",
     ["data NIC data1: carries the management address 198.18.101.11; refusing to touch it"]),
    ([nic("data0", "198.18.0.11/24")], "198.18.0.11",  # the inventory gives a data NIC the management address
     ["data NIC data0: carries the management address 198.18.0.11; refusing to touch it"]),
])
def test_refusals_name_every_nic_the_role_must_not_touch(nics, mgmt_address, refusals):
    assert fabric.nic_refusals(nics, NAMES, fabric.mgmt_ifaces(LINKS, mgmt_address), mgmt_address) == refusals


@pytest.mark.parametrize(("nics", "mismatches"), [
    ([nic("data0", "198.18.100.11/24"), nic("data1", "198.18.101.11/24")], []),
    ([nic("data0", "198.18.100.11/16")],
     ["data0: Expected: MTU 9000, 198.18.100.11/16 Actual: MTU 9000, 198.18.100.11/24"]),
    ([nic("data2", "198.18.102.11/24")],
     ["data2: Expected: MTU 9000, 198.18.102.11/24 Actual: MTU 1500, 198.18.102.11/24"]),
    ([nic("dead0", "198.18.103.11/24", 1500)], ["dead0: Expected: MTU 1500, 198.18.103.11/24 Actual: MTU 1500, "
                                                "no IPv4 address"]),
    ([nic("nosuch0", "198.18.7.1/24")], ["nosuch0: Expected: MTU 9000, 198.18.7.1/24 Actual: no such link"]),
])
def test_postcondition_lists_each_nic_not_as_the_inventory_says(nics, mismatches):
    assert fabric.nic_mismatches(nics, LINKS) == mismatches
