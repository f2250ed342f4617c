"""Render: deterministic bytes, an inventory Ansible accepts, no secrets."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from racfg.inventory import load_cluster
from racfg.render import render_files, write_rendered
from racfg.render.out_dir import RenderTargetError
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
    assert write_rendered(cluster, out).written == []  # second write changes nothing
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


# --- render --out: only racfg's own files, never through a link (issue 51) ----------------------

def _smaller_lab(tmp_path: Path) -> Path:
    """lab.yaml with one dgx and one storage host: dgx02's and stor02's host_vars go stale."""
    text = (REPO / "inventory" / "lab.yaml").read_text()
    smaller = tmp_path / "lab.yaml"
    smaller.write_text(text.replace('"dgx[01:02]"', '"dgx[01:01]"').replace('"stor[01:02]"', '"stor[01:01]"'))
    return smaller


def test_render_removes_only_the_stale_files_it_wrote_and_keeps_the_rest(tmp_path: Path):
    """A stale file racfg wrote and nobody changed is removed; one edited since, and one a person
    added, are kept and reported; the manifest names what racfg wrote, with its hash."""
    from racfg.render.out_dir import MANIFEST, sha256

    out = tmp_path / "out"
    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    write_rendered(cluster, out)
    manifest = json.loads((out / MANIFEST).read_text())["files"]
    assert manifest["host_vars/stor02.yml"] == sha256((out / "host_vars" / "stor02.yml").read_text())
    assert set(manifest) == set(render_files(cluster))
    (out / "host_vars" / "dgx02.yml").write_text("# mine now\n")  # edited, and about to go stale
    (out / "host_vars" / "extra.yml").write_text("x: 1\n")  # a person's own file
    smaller = load_cluster(_smaller_lab(tmp_path))
    done = write_rendered(smaller, out)
    assert done.removed == ["host_vars/stor02.yml"] and not (out / "host_vars" / "stor02.yml").exists()
    assert (out / "host_vars" / "dgx02.yml").read_text() == "# mine now\n"
    assert (out / "host_vars" / "extra.yml").read_text() == "x: 1\n"
    assert "host_vars/dgx02.yml: no longer rendered, but changed since racfg wrote it: kept" in done.kept
    assert "host_vars/extra.yml: not written by racfg: kept" in done.kept
    assert set(json.loads((out / MANIFEST).read_text())["files"]) == set(render_files(smaller))
    assert write_rendered(smaller, out).written == []  # and the next render changes nothing


def test_render_replaces_its_own_files_but_refuses_one_it_did_not_write(tmp_path: Path):
    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    out = tmp_path / "out"
    write_rendered(cluster, out)
    (out / "group_vars" / "all.yml").write_text("# Rendered by racfg from lab.yaml, then edited by hand\n")
    done = write_rendered(cluster, out)
    assert done.written == [out / "group_vars" / "all.yml"]
    assert done.replaced == ["group_vars/all.yml: edited since racfg wrote it; your edit is replaced"]
    theirs = tmp_path / "theirs"
    (theirs / "host_vars").mkdir(parents=True)
    (theirs / "hosts.yml").write_text("all:\n  hosts: {web1: {}}\n")  # an operator's own Ansible tree
    with pytest.raises(RenderTargetError, match=r"theirs/hosts.yml exists and racfg did not write it"):
        write_rendered(cluster, theirs)
    assert (theirs / "hosts.yml").read_text() == "all:\n  hosts: {web1: {}}\n"
    assert sorted(p.name for p in theirs.rglob("*")) == ["host_vars", "hosts.yml"]  # nothing written first


@pytest.mark.parametrize("link", ["out", "host_vars", "host_vars/dgx01.yml", "hosts.yml", ".racfg-rendered.json"])
def test_render_never_writes_through_a_symbolic_link(tmp_path: Path, link: str):
    """--out, a directory or a file racfg would write that is a link is refused naming it, and the
    link's target is left as it was."""
    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    out = tmp_path / "out"
    if link != "out":
        write_rendered(cluster, out)
    target = tmp_path / "target"
    target.mkdir() if link in ("out", "host_vars") else target.write_text("precious\n")
    place = out / link if link != "out" else out
    if place.is_dir():
        shutil.rmtree(place)
    elif place.exists():
        place.unlink()
    place.symlink_to(target)
    before = sorted(p.name for p in target.iterdir()) if target.is_dir() else target.read_text()
    with pytest.raises(RenderTargetError, match=re.escape(str(place))):
        write_rendered(cluster, out)
    after = sorted(p.name for p in target.iterdir()) if target.is_dir() else target.read_text()
    assert after == before
    cli = subprocess.run([sys.executable, "-m", "racfg", "render", str(REPO / "inventory" / "lab.yaml"),
                          "--out", str(out)], capture_output=True, text=True)
    assert cli.returncode == 2 and str(place) in cli.stderr and "Traceback" not in cli.stderr, cli.stderr


def test_the_run_records_rendering_is_the_same_function(tmp_path: Path):
    """deploy and drift render into their run records with write_rendered: a fresh directory gets
    every file and a manifest of them."""
    from racfg.render.out_dir import MANIFEST

    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    done = write_rendered(cluster, tmp_path / "inventory")
    assert sorted(str(p.relative_to(tmp_path / "inventory")) for p in done.written) == sorted(render_files(cluster))
    assert (tmp_path / "inventory" / MANIFEST).is_file()


def test_validate_and_drift_render_only_the_inventory_their_checks_read(tmp_path: Path):
    """Issue 53: validate renders only what its checks read. The inventory files are render_files' own
    (the same bytes), without fabric.md and the ANTA catalog; validate's and drift's run records get
    exactly those (their calls say inventory_only)."""
    from racfg.render import inventory_files

    cluster = load_cluster(REPO / "inventory" / "ra-arista.yaml")  # EOS: a catalog in the full render
    full, inventory = render_files(cluster), inventory_files(cluster)
    assert {"fabric.md", "anta-catalog.yml"} <= set(full) and set(full) - set(inventory) == {"fabric.md",
                                                                                              "anta-catalog.yml"}
    assert all(full[name] == text for name, text in inventory.items())
    done = write_rendered(cluster, tmp_path / "inventory", inventory_only=True)
    assert sorted(str(p.relative_to(tmp_path / "inventory")) for p in done.written) == sorted(inventory)
    for command in ("validate/validate_run.py", "drift/drift_run.py"):
        source = (REPO / "racfg" / command).read_text()
        assert "inventory_only=True)" in source and source.count("write_rendered(") == 1, command


def test_fabric_doc_lists_every_cable():
    cluster = load_cluster(REPO / "inventory" / "ra-arista.yaml")
    doc = render_files(cluster)["fabric.md"]
    assert doc.count(":enp") == 9 * 4 + 8 * 2
    assert "| Ethernet5/4 | dgx09 | enp139s0 |" in doc
    assert "52 of 128 ports cabled." in doc
