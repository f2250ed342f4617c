"""The ofed role's release decisions (roles/ofed/filter_plugins/ofed.py): what is installed, what a
distribution on the controller holds, and whether it is the pin. Pure logic on text and files."""

from __future__ import annotations

import importlib.util
import tarfile
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("ofed_filters", ROOT / "roles/ofed/filter_plugins/ofed.py")
ofed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ofed)

NAME = "MLNX_OFED_LINUX-5.8-1.0.1.1-ubuntu22.04-x86_64"


def test_installed_version_from_ofed_info():
    assert ofed.installed_version("MLNX_OFED_LINUX-5.8-1.0.1.1:\n") == "5.8-1.0.1.1"
    assert ofed.installed_version("", rc=127) == ""  # ofed_info missing: nothing installed
    assert ofed.installed_version("rdma-core 44.0\n") == ""  # not a MLNX_OFED line


def test_pin_is_compared_by_components_not_by_text_prefix():
    assert ofed.matches_pin("4.5-1.0.1.0", "4.5-1.0.1")
    assert ofed.matches_pin("4.5-1.0.1.0", "4.5-1.0.1.0")
    assert not ofed.matches_pin("4.5-1.0.10.0", "4.5-1.0.1")  # a text prefix would say yes
    assert not ofed.matches_pin("5.8-1.0.1.1", "4.5-1.0.1.0")
    assert not ofed.matches_pin("", "4.5-1.0.1.0")
    with pytest.raises(AnsibleFilterError, match=r"software\.ofed\.version 'latest'"):
        ofed.matches_pin("4.5-1.0.1.0", "latest")


def test_release_from_the_distribution_name():
    assert ofed.release_from_name(f"/srv/mlnx/{NAME}") == "5.8-1.0.1.1"
    assert ofed.release_from_name(f"/srv/mlnx/{NAME}/") == "5.8-1.0.1.1"
    assert ofed.release_from_name(f"https://example.com/{NAME}.tgz") == "5.8-1.0.1.1"
    assert ofed.release_from_name("MLNX_OFED_LINUX-4.5-1.0.1.0") == "4.5-1.0.1.0"
    assert ofed.release_from_name("/srv/ofed") == ""


def installer_dir(parent: Path, name: str = NAME) -> Path:
    path = parent / name
    path.mkdir()
    (path / "mlnxofedinstall").write_text("#!/bin/sh\n")
    return path


def test_release_of_a_directory_on_the_controller(tmp_path):
    assert ofed.dist_release(str(installer_dir(tmp_path))) == "5.8-1.0.1.1"
    renamed = installer_dir(tmp_path, "ofed")
    with pytest.raises(AnsibleFilterError, match="cannot tell its release"):
        ofed.dist_release(str(renamed))
    (renamed / ".mlnx").write_text("5.4-3.6.8.1\n")
    assert ofed.dist_release(str(renamed)) == "5.4-3.6.8.1"


def test_release_of_a_tarball_comes_from_the_directory_it_unpacks_to(tmp_path):
    source = installer_dir(tmp_path)
    tarball = tmp_path / "ofed.tgz"  # renamed: the name tells nothing, the contents do
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(source, arcname=NAME)
    assert ofed.dist_release(str(tarball)) == "5.8-1.0.1.1"


def test_sources_that_cannot_be_installed_are_refused(tmp_path):
    with pytest.raises(AnsibleFilterError, match="does not exist on the controller"):
        ofed.dist_release(str(tmp_path / NAME))
    (tmp_path / "empty").mkdir()
    with pytest.raises(AnsibleFilterError, match="holds no mlnxofedinstall"):
        ofed.dist_release(str(tmp_path / "empty"))
    with pytest.raises(AnsibleFilterError, match="absolute path"):
        ofed.dist_release(NAME)
    (tmp_path / "broken.tgz").write_text("not a tarball")
    with pytest.raises(AnsibleFilterError, match="cannot be read on the controller"):
        ofed.dist_release(str(tmp_path / "broken.tgz"))
