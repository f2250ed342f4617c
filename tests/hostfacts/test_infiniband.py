"""ibv_devinfo on ConnectX-3 (InfiniBand) and ConnectX-5 (RoCE) recordings."""

from __future__ import annotations

import pytest

from racfg.hostfacts.infiniband import IbPort, parse_ibv_devinfo


@pytest.mark.parametrize(
    ("parser", "fixture", "expected_ports", "ca_type", "firmware"),
    [
        (parse_ibv_devinfo, "ibv_devinfo-d_ConnectX-3_mlx4_active_mtu-4096_MOFED-5.0_FelixFu520.txt", [
            IbPort("mlx4_0", 1, "ACTIVE", None, None, 4096, "InfiniBand"),
        ], "MT4099", "2.42.5000"),
        (parse_ibv_devinfo,
         "ibv_devinfo_ConnectX-5-MT4119_RoCE-Ethernet_active_mtu-1024_EXCERPT-one-device_DeepEP-issue-60.txt", [
             IbPort("mlx5_6", 1, "ACTIVE", None, None, 1024, "Ethernet"),
         ], "MT4119", "16.32.1010"),
    ],
)
def test_ports(read, parser, fixture, expected_ports, ca_type, firmware):
    devices = parser(read(fixture))
    assert [port for device in devices for port in device.ports] == expected_ports
    assert devices[0].ca_type == ca_type
    if firmware is not None:
        assert devices[0].firmware == firmware

