"""The roles' postconditions on real state, without a lab: the role's own verification tasks run by
ansible-playbook against this machine (its mount table, its links), and the sysctl module's
read-back on a sysctl tree. Each must pass where the state is right and fail naming expected and
actual where it is not. (The lab tests in test_roles_lab.py run them on deployed hosts.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.roles.role_modules import load_role_module

REPO = Path(__file__).resolve().parents[2]
ROLES = REPO / "roles"


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def run_cases(tmp_path: Path, tasks: list[dict[str, Any]], variables: dict[str, Any],
              cases: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The given role tasks on localhost, once per case (its variables over the role's), in one
    ansible-playbook run; returns each case's outcome: "passed", or the failed task's message."""
    (tmp_path / "tasks.yml").write_text(yaml.safe_dump(tasks, sort_keys=False))
    blocks = [{"name": f"case {name}", "vars": {**case_vars, "case_name": name},
               "block": [{"ansible.builtin.include_tasks": "tasks.yml"},
                         {"ansible.builtin.set_fact": {"outcomes": "{{ outcomes | combine({case_name: 'passed'}) }}"}}],
               "rescue": [{"ansible.builtin.set_fact": {
                   "outcomes": "{{ outcomes | combine({case_name: ansible_failed_result.msg}) }}"}}]}
              for name, case_vars in cases.items()]
    show = {"ansible.builtin.copy": {"content": "{{ outcomes | to_json }}", "dest": str(tmp_path / "outcomes.json"),
                                     "mode": "0644"}}
    play = [{"hosts": "localhost", "gather_facts": False, "vars": {**variables, "outcomes": {}},
             "tasks": [*blocks, show]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    bin_dir = Path(sys.executable).parent
    run = subprocess.run([str(bin_dir / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                          "-e", f"ansible_python_interpreter={sys.executable}", str(tmp_path / "play.yml")],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env={"ANSIBLE_NOCOLOR": "1", "HOME": str(tmp_path),
                              "ANSIBLE_LIBRARY": str(ROLES / "common" / "library"),  # racfg_probe
                              "ANSIBLE_MODULE_UTILS": str(ROLES / "common" / "module_utils"),
                              # the role's filters, as Ansible loads them for tasks of the role
                              "ANSIBLE_FILTER_PLUGINS": str(ROLES / "fabric" / "filter_plugins"),
                              "PATH": f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin"})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    outcomes = json.loads((tmp_path / "outcomes.json").read_text())
    outcomes["output"] = run.stdout
    return outcomes


def proc_mount(point: str) -> list[str]:
    """This machine's mount of ``point``: [source, mount point, fstype, options]."""
    lines = [line.split()[:4] for line in Path("/proc/self/mounts").read_text().splitlines()]
    return [f for f in lines if f[1] == point][-1]


def test_nfs_client_postcondition_passes_on_the_mount_as_declared_and_names_what_differs(tmp_path: Path) -> None:
    """The role's postcondition tasks against this machine's /proc mount standing in for the
    export: as declared it passes; with options it lacks, or a mount point not mounted, it fails
    with expected and actual."""
    source, point, fstype, options = proc_mount("/proc")
    tasks = [t for t in load_yaml(ROLES / "nfs_client/tasks/main.yml")
             if t.get("name") in ("Read the mount table", "Check the export is mounted with its options")]
    array = {"protocol": "nfs", "server": "array", "export": "/export", "mount_point": point,
             "mount_options": [options.split(",")[0], "_netdev"]}
    variables = {**load_yaml(ROLES / "nfs_client/defaults/main.yml"), "nfs_client_fstypes": {"nfs": fstype}}
    outcomes = run_cases(tmp_path, tasks, variables, {
        "declared": {"racfg_array": array, "nfs_client_source": source},
        "options": {"racfg_array": {**array, "mount_options": ["hard", "proto=tcp"]}, "nfs_client_source": source},
        "absent": {"racfg_array": {**array, "mount_point": "/no/such/mount"}},
    })
    assert outcomes["declared"] == "passed", outcomes["output"][-3000:]
    assert outcomes["options"] == (f"{point}: Expected: {source} ({fstype}) with hard,proto=tcp "
                                   f"Actual: {source} ({fstype}) with {options}")
    assert outcomes["absent"] == f"/no/such/mount: Expected: array:/export ({fstype}) with rw Actual: not mounted"


def loopback() -> dict[str, Any]:
    link = json.loads(subprocess.run(["ip", "-j", "addr", "show", "dev", "lo"], capture_output=True, text=True,
                                     check=True).stdout)[0]
    inet = next(a for a in link["addr_info"] if a["family"] == "inet")
    return {"name": "lo", "mtu": link["mtu"], "address": f"{inet['local']}/{inet['prefixlen']}"}


def test_fabric_postcondition_reuses_the_role_read_and_names_expected_and_actual(tmp_path: Path) -> None:
    """verify.yml after guard.yml's one read of the links, with this machine's loopback as the data
    NIC: unchanged and right, it passes on guard's read (no second probe); after a change (drift) it
    reads again, and a wrong MTU or address, or a missing NIC, fails naming both."""
    guard = [t for t in load_yaml(ROLES / "fabric/tasks/guard.yml")
             if t["name"] == "Read the host's links and addresses, and look for netplan and ifupdown"]
    assert len(guard) == 1
    variables = {**load_yaml(ROLES / "fabric/defaults/main.yml"), **load_yaml(ROLES / "fabric/vars/main.yml"),
                 "racfg_role": "storage", "racfg_cluster_hosts": [], "fabric_settle_retries": 1,
                 "fabric_settle_delay_s": 0, "fabric_backend": "networkd"}
    lo = loopback()
    outcomes = run_cases(tmp_path, guard + load_yaml(ROLES / "fabric/tasks/verify.yml"), variables, {
        "right": {"common_data_nics": [lo], "fabric_live_drift": []},
        "wrong": {"common_data_nics": [{**lo, "mtu": 9000, "address": "198.19.99.1/24"},
                                       {"name": "nic9", "mtu": 9000, "address": "198.19.99.2/24"}],
                  "fabric_live_drift": ["lo"]},
    })
    assert outcomes["right"] == "passed", outcomes["output"][-3000:]
    waits = re.findall(r"TASK \[Wait for the data NICs to carry[^\n]*\n([a-zA-Z]+)", outcomes["output"])
    assert waits[0] == "skipping" and waits[1] != "skipping", waits  # "right" made no second probe; "wrong" did
    assert outcomes["wrong"] == (f"lo: Expected: MTU 9000, 198.19.99.1/24 Actual: MTU {lo['mtu']}, {lo['address']}; "
                                 "nic9: Expected: MTU 9000, 198.19.99.2/24 Actual: no such link")


def test_fabric_guard_checks_every_data_nic_in_one_task_and_names_each_it_refuses(tmp_path: Path) -> None:
    """guard.yml on this machine's links: a data NIC that exists and is not the management
    interface passes; an absent NIC and the NIC carrying the management address fail the one
    check together, each named in its message."""
    guard = [t for t in load_yaml(ROLES / "fabric/tasks/guard.yml") if not t["name"].startswith("Read the network")]
    assert all("loop" not in t for t in guard)
    variables = {**load_yaml(ROLES / "fabric/defaults/main.yml"), **load_yaml(ROLES / "fabric/vars/main.yml")}
    lo = loopback()
    lo_ip = lo["address"].split("/")[0]
    outcomes = run_cases(tmp_path, guard, variables, {
        "right": {"common_data_nics": [lo], "racfg_mgmt": "198.51.100.1"},
        "wrong": {"common_data_nics": [lo, {"name": "nic9", "mtu": 9000, "address": "198.19.99.2/24"}],
                  "racfg_mgmt": lo_ip},
    })
    assert outcomes["right"] == "passed", outcomes["output"][-3000:]
    refused = outcomes["wrong"].split("; ")
    assert refused[:2] == [f"data NIC lo: carries the management address {lo_ip}", "refusing to touch it"]
    assert re.fullmatch(r"data NIC nic9: not present on this host \(links: .*\blo\b.*\)", refused[2]), refused


def drive(path: str, **state: Any) -> dict[str, Any]:
    """One drive as racfg_drive_probe reports it: present, unmounted, blank, free, model as declared."""
    return {"path": path, "kname": path.rsplit("/", 1)[-1], "present": True, "mounts": [], "model": "M",
            "declared_model": "M", "serial": "S", "size_bytes": 1, "signatures": [], "partitions": [], "weka": "",
            "in_use": [], **state}


def test_drive_checks_run_once_per_host_and_name_every_drive_at_fault(tmp_path: Path) -> None:
    """drives.yml's one check on a probe's answer (no loop over drives): blank free drives pass; a
    missing drive and one in use, a wrong model, and drives carrying data each fail it with one
    message naming every drive at fault; faults of several kinds are all named. A drive in use is
    refused even where wiping is allowed, and is never among the drives a wipe would erase."""
    name = "Check the free drives exist, are not in use, have their declared model and carry no data"
    tasks = [t for t in load_yaml(ROLES / "nvme_storage/tasks/drives.yml") if t["name"] == name]
    assert len(tasks) == 1 and "loop" not in tasks[0]
    variables = {**load_yaml(ROLES / "nvme_storage/defaults/main.yml"),
                 **load_yaml(ROLES / "nvme_storage/vars/main.yml")}
    a, b = "/dev/nvme0n1", "/dev/nvme1n1"
    mounted, held = "/dev/nvme1n1 mounted on /data", "/dev/nvme0n1p1 -> dm-0 (LVM vg0-lv0) mounted on /srv/data"
    outcomes = run_cases(tmp_path, tasks, variables, {
        "blank": {"nvme_storage_probe": {"drives": [drive(a), drive(b)]}},
        "unusable": {"nvme_storage_probe": {"drives": [drive(a, present=False), drive(b, in_use=[mounted])]}},
        "model": {"nvme_storage_probe": {"drives": [drive(a), drive(b, model="X")]}},
        "data": {"nvme_storage_probe": {"drives": [drive(a, signatures=["TYPE=swap"]),
                                                   drive(b, partitions=["PTTYPE=gpt"]),
                                                   drive("/dev/nvme2n1", signatures=["TYPE=xfs"], weka="owned")]}},
        "both": {"nvme_storage_probe": {"drives": [drive(a, in_use=[mounted]), drive(b, model="X")]}},
        "in use, wiping allowed": {"racfg_wipe_drives": True, "nvme_storage_probe": {"drives": [
            drive(a, signatures=["PTTYPE=gpt"], partitions=["nvme0n1p1"], in_use=[held, "its signatures could not "
                                                                                      "be read (blkid exited 4: x)"]),
            drive(b, signatures=["TYPE=swap"])]}},
    })
    assert outcomes["blank"] == "passed", outcomes["output"][-3000:]
    never = ". In use: never wiped, not even with wipe_drives: true; free it on the host first"
    assert outcomes["unusable"] == (f"{a}: Expected: a block device Actual: no such block device; "
                                    f"{b}: Expected: not in use Actual: {mounted}{never}")
    assert outcomes["model"] == f"{b}: Expected: model M Actual: X"
    assert outcomes["data"] == (f"{a}: Expected: a blank drive Actual: TYPE=swap; "
                                f"{b}: Expected: a blank drive Actual: PTTYPE=gpt. Refusing to wipe them: "
                                "set wipe_drives: true for localhost in the inventory to allow it")
    assert outcomes["both"] == f"{a}: Expected: not in use Actual: {mounted}{never}; {b}: Expected: model M Actual: X"
    assert outcomes["in use, wiping allowed"] == (f"{a}: Expected: not in use Actual: {held}; its signatures could "
                                                  f"not be read (blkid exited 4: x){never}")
    (tmp_path / "wipe").mkdir()
    wiped = run_cases(tmp_path / "wipe", [{"name": "What a wipe would erase", "ansible.builtin.assert": {
        "that": "nvme_storage_carrying_data | map(attribute='path') | list == ['/dev/nvme1n1']"}}], variables,
        {"in use": {"nvme_storage_probe": {"drives": [drive(a, signatures=["PTTYPE=gpt"], in_use=[held]),
                                                      drive(b, signatures=["TYPE=swap"])]}}})
    assert wiped["in use"] == "passed", wiped["output"][-3000:]


# --- common: a kernel parameter the kernel did not take is a failure ----------------------------

racfg_sysctl = load_role_module("common", "racfg_sysctl")


def test_sysctl_read_back_reports_a_value_the_kernel_did_not_take(tmp_path: Path) -> None:
    for key, value in {"net.core.somaxconn": "4096", "net.ipv4.tcp_rmem": "4096\t87380\t6291456"}.items():
        path = tmp_path.joinpath(*key.split("."))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    applied = {"net.core.somaxconn": {"before": "128", "after": "4096"},
               "net.ipv4.tcp_rmem": {"before": "4096 87380 6291456", "after": "4096 87380 134217728"}}
    assert racfg_sysctl.unapplied(applied, str(tmp_path)) == [
        "net.ipv4.tcp_rmem: Expected: 4096 87380 134217728 Actual: 4096 87380 6291456"]
