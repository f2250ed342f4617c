"""The weka role's command plan (roles/weka/filter_plugins/weka_plan.py) from canned CLI JSON."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("weka_plan", ROOT / "roles/weka/filter_plugins/weka_plan.py")
weka_plan = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(weka_plan)

SPEC = {
    "cluster_name": "lab",
    "filesystem": "default",
    "fs_group": "default",
    "fs_capacity": None,
    "net_add": True,
    "backends": [
        {"name": "stor01", "ip": "198.19.0.21", "nics": [{"name": "data0", "address": "198.19.0.21/24"}],
         "drives": ["/dev/nvme0n1", "/dev/nvme1n1"]},
        {"name": "stor02", "ip": "198.19.0.22", "nics": [{"name": "data0", "address": "198.19.0.22/24"}],
         "drives": ["/dev/nvme0n1", "/dev/nvme1n1"]},
    ],
}

HOSTS = [
    {"host_id": "HostId<0>", "hostname": "stor01", "mode": "backend", "status": "UP"},
    {"host_id": "HostId<1>", "hostname": "stor02", "mode": "backend", "status": "UP"},
    {"host_id": "HostId<2>", "hostname": "dgx01", "mode": "client", "status": "UP"},
]
NETS = [{"host_id": "HostId<0>", "name": "data0"}, {"host_id": "HostId<1>", "name": "data0"}]
DRIVES = [
    {"host_id": "HostId<0>", "device_path": "/dev/nvme0n1", "status": "ACTIVE"},
    {"host_id": "HostId<0>", "device_path": "/dev/nvme1n1", "status": "ACTIVE"},
    {"host_id": "HostId<1>", "device_path": "/dev/nvme0n1", "status": "ACTIVE"},
    {"host_id": "HostId<1>", "device_path": "/dev/nvme1n1", "status": "ACTIVE"},
]
RUNNING = {"name": "lab", "status": "OK", "io_status": "STARTED",
           "capacity": {"total_bytes": 4 * 2**30, "unprovisioned_bytes": 0}}


def argvs(plan):
    return [" ".join(step["argv"]) for step in plan["steps"]]


def test_fresh_hosts_in_stem_mode_form_the_cluster_first():
    for status in (None, {}, {"status": "STEM"}):
        plan = weka_plan.weka_backend_plan({"status": status}, SPEC)
        assert argvs(plan) == ["weka cluster create stor01 stor02 --host-ips 198.19.0.21,198.19.0.22"]
        assert plan["complete"] is False  # host ids come from the next round's state


def test_formed_cluster_without_drives_gets_nets_drives_apply_name_io_and_filesystem():
    state = {
        "status": {"name": "weka-cluster", "status": "OK", "io_status": "STOPPED",
                   "capacity": {"unprovisioned_bytes": 3 * 2**30 + 5}},
        "hosts": HOSTS, "nets": [], "drives": [], "fs_groups": [], "filesystems": [],
    }
    plan = weka_plan.weka_backend_plan(state, SPEC)
    assert plan["complete"] is True
    assert argvs(plan) == [
        "weka cluster host net add 0 data0 --ips 198.19.0.21 --netmask 24",
        "weka cluster drive add 0 /dev/nvme0n1 /dev/nvme1n1",
        "weka cluster host net add 1 data0 --ips 198.19.0.22 --netmask 24",
        "weka cluster drive add 1 /dev/nvme0n1 /dev/nvme1n1",
        "weka cluster host apply --all --force",
        "weka cluster update --cluster-name lab",
        "weka cluster start-io",
        "weka fs group create default",
        "weka fs create default default 3GiB",
    ]


def test_partially_formed_cluster_plans_only_what_is_missing():
    state = {
        "status": dict(RUNNING),
        "hosts": HOSTS,
        "nets": NETS,
        # stor02 lost its second drive from the config; the fs group exists, the fs does not
        "drives": DRIVES[:3],
        "fs_groups": [{"name": "default"}],
        "filesystems": [],
    }
    spec = dict(SPEC, fs_capacity="1TiB")
    assert argvs(weka_plan.weka_backend_plan(state, spec)) == [
        "weka cluster drive add 1 /dev/nvme1n1",
        "weka cluster host apply --all --force",
        "weka fs create default default 1TiB",
    ]


def test_fully_formed_cluster_is_a_no_op():
    state = {"status": RUNNING, "hosts": HOSTS, "nets": NETS, "drives": DRIVES,
             "fs_groups": [{"group_name": "default"}], "filesystems": [{"fs_name": "default"}]}
    plan = weka_plan.weka_backend_plan(state, SPEC)
    assert plan == {"steps": [], "complete": True}


def test_host_ids_and_lists_in_other_spellings():
    hosts = {"0": {"id": 0, "hostname": "stor01"}, "1": {"id": "1", "hostname": "stor02"}}
    drives = [{"hostId": 0, "path": p} for p in SPEC["backends"][0]["drives"]]
    drives += [{"hostId": "HostId<1>", "disk_path": p} for p in SPEC["backends"][1]["drives"]]
    state = {"status": RUNNING, "hosts": hosts, "nets": NETS, "drives": drives,
             "fs_groups": [{"name": "default"}], "filesystems": [{"name": "default"}]}
    assert argvs(weka_plan.weka_backend_plan(state, SPEC)) == []


def test_backend_missing_from_a_running_cluster_is_refused_not_recreated():
    state = {"status": RUNNING, "hosts": HOSTS[:1]}
    with pytest.raises(ValueError, match="stor02"):
        weka_plan.weka_backend_plan(state, SPEC)


def test_filesystem_without_capacity_and_no_free_space_is_an_error():
    state = {"status": RUNNING, "hosts": HOSTS, "nets": NETS, "drives": DRIVES,
             "fs_groups": [{"name": "default"}], "filesystems": []}
    with pytest.raises(ValueError, match="unprovisioned"):
        weka_plan.weka_backend_plan(state, SPEC)


def test_udp_mode_adds_no_nics():
    state = {"status": RUNNING, "hosts": HOSTS, "nets": [], "drives": DRIVES,
             "fs_groups": [{"name": "default"}], "filesystems": [{"name": "default"}]}
    assert argvs(weka_plan.weka_backend_plan(state, dict(SPEC, net_add=False))) == []


CLIENT = {"version": "3.3.3", "backend": "198.19.0.21", "filesystem": "default", "mount_point": "/mnt/weka",
          "installer": "/var/tmp/racfg-weka/weka-client-install.sh"}


def test_client_fresh_downloads_the_installer_then_runs_it_then_mounts():
    """Download and run are separate steps (no curl | sh): a failed download stops before sh."""
    steps = weka_plan.weka_client_plan({"installed_version": "", "mounts": []}, CLIENT)
    assert [s["argv"] for s in steps] == [
        ["curl", "-fsS", "--retry", "3", "-o", CLIENT["installer"], "http://198.19.0.21:14000/dist/v1/install"],
        ["sh", CLIENT["installer"]],
        ["mount", "-t", "wekafs", "198.19.0.21/default", "/mnt/weka"],
    ]


def test_client_of_another_version_than_the_pin_is_installed_again():
    mounts = [{"mount": "/mnt/weka", "device": "198.19.0.21/default", "fstype": "wekafs"}]
    steps = weka_plan.weka_client_plan({"installed_version": "3.2.0", "mounts": mounts}, CLIENT)
    assert [s["argv"][0] for s in steps] == ["curl", "sh"]
    assert "3.2.0 installed, 3.3.3 pinned" in steps[0]["why"]
    unpinned = weka_plan.weka_client_plan({"installed_version": "3.2.0", "mounts": mounts}, dict(CLIENT, version=None))
    assert unpinned == []


def test_client_installed_and_mounted_is_a_no_op():
    mounts = [{"mount": "/mnt/weka", "device": "198.19.0.21/default", "fstype": "wekafs"}]
    assert weka_plan.weka_client_plan({"installed_version": "3.3.3", "mounts": mounts}, CLIENT) == []


def test_client_with_something_else_on_the_mount_point_still_mounts_weka():
    mounts = [{"mount": "/mnt/weka", "device": "tmpfs", "fstype": "tmpfs"}]
    steps = weka_plan.weka_client_plan({"installed_version": "3.3.3", "mounts": mounts}, CLIENT)
    assert [s["argv"][0] for s in steps] == ["mount"]


def test_cluster_formed_reader():
    assert not weka_plan.cluster_formed(None)
    assert not weka_plan.cluster_formed({"status": "STEM"})
    assert weka_plan.cluster_formed({"name": "lab", "status": "OK"})
    assert weka_plan.host_id("HostId<12>") == 12


COMMANDS = {"status": "status -J", "hosts": "cluster host -J", "drives": "cluster drive -J"}


def read(key, stdout, rc=0, stderr=""):
    return {"item": {"key": key, "value": COMMANDS[key]}, "rc": rc, "stdout": stdout, "stderr": stderr}


def test_state_of_a_formed_cluster_is_parsed_from_every_read():
    status = read("status", '{"name": "lab", "status": "OK"}')
    reads = {"results": [read("hosts", json.dumps(HOSTS)), read("drives", "[]")]}
    state = weka_plan.weka_state(status, reads, COMMANDS)
    assert state == {"status": {"name": "lab", "status": "OK"}, "hosts": HOSTS, "drives": []}


def test_reads_skipped_before_the_cluster_exists_are_absent_not_empty():
    status = read("status", '{"status": "STEM"}')
    reads = {"results": [{"item": {"key": "hosts", "value": "cluster host -J"}, "skipped": True}]}
    assert weka_plan.weka_state(status, reads, COMMANDS) == {"status": {"status": "STEM"}}
    assert weka_plan.weka_state(status, None, COMMANDS) == {"status": {"status": "STEM"}}


@pytest.mark.parametrize("result, message", [
    (read("drives", "", rc=127, stderr="weka: not found"), "weka cluster drive -J failed (rc 127): weka: not found"),
    (read("drives", "error: not logged in", rc=1), "not logged in"),
    (read("drives", "Drives: 4 active"), "weka cluster drive -J did not print JSON"),
])
def test_a_failed_or_unparsable_read_is_an_error_not_an_empty_plan(result, message):
    status = read("status", json.dumps(RUNNING))
    with pytest.raises(ValueError, match=re.escape(message)):
        weka_plan.weka_state(status, {"results": [result]}, COMMANDS)


def test_a_failed_status_read_is_an_error_not_a_cluster_to_create():
    with pytest.raises(ValueError, match="weka status -J failed"):
        weka_plan.weka_state(read("status", "", rc=1, stderr="connection refused"), None, COMMANDS)
