"""ibstat, ibstatus, ibv_devinfo, ibv_devices on ConnectX-3/5 and A100-host recordings, normalised alike."""

from __future__ import annotations

import pytest

from racfg.hostfacts.infiniband import IbPort, parse_ibstat, parse_ibstatus, parse_ibv_devices, parse_ibv_devinfo

CX5 = "ibstat_4x-ConnectX-5-MT4119_2-EDR-active_2-down_MOFED-5.5_openucx-ucx-issue-8772.txt"


@pytest.mark.parametrize(
    ("parser", "fixture", "expected_ports", "ca_type", "firmware"),
    [
        (parse_ibstat, CX5, [
            IbPort("mlx5_0", 1, "ACTIVE", "LinkUp", 100.0, None, "InfiniBand"),
            IbPort("mlx5_1", 1, "ACTIVE", "LinkUp", 100.0, None, "InfiniBand"),
            IbPort("mlx5_2", 1, "DOWN", "Disabled", 10.0, None, "InfiniBand"),
            IbPort("mlx5_3", 1, "DOWN", "Disabled", 10.0, None, "InfiniBand"),
        ], "MT4119", "16.32.1010"),
        (parse_ibstat, "ibstat_ConnectX-3_mlx4_FDR10-Rate-40-suffix_MOFED-5.0_FelixFu520.txt", [
            IbPort("mlx4_0", 1, "ACTIVE", "LinkUp", 40.0, None, "InfiniBand"),  # "Rate: 40 (FDR10)"
        ], "MT4099", "2.42.5000"),
        (parse_ibstat, "ibstat_mixed-RoCE+HDR-IB_A100-host_gpud-testdata.txt", [
            IbPort("mlx5_0", 1, "ACTIVE", "LinkUp", 200.0, None, "Ethernet"),
            *[IbPort(f"mlx5_{n}", 1, "ACTIVE", "LinkUp", 200.0, None, "InfiniBand") for n in range(1, 9)],
        ], "MT4126", None),
        (parse_ibstatus, "ibstatus_8x-HDR200-IB_A100-host_gpud-testdata.txt", [
            *[IbPort(f"mlx5_{n}", 1, "ACTIVE", "LinkUp", 200.0, None, "InfiniBand") for n in range(8)],
            IbPort("mlx5_8", 1, "ACTIVE", "LinkUp", 40.0, None, "Ethernet"),
        ], None, None),
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


def test_ibstat_tabs_spaces_and_crlf_read_the_same(read):
    spaces = parse_ibstat(read(CX5))  # published with 8/16 spaces where ibstat prints tabs
    tabs_crlf = read(CX5).replace("                ", "\t\t").replace("        ", "\t").replace("\n", "\r\n")
    assert parse_ibstat(tabs_crlf) == spaces
    assert [port.active for device in spaces for port in device.ports] == [True, True, False, False]


def test_ibv_devices(read):
    assert parse_ibv_devices(read("ibv_devices_ConnectX-3_mlx4_FelixFu520.txt")) == {"mlx4_0": "0002c90300ea9940"}
