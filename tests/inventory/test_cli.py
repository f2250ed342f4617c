"""The commands as a user runs them: exit codes, readable errors, no tracebacks, formats."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.inventory.conftest import base

REPO = Path(__file__).resolve().parents[2]
RACFG = [sys.executable, "-m", "racfg"]


def racfg(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RACFG, *args], capture_output=True, text=True, cwd=cwd,
                          env={"PATH": "/usr/bin:/bin", "RACFG_PLAIN": "1"})


def write(tmp_path: Path, data: dict | str) -> str:
    path = tmp_path / "site.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return str(path)


def test_check_lab_passes():
    result = racfg("check", "inventory/lab.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lab: OK: 0 error(s)" in result.stdout
    assert "sw1     1/17  stor01" in result.stdout  # topology
    assert "Bandwidth budget (resnet50)" in result.stdout


def test_check_json_and_markdown():
    result = racfg("check", "inventory/ra-arista.yaml", "--format", "json")
    document = json.loads(result.stdout)
    assert result.returncode == 0
    assert document["summary"] == {"errors": 0, "warnings": 1, "hosts": 17, "switches": 1}
    # the example pins Weka 3.2.2 but ships no distribution: check says deploy would install nothing
    assert [f["path"] for f in document["findings"]] == ["software.weka"]
    assert len(document["topology"]) == 52
    assert document["budget"]["fed"] is True
    md = racfg("check", "inventory/ra-ethernet.yaml", "--format", "md").stdout
    assert md.startswith("# racfg check: ra-ethernet") and "| cables | 100G QSFP28" in md


def broken(kind: str) -> dict | str:
    data = base()
    if kind == "port-outside":
        data["hosts"][0]["nics"][0]["port"] = "1/40"
    elif kind == "missing-switch":
        data["hosts"][1]["nics"][0]["switch"] = "core9"
    elif kind == "ib-mtu-9000":
        data["fabric"] = {"type": "infiniband", "speed": "EDR", "host_mtu": 9000}
        data["switches"][0].update(platform="mlnxos-ib", model="SB7800")
    elif kind == "roce":
        data["fabric"]["roce"] = True
    return data


@pytest.mark.parametrize(
    ("kind", "line_needle", "message"),
    [
        ("port-outside", "hosts[0].nics[0].port", "port 1/40 is outside switch sw1"),
        ("missing-switch", "hosts[1].nics[0].switch", "switch 'core9' is not defined"),
        ("ib-mtu-9000", "fabric.host_mtu", "IPoIB datagram mode carries at most MTU 4092"),
        ("roce", "fabric.roce", "RoCE is not part of the reference architecture"),
    ],
)
def test_ra_violations_exit_1_with_located_message(tmp_path, kind, line_needle, message):
    result = racfg("check", write(tmp_path, broken(kind)))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = [ln for ln in result.stdout.splitlines() if message in ln]
    assert lines, result.stdout
    assert "site.yaml:" in lines[0] and line_needle in lines[0]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("site: [\n", "not valid YAML"),
        ("", "the file is empty"),
        ("site:\n\tname: x\n", "tab character"),
        ("site: {name: a}\nsite: {name: b}\n", "duplicate key 'site'"),
        ("site: {name: a, colour: red}\n", "unknown key 'colour'"),
        ("site: {name: 5}\nfabric: {type: ethernet, speed: fast}\n", "unknown speed 'fast'"),
    ],
)
def test_invalid_files_exit_2_without_traceback(tmp_path, text, needle):
    result = racfg("check", write(tmp_path, text))
    assert result.returncode == 2, result.stdout + result.stderr
    assert needle in result.stderr
    assert "site.yaml:" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_command_line_exits_2():
    assert racfg("check").returncode == 2
    assert racfg("check", "inventory/lab.yaml", "--format", "xml").returncode == 2
    assert racfg("nonsense").returncode == 2


def test_render_writes_tree_and_refuses_policy_errors(tmp_path):
    out = tmp_path / "out"
    result = racfg("render", "inventory/lab.yaml", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert (out / "hosts.yml").is_file() and (out / "fabric.md").is_file()
    assert (out / "host_vars" / "dgx01.yml").is_file()
    bad = racfg("render", write(tmp_path, broken("roce")), "--out", str(tmp_path / "bad"))
    assert bad.returncode == 1 and "RoCE" in bad.stderr and not (tmp_path / "bad").exists()


def test_schema_is_json_schema():
    document = json.loads(racfg("schema").stdout)
    assert document["title"] == "racfg inventory"
    assert document["additionalProperties"] is False
    assert {"site", "fabric", "switches", "hosts"} <= set(document["required"])


def test_help_documents_exit_codes():
    result = racfg("--help")
    assert result.returncode == 0 and "Exit codes: 0 all good" in result.stdout


def test_lock_host_names_a_host_of_the_inventory_or_check_refuses_it(tmp_path: Path):
    """site.lock_host: a host by its expanded name (dgx02 of dgx[01:02]) is the lock's host; a name
    the inventory does not have is exit 2 at its line, with the hosts it could be."""
    from racfg.inventory import load_cluster
    from racfg.lock.site_lock import lock_host

    site = base()
    site["site"]["lock_host"] = "dgx02"
    good = write(tmp_path, site)
    assert racfg("check", good).returncode in (0, 1)
    assert lock_host(load_cluster(good)).name == "dgx02"
    del site["site"]["lock_host"]
    assert lock_host(load_cluster(write(tmp_path, site))).name == "dgx01"  # the default: the first host
    site["site"]["lock_host"] = "dgx09"
    result = racfg("check", write(tmp_path, site))
    assert result.returncode == 2, result.stdout + result.stderr
    line = next(i for i, text in enumerate((tmp_path / "site.yaml").read_text().splitlines(), 1) if "lock_host" in text)
    assert f"site.yaml:{line} site.lock_host: no host of this inventory has this name (found: dgx09)" in result.stderr
    assert "(hint: name one of its hosts: dgx01, dgx02, st01" in result.stderr and "Traceback" not in result.stderr


SCHEDULER = {"type": "slurm", "controller": {"name": "slurmctl", "address": "198.18.0.5"},
             "partitions": [{"name": "gpu", "roles": ["dgx"]}, {"name": "storage", "hosts": ["st[01:08]"]}],
             "default_partition": "gpu"}


def test_the_scheduler_section_resolves_its_partitions_to_the_inventorys_hosts(tmp_path: Path):
    """Issue 55: partitions name hosts by name, range or role; the default partition is the first
    unless named; without the section there are none."""
    from racfg.inventory import load_cluster
    from racfg.inventory.partitions import default_partition, partition_hosts

    site = base()
    assert partition_hosts(load_cluster(write(tmp_path, site))) == {}
    site["scheduler"] = {**SCHEDULER, "partitions": [*SCHEDULER["partitions"], {"name": "one", "hosts": ["dgx02"]}]}
    del site["scheduler"]["default_partition"]
    cluster = load_cluster(write(tmp_path, site))
    assert partition_hosts(cluster) == {"gpu": ["dgx01", "dgx02"], "storage": [f"st{i:02d}" for i in range(1, 9)],
                                        "one": ["dgx02"]}
    assert default_partition(cluster) == "gpu"
    assert racfg("check", write(tmp_path, site)).returncode in (0, 1)


@pytest.mark.parametrize(("change", "place", "message"), [
    ({"partitions": [{"name": "gpu", "hosts": ["dgx[01:03]"]}]}, "scheduler.partitions[0].hosts[0]",
     "names a host this inventory does not have (found: dgx[01:03])"),
    ({"partitions": [{"name": "gpu", "hosts": ["dgx01"]}], "default_partition": "batch"},
     "scheduler.default_partition", "names no partition of scheduler.partitions (found: batch)"),
    ({"partitions": [{"name": "gpu", "hosts": ["dgx01"]}, {"name": "gpu", "hosts": ["dgx02"]}]},
     "scheduler.partitions[1].name", "this partition is declared twice (found: gpu)"),
    ({"partitions": [{"name": "gpu", "roles": ["client"]}], "default_partition": "gpu"}, "scheduler.partitions[0]",
     "this partition holds no host (found: gpu)"),
    ({"partitions": [{"name": "gpu", "hosts": ["dgx01; reboot"]}]}, "scheduler.partitions[0].hosts[0]",
     "expected a host name or a name range"),
    ({"controller": {"name": "slurmctl", "address": "$(reboot)"}}, "scheduler.controller.address", ""),
])
def test_a_scheduler_section_naming_what_the_inventory_lacks_is_exit_2_at_its_line(tmp_path: Path, change, place,
                                                                                     message):
    site = base()
    site["scheduler"] = {**SCHEDULER, **change}
    result = racfg("check", write(tmp_path, site))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "site.yaml:" in result.stderr and f" {place}: {message}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
