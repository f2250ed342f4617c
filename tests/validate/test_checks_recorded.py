"""Validators on recorded real tool output: canned probe sections -> expected verdict (ANTA style).

Each row gives a host's rendered variables, the sections its probe would have captured (from
the recordings in fixtures/, copied from shared/device-outputs/hosts unchanged), the check to
run and the status and actual value it must report. The checks run through the same pytest
plugin and collector as `racfg validate`; only the SSH round trip is replaced by the recording.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from racfg.results import Status
from racfg.validate.context import RenderedSite, ValidateContext
from racfg.validate.probe import HostProbe, Section
from racfg.validate.validate_run import ValidateOptions, run_checks

FIXTURES = Path(__file__).parent / "fixtures"
V100S = "nvidia-smi-q-x_8x-Tesla-V100S-PCIE-32GB_driver-460.73.01_datakit.xml"
A100 = "nvidia-smi-q-x_A100-SXM4_dtd-v12_telegraf-testdata.xml"
NVLINK = "nvidia-smi-nvlink--status_DGX-1_V100-SXM2-32GB_EXCERPT-snipped_microway-via-FelixFu520.txt"
IB_4096 = "ibv_devinfo-d_ConnectX-3_mlx4_active_mtu-4096_MOFED-5.0_FelixFu520.txt"
ROCE = "ibv_devinfo_ConnectX-5-MT4119_RoCE-Ethernet_active_mtu-1024_EXCERPT-one-device_DeepEP-issue-60.txt"
OFED = "ofed_info-s_MLNX_OFED_LINUX-5.5-1.0.3.2_openucx-ucx-issue-8772.txt"
CHRONY = "chronyc-tracking_datakit-test.txt"
LSBLK = "lsblk-J-paths-bytes-with-MODEL-SERIAL_Dell-NVMe_gpud-testdata.json"
WEKA_OK = "weka-status_4.2.9-healthy_docs.txt"
WEKA_DEGRADED = "weka-status_3.7.2-degraded-rebuild_docs.txt"
WEKA_DRIVES_INACTIVE = "weka-cluster-drive_4.2-with-INACTIVE-drive_docs.txt"
WEKA_DRIVES_OK = "weka-cluster-drive_4.3.0-elided_docs.txt"
WEKA_FS = "weka-fs_4.x-two-filesystems_docs.txt"
ETHTOOL_I = "ethtool-i_mlx5_core_ConnectX-4-Lx_fw14.23.1020_inbox-driver_isc-projects-ethq-issue-8.txt"
ETHTOOL_40G = "ethtool_Mellanox-ConnectX-3-mlx4_40G_jc-fixture.txt"
ETHTOOL_I_VETH = "ethtool-i_veth_ethtool-6.1.txt"
MISSING = Section(127, "sh: 1: tool: not found")


def rec(name: str, rc: int = 0) -> Section:
    return Section(rc, (FIXTURES / name).read_text(encoding="utf-8"))


def host(role: str, **extra: Any) -> dict[str, Any]:
    nic = {"name": "data0", "address": "198.19.0.11/24", "mtu": 9000, "switch": "sw1", "port": "1/1",
           "speed_gbps": 100.0}
    base = {"ansible_host": "198.18.0.11", "racfg_role": role, "racfg_gpus": 8 if role == "dgx" else 0,
            "racfg_nics": [nic], "racfg_drives": [], "racfg_model": "DGX-1"}
    return {**base, **extra}


GROUP = {"racfg_site": "rec", "racfg_fabric": {"type": "ethernet", "speed_gbps": 100.0}, "racfg_ofed": None,
         "racfg_weka": None, "racfg_nvidia_driver": None, "racfg_tuning": {"profile": "none"}}
IB = {**GROUP, "racfg_fabric": {"type": "infiniband", "speed_gbps": 100.0, "ib_mtu": 4096}}
WEKA = {**GROUP, "racfg_weka": {"dist": "/srv/weka.tar", "filesystem": "default", "clients": "dgx"}}
# /proc/mounts of a Weka client (the wekafs line as Weka's docs show `mount -t wekafs default /mnt/weka`).
WEKA_MOUNTS = ("sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n/dev/sda1 / ext4 rw,relatime 0 0\n"
               "default /mnt/weka wekafs rw,relatime,writecache,inode_bits=auto,dentry_max_age_positive=1000 0 0\n")
TIME = {**GROUP, "racfg_time_sources": ["198.18.0.1"]}
SYSCTL = {**GROUP, "racfg_tuning": {"profile": "none", "sysctl": {"net.ipv4.tcp_mtu_probing": 1}}}
DRIVE = {"path": "/dev/nvme0n1", "model": "Dell DC NVMe ISE 7450", "size": "960G"}

# (id, group vars, host vars, probe sections, check glob, status, actual contains)
# ip -j as iproute2 6.1 prints it on the lab's hosts: data0 up with its address, its connected route
ROUTES = ('[{"dst":"default","gateway":"198.18.0.1","dev":"eth0","flags":[]},{"dst":"198.19.0.0/24","dev":"data0",'
          '"protocol":"kernel","scope":"link","prefsrc":"198.19.0.11","flags":[]}]')
DATAPLANE = {"ip_addr": Section(0, '[{"ifname":"data0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":9000,'
                                   '"addr_info":[{"family":"inet","local":"198.19.0.11","prefixlen":24}]}]'),
             "ip_route": Section(0, ROUTES),
             "ip_neigh": Section(0, '[{"dst":"198.19.0.21","dev":"data0","lladdr":"0e:12:ab:1b:c6:ac",'
                                    '"state":["REACHABLE"]}]')}
CASES = [
    ("gpu count 8 of 8", GROUP, host("dgx"), {"nvidia_smi": rec(V100S)}, "*/gpu/count", Status.PASS, "8"),
    ("gpu count 1 of 8", GROUP, host("dgx"), {"nvidia_smi": rec(A100)}, "*/gpu/count", Status.FAIL, "1"),
    ("gpu driver pin", {**GROUP, "racfg_nvidia_driver": "460"}, host("dgx"), {"nvidia_smi": rec(V100S)},
     "*/gpu/driver_branch", Status.PASS, "460"),
    ("gpu driver, no pin: a reading, not a pass", GROUP, host("dgx"), {"nvidia_smi": rec(V100S)},
     "*/gpu/driver_branch", Status.INFO, "no pin"),
    ("gpu driver other branch", {**GROUP, "racfg_nvidia_driver": "418"}, host("dgx"),
     {"nvidia_smi": rec(A100)}, "*/gpu/driver_branch", Status.FAIL, "535"),
    ("gpu persistence off", GROUP, host("dgx"), {"nvidia_smi": rec(V100S)}, "*/gpu/persistence_mode",
     Status.FAIL, "off on"),
    ("gpu ecc on, no errors", GROUP, host("dgx"), {"nvidia_smi": rec(V100S)}, "*/gpu/ecc", Status.PASS,
     "ECC on"),
    ("gpu nvlink up", GROUP, host("dgx"), {"nvidia_smi": rec(V100S), "nvlink": rec(NVLINK)}, "*/gpu/nvlink",
     Status.PASS, "6 links per GPU"),
    ("no gpu, lab", GROUP, host("dgx", racfg_gpu_required=False), {"nvidia_smi": MISSING}, "*/gpu/count",
     Status.SKIP, None),
    ("no gpu, production", GROUP, host("dgx"), {"nvidia_smi": MISSING}, "*/gpu/count", Status.FAIL,
     "nvidia-smi not found"),
    ("ib mtu 4096", IB, host("dgx"), {"rdma_devices": Section(0, "mlx4_0"), "ibv_devinfo": rec(IB_4096)},
     "*/rdma/ib_mtu", Status.PASS, "4096"),
    ("ib mtu 2048 wanted", {**IB, "racfg_fabric": {**IB["racfg_fabric"], "ib_mtu": 2048}}, host("dgx"),
     {"rdma_devices": Section(0, "mlx4_0"), "ibv_devinfo": rec(IB_4096)}, "*/rdma/ib_mtu", Status.FAIL,
     "4096"),
    ("ib port active", IB, host("dgx"), {"rdma_devices": Section(0, "mlx4_0"), "ibv_devinfo": rec(IB_4096)},
     "*/rdma/ib_ports_active", Status.PASS, "ACTIVE"),
    ("roce only on ib fabric", IB, host("dgx"), {"rdma_devices": Section(0, "mlx5_6"), "ibv_devinfo": rec(ROCE)},
     "*/rdma/ib_ports_active", Status.FAIL, "no InfiniBand port"),
    ("no rdma device", IB, host("dgx"), {"rdma_devices": Section(2, "ls: cannot access")},
     "*/rdma/ib_mtu", Status.SKIP, None),
    ("ofed pin", {**GROUP, "racfg_ofed": {"flavor": "mlnx", "version": "5.5-1.0.3.2"}}, host("dgx"),
     {"ofed_info": rec(OFED)}, "*/rdma/ofed_version", Status.PASS, "5.5-1.0.3.2"),
    ("ofed other release", {**GROUP, "racfg_ofed": {"flavor": "mlnx", "version": "4.5-1.0.1.0"}}, host("dgx"),
     {"ofed_info": rec(OFED)}, "*/rdma/ofed_version", Status.FAIL, "5.5-1.0.3.2"),
    ("ofed missing", {**GROUP, "racfg_ofed": {"flavor": "mlnx", "version": "4.5-1.0.1.0"}}, host("dgx"),
     {"ofed_info": MISSING}, "*/rdma/ofed_version", Status.FAIL, "not installed"),
    ("chrony synchronised", GROUP, host("dgx"), {"chrony_active": Section(0, "active"),
                                                 "chrony_tracking": rec(CHRONY)},
     "*/system/clock_synchronised", Status.PASS, "Normal"),
    ("chrony stopped: the clock cannot be read", GROUP, host("dgx"), {"chrony_active": Section(3, "inactive"),
                                                                      "chrony_tracking": rec(CHRONY)},
     "*/system/clock_synchronised", Status.ERROR, "cannot read: chronyd is not running on h1"),
    ("chrony stopped: the agent is the failure", GROUP, host("dgx"), {"chrony_active": Section(3, "inactive")},
     "*/system/chronyd_running", Status.FAIL, "inactive"),
    ("lldpd stopped: the agent is the failure", GROUP, host("dgx"), {"lldpd_active": Section(3, "inactive")},
     "*/system/lldpd_running", Status.FAIL, "inactive"),
    ("lldpd stopped: LLDP cannot be read", GROUP, host("dgx"), {"lldpd_active": Section(3, "inactive"),
                                                              "lldp": Section(0, '{"lldp": {}}')},
     "*/fabric/lldp_neighbour*", Status.ERROR, "cannot read: lldpd is not running on h1"),
    ("drive present", GROUP, host("storage", racfg_drives=[DRIVE]), {"drive:/dev/nvme0n1": rec(LSBLK)},
     "*/storage/present*", Status.PASS, "/dev/nvme0n1 (disk): Dell DC NVMe ISE 7450 RI U.2 960GB, 960197124096 bytes"),
    ("chrony at the site's sources", TIME, host("dgx"),
     {"chrony_conf": Section(0, "# racfg\nserver 198.18.0.1 iburst\nmakestep 1.0 3\n")},
     "*/system/time_sources", Status.PASS, "198.18.0.1"),
    ("chrony pointed elsewhere: the cause, not the symptom", TIME, host("dgx"),
     {"chrony_conf": Section(0, "server 203.0.113.99 iburst\n! pool 2.debian.pool.org\n")},
     "*/system/time_sources", Status.FAIL, "203.0.113.99"),
    ("chrony with the distribution's pool", TIME, host("dgx"),
     {"chrony_conf": Section(0, "pool 2.debian.pool.org iburst\nsourcedir /run/chrony-dhcp\n")},
     "*/system/time_sources", Status.FAIL, "2.debian.pool.org"),
    ("no site time sources: a reading", GROUP, host("dgx"), {"chrony_conf": Section(0, "pool 2.debian.pool.org\n")},
     "*/system/time_sources", Status.INFO, "2.debian.pool.org"),
    ("lldpd configured as deploy writes it", GROUP, host("dgx"),
     {"lldpd_conf": Section(0, "configure system hostname h1\nconfigure lldp portidsubtype ifname\n")},
     "*/system/lldpd_config", Status.PASS, "system name h1, port id ifname"),
    ("lldpd announcing another name", GROUP, host("dgx"),
     {"lldpd_conf": Section(0, "configure system hostname dgx09\nconfigure lldp portidsubtype ifname\n")},
     "*/system/lldpd_config", Status.FAIL, "system name dgx09"),
    ("lldpd without racfg's configuration", GROUP, host("dgx"), {"lldpd_conf": Section(0, "")},
     "*/system/lldpd_config", Status.FAIL, "port id (none: the MAC address)"),
    ("sysctl set live but not persisted", SYSCTL, host("dgx"), {
        "sysctl_live": Section(0, "net.ipv4.tcp_mtu_probing\trw\t1\n"), "sysctl_file": Section(0, "# racfg\n")},
     "*/tuning/sysctl_persisted*", Status.FAIL, "set live (1) but not persisted: lost at the next boot"),
    ("sysctl file missing", SYSCTL, host("dgx"), {
        "sysctl_live": Section(0, "net.ipv4.tcp_mtu_probing\trw\t1\n"),
        "sysctl_file": Section(1, "cat: /etc/sysctl.d/90-racfg.conf: No such file or directory")},
     "*/tuning/sysctl_persisted*", Status.FAIL, "90-racfg.conf missing"),
    ("sysctl persisted but not live", SYSCTL, host("dgx"), {
        "sysctl_live": Section(0, "net.ipv4.tcp_mtu_probing\trw\t0\n"),
        "sysctl_file": Section(0, "net.ipv4.tcp_mtu_probing = 1\n")},
     "*/tuning/sysctl_live*", Status.FAIL, "persisted as 1 in /etc/sysctl.d/90-racfg.conf but 0 live"),
    ("sysctl live and persisted", SYSCTL, host("dgx"), {
        "sysctl_live": Section(0, "net.ipv4.tcp_mtu_probing\trw\t1\n"),
        "sysctl_file": Section(0, "net.ipv4.tcp_mtu_probing = 1\n")},
     "*/tuning/sysctl_*", Status.PASS, "1"),
    ("drive model", GROUP, host("storage", racfg_drives=[DRIVE]), {"drive:/dev/nvme0n1": rec(LSBLK)},
     "*/storage/model*", Status.PASS, "Dell DC NVMe ISE 7450"),
    ("drive wrong model", GROUP, host("storage", racfg_drives=[{**DRIVE, "model": "Micron 9200"}]),
     {"drive:/dev/nvme0n1": rec(LSBLK)}, "*/storage/model*", Status.FAIL, "Dell"),
    ("drive size", GROUP, host("storage", racfg_drives=[DRIVE]), {"drive:/dev/nvme0n1": rec(LSBLK)},
     "*/storage/size*", Status.PASS, "960197124096"),
    ("drive too small", GROUP, host("storage", racfg_drives=[{**DRIVE, "size": "3.2T"}]),
     {"drive:/dev/nvme0n1": rec(LSBLK)}, "*/storage/size*", Status.FAIL, "960197124096"),
    ("drive gone", GROUP, host("storage", racfg_drives=[DRIVE]), {"drive:/dev/nvme0n1": Section(1, "")},
     "*/storage/count", Status.FAIL, "0"),
    ("weka healthy", WEKA, host("storage"), {"weka_status": rec(WEKA_OK)}, "*/weka/cluster_status",
     Status.PASS, "OK"),
    ("weka degraded", WEKA, host("storage"), {"weka_status": rec(WEKA_DEGRADED)}, "*/weka/cluster_status",
     Status.FAIL, "DEGRADED"),
    ("weka inactive drive", WEKA, host("storage"), {"weka_drives": rec(WEKA_DRIVES_INACTIVE)},
     "*/weka/drives_up", Status.FAIL, "INACTIVE"),
    ("weka drives up", WEKA, host("storage"), {"weka_drives": rec(WEKA_DRIVES_OK)}, "*/weka/drives_up",
     Status.PASS, "ACTIVE"),
    ("weka fs", WEKA, host("storage"), {"weka_fs": rec(WEKA_FS)}, "*/weka/filesystem_present", Status.PASS,
     "default ready"),
    ("weka not installed, no dist", {**WEKA, "racfg_weka": {"filesystem": "default"}}, host("storage"),
     {"weka_status": MISSING}, "*/weka/cluster_status", Status.SKIP, None),
    ("weka not installed, dist given", WEKA, host("storage"), {"weka_status": MISSING},
     "*/weka/cluster_status", Status.FAIL, "weka not found"),
    ("weka mounted", WEKA, host("dgx"), {"weka_status": rec(WEKA_OK), "mounts": Section(0, WEKA_MOUNTS)},
     "*/weka/mounted", Status.PASS, "wekafs at /mnt/weka"),
    ("weka mount hidden by a later tmpfs", WEKA, host("dgx"), {"weka_status": rec(WEKA_OK), "mounts": Section(
        0, WEKA_MOUNTS + "tmpfs /mnt/weka tmpfs rw,relatime 0 0\n")}, "*/weka/mounted", Status.FAIL, "tmpfs"),
    ("weka not mounted", WEKA, host("dgx"), {"weka_status": rec(WEKA_OK), "mounts": Section(
        0, "".join(WEKA_MOUNTS.splitlines(keepends=True)[:2]))}, "*/weka/mounted", Status.FAIL, "not mounted"),
    ("os release pin", {**GROUP, "racfg_os": {"release": "12"}}, host("dgx"),
     {"os_release": Section(0, 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_ID="12"\n')},
     "*/system/os_release", Status.PASS, "Debian GNU/Linux 12"),
    ("os release other", {**GROUP, "racfg_os": {"release": "16.04"}}, host("dgx"),
     {"os_release": Section(0, 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_ID="12"\n')},
     "*/system/os_release", Status.FAIL, "Debian GNU/Linux 12"),
    ("kernel pin", {**GROUP, "racfg_os": {"kernel": "4.4.0"}}, host("dgx"), {"kernel": Section(0, "6.1.0-18-amd64")},
     "*/system/kernel", Status.FAIL, "6.1.0-18-amd64"),
    ("nic firmware recorded", GROUP, host("dgx"), {"ip_addr": Section(0, '[{"ifname": "data0", "mtu": 9000}]'),
                                                   "ethtool_i:data0": rec(ETHTOOL_I)},
     "*/network/driver_firmware*", Status.INFO, None),
    ("nic speed 40G of 100G", GROUP, host("dgx"), {"ip_addr": Section(0, '[{"ifname": "data0", "mtu": 9000}]'),
                                                   "ethtool_i:data0": rec(ETHTOOL_I),
                                                   "ethtool:data0": rec(ETHTOOL_40G)},
     "*/network/speed*", Status.FAIL, "40G"),
    ("nic speed of a veth", GROUP, host("dgx"), {"ip_addr": Section(0, '[{"ifname": "data0", "mtu": 9000}]'),
                                                 "ethtool_i:data0": rec(ETHTOOL_I_VETH)},
     "*/network/speed*", Status.SKIP, None),
    ("nothing overrides the nic's routes", GROUP, host("dgx"), {**DATAPLANE}, "*/network/nothing_overrides*",
     Status.PASS, "as planned"),
    ("a blackhole for a peer's address", GROUP, host("dgx"),
     {**DATAPLANE, "ip_route": Section(0, ROUTES[:-1] + ',{"type":"blackhole","dst":"198.19.0.21","flags":[]}]')},
     "*/network/nothing_overrides*", Status.FAIL, "data0: blackhole 198.19.0.21 overrides 198.19.0.0/24 dev data0"),
    ("a permanent neighbour entry", GROUP, host("dgx"),
     {**DATAPLANE, "ip_neigh": Section(0, '[{"dst":"198.19.0.21","dev":"data0","lladdr":"02:00:de:ad:be:ef",'
                                          '"state":["PERMANENT"]}]')},
     "*/network/nothing_overrides*", Status.FAIL, "static neighbour entry 198.19.0.21 lladdr 02:00:de:ad:be:ef"),
]


def run_one(group: dict[str, Any], hv: dict[str, Any], sections: dict[str, Section], glob: str):
    site = RenderedSite(group_vars=group, hosts={"h1": hv}, switches={})
    ctx = ValidateContext(site, inventory_display="rec.yaml")
    ctx._probes = {"h1": HostProbe("h1", sections=sections)}
    ctx._switch_facts = {}
    return run_checks(ctx, ValidateOptions(checks=[glob]))


@pytest.mark.parametrize(("group", "hv", "sections", "glob", "status", "actual"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_recorded(group, hv, sections, glob, status, actual):
    results = run_one(group, hv, sections, glob)
    assert results, f"no check matched {glob}"
    for result in results:
        assert result.status is status, (result.check, result.status, result.message)
        assert result.target == "h1" and result.check.startswith("h1/")
        if status is Status.SKIP:
            assert result.message, "a skip must say why"
        if actual is not None:
            assert actual in (result.actual or "") + " " + result.message, result
        if status is Status.FAIL:
            assert result.message.startswith("Expected: ") and result.fix
        if status is Status.PASS:
            assert result.expected, f"{result.check}: a pass says what it expected"


def test_unreadable_output_is_an_error_not_a_verdict():
    results = run_one({**GROUP}, host("dgx"), {"nvidia_smi": Section(0, "<nvidia_smi_log><truncated")},
                      "*/gpu/count")
    assert [r.status for r in results] == [Status.ERROR]
    assert "nvidia-smi" in results[0].message


def test_unreachable_host_makes_every_check_an_error():
    site = RenderedSite(group_vars=GROUP, hosts={"h1": host("dgx")}, switches={})
    ctx = ValidateContext(site)
    ctx._probes = {"h1": HostProbe("h1", error="cannot reach h1 over SSH: NoValidConnectionsError",
                                   fix="start the SSH server on h1")}
    ctx._switch_facts = {}
    results = run_checks(ctx, ValidateOptions(categories=["system", "network"]))
    assert results and {r.status for r in results} == {Status.ERROR}
    assert all(r.message == "cannot reach h1 over SSH: NoValidConnectionsError" for r in results)
    assert {r.fix for r in results} == {"start the SSH server on h1"}  # what a person does: the unreadable fix


def test_a_kind_with_nothing_selected_reports_nothing():
    """--limit dgx01 selects no switch: the switch checks are not "skipped", they are not there."""
    site = RenderedSite(group_vars=GROUP, hosts={"h1": host("dgx")}, switches={})
    ctx = ValidateContext(site)
    ctx._probes = {"h1": HostProbe("h1", sections={})}
    ctx._switch_facts = {}
    assert run_checks(ctx, ValidateOptions(categories=["switches"])) == []
