"""Every parser refuses what it cannot read with a ParseError naming the tool, never partial facts."""

from __future__ import annotations

import pytest

from racfg.errors import ExitCode
from racfg.hostfacts import ParseError
from racfg.hostfacts.chrony import parse_chronyc_tracking
from racfg.hostfacts.ethtool import parse_driver_info, parse_link_settings
from racfg.hostfacts.infiniband import parse_ibv_devinfo
from racfg.hostfacts.ip import parse_ip_json
from racfg.hostfacts.lldp import parse_lldp_neighbors
from racfg.hostfacts.nvidia_smi import parse_nvlink_status, parse_query_xml
from racfg.hostfacts.nvme import parse_lsblk_json
from racfg.hostfacts.ofed import parse_ofed_info_s
from racfg.hostfacts.weka import parse_cluster_containers, parse_cluster_drives, parse_fs, parse_status

from .conftest import read_fixture

NOT_FOUND = "bash: line 1: {}: command not found\n"
ALL = [
    (parse_query_xml, "nvidia-smi"), (parse_nvlink_status, "nvidia-smi"), (parse_ibv_devinfo, "ibv_devinfo"),
    (parse_ofed_info_s, "ofed_info"), (parse_driver_info, "ethtool"), (parse_link_settings, "ethtool"),
    (parse_lsblk_json, "lsblk"), (parse_chronyc_tracking, "chronyc tracking"), (parse_status, "weka"),
    (parse_cluster_containers, "weka"), (parse_cluster_drives, "weka"), (parse_fs, "weka"),
    (parse_ip_json, "ip"), (parse_lldp_neighbors, "lldpcli"),
]


@pytest.mark.parametrize(("parser", "tool"), ALL, ids=[p.__name__ for p, _ in ALL])
@pytest.mark.parametrize("text", ["", "\r\n  \n", NOT_FOUND.format("tool")], ids=["empty", "blank", "not-found"])
def test_unreadable_output(parser, tool, text):
    with pytest.raises(ParseError) as caught:
        parser(text)
    assert caught.value.tool == tool
    assert str(caught.value).startswith(f"{tool}: ")
    assert caught.value.exit_code == ExitCode.CANNOT_RUN  # "could not check", not "the cluster is wrong"


@pytest.mark.parametrize(
    ("parser", "text", "reason"),
    [
        # Cut-off captures of real recordings.
        (parse_query_xml, read_fixture("nvidia-smi-q-x_Tesla-T4_telegraf-testdata.xml")[:3000], "not XML"),
        (parse_lsblk_json, read_fixture("lsblk-J-paths-bytes-with-MODEL-SERIAL_Dell-NVMe_gpud-testdata.json")[:300],
         "not valid JSON"),
        (parse_lldp_neighbors, read_fixture("lldpcli-json-show-neighbors_two-neighbours_lldpd-1.0.16.json")[:500],
         "not valid JSON"),
        # What the tools print when the thing is missing.
        (parse_query_xml, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", "not XML"),
        (parse_nvlink_status, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
         "unexpected line"),
        (parse_ibv_devinfo, "No IB devices found", "unexpected line"),
        (parse_chronyc_tracking, "506 Cannot talk to daemon", "no Reference ID"),
        (parse_link_settings, "netlink error: no device matches name (offset 24)", "expected 'Settings for"),
        (parse_status, "error: Failed connecting to http://127.0.0.1:14000/api/v1. Make sure weka is running",
         "no 'cluster"),
        (parse_ofed_info_s, "rdma-core-55mlnx37", "no MLNX_OFED_LINUX"),
        # The wrong command's output given to a parser.
        (parse_cluster_drives, read_fixture("weka-local-ps_4.3.2-with-dataserv_docs.txt"), "expected DISK ID"),
        (parse_lsblk_json, read_fixture("nvme-list-o-json_empty_netdata-testdata.json"), "no 'blockdevices'"),
        (parse_ip_json, read_fixture("lldpcli-json-show-neighbors_none_lldpd-1.0.16.json"), "expected a JSON list"),
    ],
)
def test_broken_or_wrong_output(parser, text, reason):
    with pytest.raises(ParseError, match=reason):
        parser(text)
