"""The MLNX_OFED URL path's parsing, without a lab: what release a tarball holds as the host reads it
(roles/ofed/library/racfg_ofed_tarball.py), and which inventory URLs the lab serves (racfg_lab.mlnxofed).

The tarballs are the lab's stand-in distributions (real tar.gz files in the vendor's layout), read
through a stream as the module reads an HTTP response.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from racfg.inventory import load_cluster
from racfg_lab import mlnxofed
from tests.roles.role_modules import load_role_module

module = load_role_module("ofed", "racfg_ofed_tarball")

INVENTORY = Path(__file__).with_name("ofedurl.yaml")
URL = "http://198.18.74.1:8080/mlnx/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz"


class Unseekable(io.RawIOBase):
    """A file that can only be read forward, as an HTTP response."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        chunk = self._data.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


def read(path: Path) -> dict[str, str]:
    return module.read_release(io.BufferedReader(Unseekable(path.read_bytes())))


def test_the_release_is_read_from_the_mlnx_file_in_the_vendor_layout(tmp_path: Path) -> None:
    tgz = mlnxofed.build_tarball(tmp_path / "MLNX_OFED_LINUX-5.8-1.0.1.1-ubuntu22.04-x86_64.tgz", "5.8-1.0.1.1",
                                 distro="ubuntu22.04")
    assert read(tgz) == {"top": "MLNX_OFED_LINUX-5.8-1.0.1.1-ubuntu22.04-x86_64", "release": "5.8-1.0.1.1",
                         "read_from": ".mlnx"}
    with tarfile.open(tgz) as archive:
        names = archive.getnames()
    top = "MLNX_OFED_LINUX-5.8-1.0.1.1-ubuntu22.04-x86_64"
    assert {f"{top}/mlnxofedinstall", f"{top}/.mlnx", f"{top}/.arch", f"{top}/distro",
            f"{top}/DEBS/{mlnxofed.PACKAGE}.deb"} <= set(names)


def test_a_mislabelled_tarball_tells_the_release_it_holds(tmp_path: Path) -> None:
    tgz = mlnxofed.build_tarball(tmp_path / "MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz", "9.8-2.0.0.0")
    assert read(tgz) == {"top": "MLNX_OFED_LINUX-9.8-2.0.0.0-debian12-x86_64", "release": "9.8-2.0.0.0",
                         "read_from": ".mlnx"}


def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_without_mlnx_file_the_directory_name_tells_the_release_or_nothing(tmp_path: Path) -> None:
    named = _tar(tmp_path / "a.tgz", {"./MLNX_OFED_LINUX-5.5-1.0.3.2-rhel7.4-x86_64/mlnxofedinstall": b"#!/bin/sh\n"})
    assert read(named) == {"top": "MLNX_OFED_LINUX-5.5-1.0.3.2-rhel7.4-x86_64", "release": "5.5-1.0.3.2",
                           "read_from": "name"}
    renamed = _tar(tmp_path / "b.tgz", {"ofed/mlnxofedinstall": b"#!/bin/sh\n"})
    assert read(renamed) == {"top": "ofed", "release": "", "read_from": "name"}


def test_an_empty_or_broken_archive_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="empty"):
        read(_tar(tmp_path / "empty.tgz", {}))
    garbage = tmp_path / "page.tgz"
    garbage.write_bytes(b"<html>404 Not Found</html>")
    with pytest.raises(tarfile.TarError):
        read(garbage)


def _inventory(tmp_path: Path, source: str, version: str = "9.9-1.0.0.0") -> Path:
    text = INVENTORY.read_text().replace(URL, source).replace("version: 9.9-1.0.0.0", f"version: {version}")
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    return path


def test_the_lab_serves_a_url_on_its_management_gateway() -> None:
    served = mlnxofed.lab_source(load_cluster(INVENTORY))
    assert served == mlnxofed.LabOfedSource(URL, "198.18.74.1", 8080,
                                            "mlnx/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz", "9.9-1.0.0.0",
                                            "debian12", "x86_64")


def test_the_stand_in_is_reproducible_so_its_inventory_carries_the_sha256_the_host_checks(tmp_path: Path) -> None:
    """The lab builds the tarball at lab-up time; ofedurl.yaml was written before, with its digest.
    The build is byte-for-byte the same on every machine (fixed dates and owners, stored deflate
    blocks), so that digest is the served file's. If the stand-in changes, put the new digest in
    tests/roles/ofedurl.yaml (``racfg lab up`` prints it)."""
    cluster = load_cluster(INVENTORY)
    served = mlnxofed.lab_source(cluster)
    assert served is not None
    first = mlnxofed.publish(tmp_path / "a", served)
    second = mlnxofed.build_tarball(tmp_path / "b" / "again.tgz", served.release)
    assert first.read_bytes() == second.read_bytes()
    assert hashlib.sha256(first.read_bytes()).hexdigest() == mlnxofed.sha256_of(served)
    assert cluster.inventory.software.ofed.sha256 == mlnxofed.sha256_of(served)
    with tarfile.open(first) as archive:  # still a tarball any tar reads, owned by root, dated alike
        assert {(m.uid, m.gid, m.mtime) for m in archive.getmembers()} == {(0, 0, mlnxofed.EPOCH)}


@pytest.mark.parametrize(("source", "version", "release", "port"), [
    ("http://198.18.74.1/ofed.tgz", "9.9-1.0.0.0", "9.9-1.0.0.0", 80),  # no release in the name: the pin
    ("http://198.18.74.1:81/MLNX_OFED_LINUX-9.8-2.0.0.0-ubuntu22.04-x86_64.tgz", "9.9-1.0.0.0", "9.8-2.0.0.0", 81),
])
def test_the_served_release_is_the_names_else_the_pin(tmp_path: Path, source: str, version: str, release: str,
                                                      port: int) -> None:
    served = mlnxofed.lab_source(load_cluster(_inventory(tmp_path, source, version)))
    assert served is not None and (served.release, served.port) == (release, port)


@pytest.mark.parametrize(("source", "problem"), [
    ("http://198.18.74.9:8080/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz",
     "the lab serves files on its management gateway 198.18.74.1 only"),
    ("https://198.18.74.1/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz", "the lab serves http only"),
    ("http://198.18.74.1/mlnx/", "the lab serves a MLNX_OFED .tgz of the pinned release"),
])
def test_a_lab_url_the_lab_cannot_serve_is_refused_naming_why(tmp_path: Path, source: str, problem: str) -> None:
    inventory = _inventory(tmp_path, source)
    if not source.endswith(".tgz"):  # an apt repository: checked by a signing key, not a sha256
        text = inventory.read_text()
        inventory.write_text(text[:text.index("    # the sha256")] + "    signed_by: mlnx.asc\n")
    cluster = load_cluster(inventory)
    found = mlnxofed.source_problem(cluster)
    assert found is not None and problem in found and source in found
    assert mlnxofed.lab_source(cluster) is None


@pytest.mark.parametrize("source", ["http://mirror.example.com/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz",
                                    "http://10.0.0.5/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz",
                                    "/srv/mlnx/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz"])
def test_other_sources_are_not_the_labs(tmp_path: Path, source: str) -> None:
    cluster = load_cluster(_inventory(tmp_path, source))
    assert mlnxofed.source_problem(cluster) is None and mlnxofed.lab_source(cluster) is None


def test_lab_up_refuses_a_lab_url_it_cannot_serve_before_building_anything(tmp_path: Path) -> None:
    from racfg.errors import UsageError
    from racfg_lab.lifecycle import _check_labbable

    cluster = load_cluster(_inventory(tmp_path, "https://198.18.74.1/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz"))
    with pytest.raises(UsageError, match=r"cannot build a lab: software\.ofed\.source https://198\.18\.74\.1/.*http"):
        _check_labbable(cluster)
    _check_labbable(load_cluster(INVENTORY))  # the served URL is fine
