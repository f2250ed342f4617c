"""Environment drift on recorded baselines: each kind of change reads as one sentence."""

from __future__ import annotations

import copy

import pytest

from racfg.drift.environment import compare_debian_versions, host_changes, switch_changes

BASE = {
    "host": "dgx03", "kernel": "6.1.0-18-amd64", "os": "Debian 12", "ofed": None,
    "packages": {"ibverbs-utils": "44.0-2", "chrony": "4.3-2+deb12u1", "perftest": "4.5-1"},
    "nics": {"data0": {"mtu": 9000, "addresses": ["198.19.0.13/24"], "driver": "mlx5_core",
                       "firmware": "16.28.2006"}},
    "drives": [{"name": "nvme0n1", "path": "/dev/nvme0n1", "size": 3200631791616,
                "model": "Micron_9200_MTFDHAL3T2TCU", "serial": "18301C9A1B2C"}],
    "gpu": {"driver": "418.67", "vbios": "88.00.4F.00.09"},
}


def changed(**edits):
    after = copy.deepcopy(BASE)
    for path, value in edits.items():
        node = after
        keys = path.split("__")
        for key in keys[:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is None and isinstance(node, dict):
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = value
    return after


@pytest.mark.parametrize(("after", "sentence"), [
    (changed(kernel="6.1.0-21-amd64"), "dgx03: kernel 6.1.0-18-amd64 -> 6.1.0-21-amd64"),
    (changed(**{"packages__ibverbs-utils": None}), "dgx03: package ibverbs-utils 44.0-2 -> (removed)"),
    (changed(packages__perftest="4.4-1"), "dgx03: package perftest 4.5-1 -> 4.4-1 (downgraded)"),
    (changed(packages__chrony="4.3-2+deb12u2"),
     "dgx03: package chrony 4.3-2+deb12u1 -> 4.3-2+deb12u2 (upgraded)"),
    (changed(packages__nvme_cli="2.4"), "dgx03: package nvme_cli (none) -> 2.4 (installed)"),
    (changed(nics__data0__firmware="16.31.1014"), "dgx03: NIC data0 firmware 16.28.2006 -> 16.31.1014"),
    (changed(nics__data0__mtu=1500), "dgx03: NIC data0 MTU 9000 -> 1500"),
    (changed(drives__0__serial="19111D0E0F01"),
     "dgx03: drive /dev/nvme0n1 serial 18301C9A1B2C -> 19111D0E0F01 (replaced?)"),
    (changed(drives=[]), "dgx03: drive /dev/nvme0n1 Micron_9200_MTFDHAL3T2TCU 18301C9A1B2C 3200631791616 -> "
                         "(removed) (missing)"),
    (changed(gpu__driver="535.104.05"), "dgx03: GPU driver 418.67 -> 535.104.05"),
    (changed(ofed="MLNX_OFED_LINUX-4.5-1.0.1.0"),
     "dgx03: OFED (ofed_info -s) (none) -> MLNX_OFED_LINUX-4.5-1.0.1.0"),
])
def test_one_change_one_sentence(after, sentence):
    changes = host_changes("dgx03", BASE, after)
    assert [c.sentence() for c in changes] == [sentence]


def test_no_change_no_drift():
    assert host_changes("dgx03", BASE, copy.deepcopy(BASE)) == []


def test_old_baselines_with_mtu_only_nics_still_compare():
    before = {**BASE, "nics": {"data0": 9000}}
    after = {**BASE, "nics": {"data0": 1500}}
    assert [c.sentence() for c in host_changes("dgx03", before, after)] == ["dgx03: NIC data0 MTU 9000 -> 1500"]


def test_the_data_plane_on_a_nic_reads_as_its_changes_since_the_baseline():
    """A NIC set down, a blackhole route into its subnet, a permanent neighbour entry: each a change of
    the NIC (racfg_probe's nic_facts records them), repaired by deploying the host."""
    plane = {"admin": "up", "routes": ["198.19.0.0/24 dev data0"], "neighbours": []}
    before = {**BASE, "nics": {"data0": {**BASE["nics"]["data0"], **plane}}}
    after = copy.deepcopy(before)
    after["nics"]["data0"].update(admin="down", routes=["198.19.0.0/24 dev data0", "blackhole 198.19.0.21"],
                                  neighbours=["198.19.0.21 lladdr 02:00:de:ad:be:ef dev data0"])
    assert [c.sentence() for c in host_changes("dgx03", before, after)] == [
        "dgx03: NIC data0 admin state up -> down",
        "dgx03: NIC data0 routes 198.19.0.0/24 dev data0 -> 198.19.0.0/24 dev data0, blackhole 198.19.0.21",
        "dgx03: NIC data0 static neighbour entries (none) -> 198.19.0.21 lladdr 02:00:de:ad:be:ef dev data0"]
    assert all(c.repair == "" and c.by_hand() is None for c in host_changes("dgx03", before, after))


def test_switch_port_and_pfc_changes():
    before = {"version": "3.6.8190", "interfaces": {"1/1": {"mtu": 9000, "admin_up": True, "speed_gbps": 100.0,
                                                           "description": "dgx01:data0"}},
              "pfc": {"enabled": False, "ports": {}, "roce": False, "lossless_priorities": []}}
    after = copy.deepcopy(before)
    after["interfaces"]["1/1"]["mtu"] = 1500
    after["pfc"]["ports"]["1/1"] = True
    after["version"] = "3.9.1014"
    assert [c.sentence() for c in switch_changes("sw1", before, after)] == [
        "sw1: OS version 3.6.8190 -> 3.9.1014", "sw1: port 1/1 MTU 9000 -> 1500", "sw1: port 1/1 PFC False -> True"]


@pytest.mark.parametrize(("a", "b", "order"), [
    ("44.0-2", "44.0-2", 0), ("44.0-2", "43.0-3", 1), ("1.0~rc1", "1.0", -1), ("1:1.0", "2.0", 1),
    ("2.30-1", "2.4-1", 1), ("4.3-2+deb12u1", "4.3-2+deb12u2", -1), ("1.0a", "1.0", 1),
])
def test_debian_version_order(a, b, order):
    assert compare_debian_versions(a, b) == order


def test_a_version_change_is_repaired_by_hand_other_changes_by_deploy():
    """The roles install missing packages only: a downgrade stays through a deploy, so its fix says how to
    put the baseline version back."""
    down = host_changes("dgx03", BASE, changed(packages__perftest="4.4-1"))[0]
    assert down.by_hand() == "on dgx03: apt-get install perftest=4.5-1"
    removed = host_changes("dgx03", BASE, changed(**{"packages__ibverbs-utils": None}))[0]
    mtu = host_changes("dgx03", BASE, changed(nics__data0__mtu=1500))[0]
    assert removed.by_hand() is None and mtu.by_hand() is None
