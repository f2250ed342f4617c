"""ethtool -i, ethtool IFACE and ethtool -m on mlx5/mlx4 recordings and lab veth/bridge recordings."""

from __future__ import annotations

import pytest

from racfg.hostfacts.ethtool import DriverInfo, parse_driver_info, parse_link_settings


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("ethtool-i_mlx5_core_ConnectX-4-Lx_fw14.23.1020_inbox-driver_isc-projects-ethq-issue-8.txt",
         DriverInfo("mlx5_core", "3.0-1 (January 2015)", "14.23.1020", "0000:af:00.0")),
        ("ethtool-i_veth_ethtool-6.1.txt", DriverInfo("veth", "1.0", None, None)),
    ],
)
def test_driver_info(read, fixture, expected):
    assert parse_driver_info(read(fixture)) == expected


@pytest.mark.parametrize(
    ("fixture", "interface", "speed_mbps", "duplex", "link"),
    [
        ("ethtool_Mellanox-ConnectX-3-mlx4_40G_jc-fixture.txt", "enp1s0", 40000, "Full", True),
        ("ethtool_veth-10000Mbs-link-up_ethtool-6.1.txt", "data0", 10000, "Full", True),
        ("ethtool_bridge-no-ports_Unknown-speed-no-link_ethtool-6.1.txt", "br0", None, None, False),
    ],
)
def test_link_settings(read, fixture, interface, speed_mbps, duplex, link):
    settings = parse_link_settings(read(fixture))
    assert (settings.interface, settings.speed_mbps, settings.duplex, settings.link_detected) == (
        interface, speed_mbps, duplex, link)


def test_link_settings_gbps(read):
    assert parse_link_settings(read("ethtool_Mellanox-ConnectX-3-mlx4_40G_jc-fixture.txt")).speed_gbps == 40.0
