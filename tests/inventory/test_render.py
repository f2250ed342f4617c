"""Render: deterministic bytes, an inventory Ansible accepts, no secrets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from racfg.inventory import load_cluster
from racfg.render import render_files, write_rendered
from tests.inventory.conftest import ansible_plain

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_INVENTORY = Path(sys.executable).with_name("ansible-inventory")


@pytest.mark.parametrize("name", ["lab", "ra-ethernet", "ra-infiniband", "ra-arista"])
def test_render_is_deterministic_and_accepted_by_ansible(tmp_path, name):
    cluster = load_cluster(REPO / "inventory" / f"{name}.yaml")
    first = render_files(cluster)
    again = render_files(load_cluster(REPO / "inventory" / f"{name}.yaml"))
    assert first == again
    out = tmp_path / "out"
    write_rendered(cluster, out)
    assert write_rendered(cluster, out) == []  # second write changes nothing
    listed = subprocess.run(
        [str(ANSIBLE_INVENTORY), "-i", str(out / "hosts.yml"), "--list"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )
    data = json.loads(listed.stdout)
    first_dgx = cluster.role("dgx")[0]
    # Ansible reads every string of the rendered variables as unsafe (never templated), racfg's own template not
    assert data["_meta"]["hostvars"][first_dgx.name]["racfg_model"] == {"__ansible_unsafe": first_dgx.model}
    switch = next(iter(cluster.switches))
    assert data["_meta"]["hostvars"][switch]["ansible_python_interpreter"] == "{{ ansible_playbook_python }}"
    data = ansible_plain(data)
    hostvars = data["_meta"]["hostvars"]
    assert set(data["dgx"]["hosts"]) == {h.name for h in cluster.role("dgx")}
    assert set(data["storage"]["hosts"]) == {h.name for h in cluster.role("storage")}
    assert set(data["switches"]["hosts"]) == set(cluster.switches)
    assert hostvars[first_dgx.name]["ansible_host"] == str(first_dgx.mgmt)
    assert hostvars[first_dgx.name]["racfg_nics"][0]["mtu"] == cluster.fabric.effective_host_mtu
    assert hostvars[first_dgx.name]["racfg_fabric"]["roce"] is False
    ports = hostvars[switch]["racfg_switch_ports"]
    assert len(ports) == sum(len(h.nics) for h in cluster.hosts)
    assert "password" not in json.dumps(hostvars[switch]["racfg_switch"]["credentials"]).replace(
        "password_env", "").replace("password_file", "").replace("password_vault", "")


def test_render_removes_stale_host_vars(tmp_path):
    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    out = tmp_path / "out"
    (out / "host_vars").mkdir(parents=True)
    (out / "host_vars" / "gone.yml").write_text("x: 1\n")
    write_rendered(cluster, out)
    assert not (out / "host_vars" / "gone.yml").exists()


def test_fabric_doc_lists_every_cable():
    cluster = load_cluster(REPO / "inventory" / "ra-arista.yaml")
    doc = render_files(cluster)["fabric.md"]
    assert doc.count(":enp") == 9 * 4 + 8 * 2
    assert "| Ethernet5/4 | dgx09 | enp139s0 |" in doc
    assert "52 of 128 ports cabled." in doc
