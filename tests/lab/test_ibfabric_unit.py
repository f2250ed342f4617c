"""The lab's routed stand-in for an InfiniBand two-tier site, without a lab: when it applies, the line it
prints, and what it plans (racfg_lab.ibfabric). tests/lab/test_leafspine_site_lab.py builds it."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from racfg.inventory import load_cluster
from racfg_lab import ibfabric
from racfg_lab.substitutions import IB_TWO_TIER_LINE, IPOIB_REASON, IPOIB_UNAVAILABLE, inventory_substitutions

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
IB_TWO_TIER = HERE / "ibleafspine.yaml"


def test_an_infiniband_two_tier_site_is_printed_as_routed_ethernet_with_the_ib_nic_stand_ins():
    subs = inventory_substitutions(load_cluster(IB_TWO_TIER))
    assert IB_TWO_TIER_LINE in subs.lines and "-> routed Ethernet" in IB_TWO_TIER_LINE
    assert any(line.startswith("InfiniBand NICs -> Ethernet stand-ins") for line in subs.lines)
    assert subs.host_vars[IPOIB_UNAVAILABLE] == IPOIB_REASON


def test_single_switch_infiniband_and_ethernet_leaf_spine_need_no_stand_in():
    for name in ("ra-infiniband.yaml", "ra-leafspine.yaml", "ra-leafspine-eos.yaml", "ra-ethernet.yaml"):
        cluster = load_cluster(REPO / "inventory" / name)
        assert not ibfabric.stands_in(cluster), name
        assert IB_TWO_TIER_LINE not in inventory_substitutions(cluster).lines, name


def test_the_plan_routes_every_leaf_over_every_spine_and_announces_each_host():
    cluster = load_cluster(IB_TWO_TIER)
    plans = ibfabric.plan(cluster)
    leaf1, leaf2, spine1, spine2 = (plans[f"lsib-{n}"] for n in ("leaf1", "leaf2", "spine1", "spine2"))
    assert (leaf1.asn, leaf2.asn, spine1.asn, spine2.asn) == (65101, 65102, 65100, 65100)
    # one /31 per ISL from the lab's pool, spine even and leaf odd, each end on its port's veth
    assert leaf1.isl_addresses == {"swp35": "10.254.0.1/31", "swp36": "10.254.0.3/31"}
    assert spine1.isl_addresses == {"swp1": "10.254.0.0/31", "swp2": "10.254.0.4/31"}
    assert spine2.isl_addresses == {"swp1": "10.254.0.2/31", "swp2": "10.254.0.6/31"}
    assert leaf1.neighbors == {"10.254.0.0": 65100, "10.254.0.2": 65100}
    assert spine2.neighbors == {"10.254.0.3": 65101, "10.254.0.7": 65102}
    assert leaf1.host_routes == ["198.19.94.11/32", "198.19.94.21/32"]
    assert leaf2.host_routes == ["198.19.94.12/32", "198.19.94.22/32"]
    assert spine1.host_routes == [] and spine1.gateways == []
    # the leaf's own address in the hosts' subnet is one no host has (the source of its ARP requests)
    hosts = {ipaddress.ip_interface(n.address).ip for h in cluster.hosts for n in h.nics}
    assert leaf1.gateways == ["198.19.94.254/24"] and ipaddress.ip_interface(leaf1.gateways[0]).ip not in hosts
    config = leaf1.bgpd_config("lsib-leaf1")
    for line in ("router bgp 65101", " bgp router-id 198.18.94.2", " neighbor 10.254.0.0 remote-as 65100",
                 " neighbor 10.254.0.2 remote-as 65100", "  network 198.19.94.11/32", "  maximum-paths 2"):
        assert line in config.splitlines(), (line, config)


def test_a_leaf_address_skips_addresses_hosts_use():
    network = ipaddress.IPv4Network("198.19.94.0/29")
    used = {ipaddress.IPv4Address("198.19.94.6"), ipaddress.IPv4Address("198.19.94.5")}
    assert str(ibfabric._free_address(network, used)) == "198.19.94.4"
