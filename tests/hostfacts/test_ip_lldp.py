"""ip -j link/addr (IPoIB recording, lab veth recordings) and lldpcli -f json (lldpd 1.0.16 recordings)."""

from __future__ import annotations

import pytest

from racfg.hostfacts.ip import parse_ip_json
from racfg.hostfacts.lldp import LldpNeighbour, parse_lldp_neighbors

IPOIB = "ip-json-link-show_8x-IB-ipoib-ConnectX_EXCERPT-ib-only_facebookresearch-gcm.json"
LINKS = "ip-j-link-show_veth-mtu9000-nocarrier_iproute2-6.1.json"
ADDRS = "ip-j-addr-show_veth-mtu9000-ipv4-ipv6-nocarrier_iproute2-6.1.json"


@pytest.mark.parametrize(
    ("fixture", "name", "mtu", "operstate", "carrier", "link_type", "ipv4"),
    [
        (IPOIB, "ibp12s0", 2044, "UP", True, "infiniband", ()),
        (LINKS, "data0", 9000, "UP", True, "ether", ()),
        (LINKS, "data2", 1500, "LOWERLAYERDOWN", False, "ether", ()),  # admin up, peer down: NO-CARRIER
        (ADDRS, "data0", 9000, "UP", True, "ether", ("198.18.100.11/24",)),
        (ADDRS, "data1", 9000, "UP", True, "ether", ("198.18.101.11/24",)),
        (ADDRS, "data2", 1500, "LOWERLAYERDOWN", False, "ether", ("198.18.102.11/24",)),
        (ADDRS, "lo", 65536, "UNKNOWN", True, "loopback", ("127.0.0.1/8",)),
    ],
)
def test_ip_json(read, fixture, name, mtu, operstate, carrier, link_type, ipv4):
    interface = parse_ip_json(read(fixture))[name]
    assert (interface.mtu, interface.operstate, interface.carrier, interface.link_type, interface.ipv4) == (
        mtu, operstate, carrier, link_type, ipv4)
    assert interface.admin_up


def test_ip_json_ipoib_host_lists_eight_ib_interfaces(read):
    interfaces = parse_ip_json(read(IPOIB))
    assert len(interfaces) == 8 and all(i.ipoib for i in interfaces.values())


def test_ip_addr_has_ipv6_link_local(read):
    addresses = parse_ip_json(read(ADDRS))["data0"].addresses
    assert len(addresses) == 2 and addresses[1].startswith("fe80::") and addresses[1].endswith("/64")


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("lldpcli-json-show-neighbors_none_lldpd-1.0.16.json", {}),
        ("lldpcli-json-show-neighbors_one-neighbour_lldpd-1.0.16.json", {  # "interface" is an object
            "data0": ("leaf01", "swp1", "dgx01 data0")}),
        ("lldpcli-json-show-neighbors_two-neighbours_lldpd-1.0.16.json", {  # "interface" is a list
            "data0": ("leaf01", "swp1", "dgx01 data0"), "data1": ("leaf02", "Ethernet9_1", "dgx01 data1")}),
    ],
)
def test_lldp_neighbors(read, fixture, expected):
    neighbours = parse_lldp_neighbors(read(fixture))
    assert {local: [(n.system_name, n.port_id, n.port_description) for n in found]
            for local, found in neighbours.items()} == {local: [value] for local, value in expected.items()}
    for found in neighbours.values():
        assert all(isinstance(n, LldpNeighbour) and n.chassis_id for n in found)
