"""Deploy's preflight checks the MLNX_OFED source where the ofed role reads it: a tarball on the
controller (the role copies it to the hosts) must exist here and hold the pinned release; an
http(s) URL is read by the hosts and left to the role (its sha256 too: each host checks the file it
unpacks); other schemes and directories never pass the schema."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from racfg.deploy.preflight import ofed_source_problem
from racfg.inventory import InventoryError, load_cluster

REPO = Path(__file__).resolve().parents[2]
PINNED = "MLNX_OFED_LINUX-4.5-1.0.1.0-ubuntu16.04-x86_64"  # inventory/ra-ethernet.yaml pins 4.5-1.0.1.0
OTHER = "MLNX_OFED_LINUX-5.8-1.0.1.1-ubuntu22.04-x86_64"


def site_with_source(tmp_path: Path, source: str, extra: str = "") -> Path:
    """ra-ethernet.yaml with another MLNX_OFED source (and ``extra`` lines after it)."""
    inv = (REPO / "inventory" / "ra-ethernet.yaml").read_text()
    path = tmp_path / "site.yaml"
    path.write_text(inv.replace(f"    source: /srv/mlnx/{PINNED}.tgz\n", f"    source: {source}\n{extra}"))
    return path


def distribution(parent: Path, name: str) -> Path:
    path = parent / name
    path.mkdir()
    (path / "mlnxofedinstall").write_text("#!/bin/sh\n")
    return path


def tarball(parent: Path, name: str) -> Path:
    """``parent/<name>.tgz`` holding the distribution directory ``name``."""
    path = parent / f"{name}.tgz"
    with tarfile.open(path, "w:gz") as archive:
        archive.add(distribution(parent, name), arcname=name)
    return path


def test_a_tarball_of_the_pinned_release_passes_and_is_read_on_the_controller(tmp_path):
    tarball(tmp_path, PINNED)
    cluster = load_cluster(site_with_source(tmp_path, f"{PINNED}.tgz"))  # relative: to the inventory file
    assert cluster.ofed_source_on_controller() == tmp_path / f"{PINNED}.tgz"
    assert ofed_source_problem(cluster) is None


def test_a_tarball_of_another_release_is_refused_by_what_it_unpacks_to(tmp_path):
    other = tarball(tmp_path, OTHER).rename(tmp_path / "ofed.tgz")
    problem = ofed_source_problem(load_cluster(site_with_source(tmp_path, str(other))))
    assert problem is not None and "software.ofed.source" in problem
    assert "holds release 5.8-1.0.1.1" in problem and "pins 4.5-1.0.1.0" in problem


def test_a_missing_path_says_it_is_read_on_the_controller(tmp_path):
    problem = ofed_source_problem(load_cluster(site_with_source(tmp_path, str(tmp_path / f"{PINNED}.tgz"))))
    assert problem is not None and "does not exist on this machine (the controller" in problem


@pytest.mark.parametrize(("url", "extra"), [
    (f"https://mirror.example/{PINNED}.tgz", ""),
    ("http://mirror.example/mlnx-ofed/", "    allow_http: true\n    signed_by: mlnx-ofed.asc\n")])
def test_an_http_url_is_left_to_the_hosts(tmp_path, url, extra):
    path = site_with_source(tmp_path, url, extra)
    if "signed_by" in extra:  # a repository: checked by its key (a file here, the controller), not a sha256
        path.write_text("\n".join(line for line in path.read_text().splitlines() if "sha256:" not in line))
        (tmp_path / "mlnx-ofed.asc").write_text("-----BEGIN PGP PUBLIC KEY BLOCK-----\n")
    cluster = load_cluster(path)
    assert cluster.ofed_source_on_controller() is None
    assert ofed_source_problem(cluster) is None  # the role checks it on the host, before installing


def test_a_url_named_for_another_release_is_refused(tmp_path):
    problem = ofed_source_problem(load_cluster(site_with_source(tmp_path, f"https://mirror.example/{OTHER}.tgz")))
    assert problem is not None and "holds release 5.8-1.0.1.1" in problem and "pins 4.5-1.0.1.0" in problem


def test_other_url_schemes_and_directories_never_reach_preflight(tmp_path):
    for source in (f"ftp://mirror.example/{PINNED}.tgz", f"/srv/mlnx/{PINNED}"):
        with pytest.raises(InventoryError, match=r"software\.ofed\.source"):
            load_cluster(site_with_source(tmp_path, source))


def test_render_hands_the_role_the_absolute_controller_path(tmp_path: Path) -> None:
    """A relative source means "next to the inventory"; Ansible would read it relative to the
    playbook, so render writes the path preflight checked."""
    from racfg.render.ansible_inventory import ofed_vars

    cluster = load_cluster(site_with_source(tmp_path, f"dist/{PINNED}.tgz"))
    assert ofed_vars(cluster)["source"] == str(tmp_path / "dist" / f"{PINNED}.tgz")
    url = load_cluster(site_with_source(tmp_path, f"https://repo.example/{PINNED}.tgz"))
    assert ofed_vars(url)["source"] == f"https://repo.example/{PINNED}.tgz"
