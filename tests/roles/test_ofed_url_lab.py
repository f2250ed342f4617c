"""MLNX_OFED from a URL, on a real lab (tests/roles/ofedurl.yaml: site ofedurl, one GPU server),
by ``racfg deploy`` as a user runs it.

The inventory's software.ofed.source is an http URL on the lab's management gateway (with
``allow_http: true``: the lab's server is its own), so ``lab up`` serves a stand-in MLNX_OFED
tarball of the pinned release there (racfg_lab.mlnxofed: the vendor's layout, an installer that
installs a real .deb holding an ``ofed_info``; no drivers; built reproducibly, so the inventory
carries its sha256). The host reads the tarball's release from the stream, downloads it, checks its
sha256, unpacks it, runs ``mlnxofedinstall``, and ``ofed_info -s`` must then show the pin; the next
deploy changes nothing. A tarball of another release is refused before any change, whether its name
says so (deploy's preflight, on the controller) or only its content does (the host's read of its
``.mlnx``); a download whose sha256 is not the inventory's is refused naming both and leaves
nothing. ``lab down`` stops the HTTP server and removes what it served.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import labsupport as testing
import pytest

from racfg.inventory import load_cluster
from racfg_lab import httpserver, machines, mlnxofed
from racfg_lab.state import site_dir
from racfg_lab.teardown import leftovers

pytestmark = pytest.mark.lab

INVENTORY = Path(__file__).with_name("ofedurl.yaml")
RACFG = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "racfg"
HOST, SITE, PIN = "ofu-dgx01", "ofedurl", "9.9-1.0.0.0"
SERVER = "http://198.18.74.1:8080"  # the lab's management gateway (the inventory's mgmt_subnet's first address)
URL = f"{SERVER}/mlnx/MLNX_OFED_LINUX-{PIN}-debian12-x86_64.tgz"  # the inventory's software.ofed.source
WORKDIR = "/var/tmp/racfg-mlnx-ofed"  # the role's ofed_mlnx_workdir
# What an install changes on the host, read before and after a refused deploy.
HOST_STATE = (f"md5sum /var/lib/dpkg/status; ls -A /var/tmp {WORKDIR} 2>&1; ls -l {mlnxofed.INSTALL_LOG} 2>&1; "
              "command -v ofed_info; echo end")


@pytest.fixture(scope="module")
def lab() -> Iterator[testing.LabHandle]:
    with testing.running_lab(INVENTORY) as handle:
        yield handle


@pytest.fixture
def clean_host(lab: testing.LabHandle) -> Iterator[None]:
    """The host without MLNX_OFED before and after the test."""
    def remove() -> None:
        lab.ssh(HOST, f"dpkg --purge {mlnxofed.PACKAGE} >/dev/null 2>&1; rm -rf {WORKDIR} {mlnxofed.INSTALL_LOG}",
                check=False)
    remove()
    yield
    remove()


def deploy(inventory: Path, tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    env = {**os.environ, "RACFG_STATE_DIR": str(tmp_path / "state"), "RACFG_PLAIN": "1"}
    proc = subprocess.run([str(RACFG), "deploy", str(inventory), "--yes", "--tags", "ofed", "--format", "json",
                           *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    try:
        hosts = {h["host"]: h for h in json.loads(proc.stdout)["hosts"]}
    except (ValueError, KeyError):
        hosts = {}
    return proc, hosts


SHA256 = load_cluster(INVENTORY).inventory.software.ofed.sha256  # of the stand-in the lab serves at URL


def with_source(tmp_path: Path, url: str, sha256: str = SHA256) -> Path:
    """A copy of the inventory (same site, same lab) whose MLNX_OFED URL is ``url``, with ``sha256``."""
    path = tmp_path / "ofedurl.yaml"
    path.write_text(INVENTORY.read_text().replace(URL, url).replace(SHA256, sha256))
    return path


def sh(lab: testing.LabHandle, command: str) -> str:
    return lab.ssh(HOST, command, check=False).stdout.strip()


def served_requests(path: str) -> list[str]:
    """The HTTP server's access-log lines for ``path`` (each names the client's address)."""
    log = site_dir(SITE) / "logs" / f"{httpserver.SERVICE.name}.log"
    return [line for line in log.read_text().splitlines() if f"GET /{path} " in line]


def test_a_tarball_of_another_release_is_refused_before_any_change(lab, clean_host, tmp_path: Path) -> None:
    before = sh(lab, HOST_STATE)

    # Its name says so: deploy's preflight refuses it on the controller (exit 2), nothing contacted.
    named = f"{SERVER}/mlnx/MLNX_OFED_LINUX-9.8-2.0.0.0-debian12-x86_64.tgz"
    proc, _ = deploy(with_source(tmp_path, named), tmp_path)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"MLNX_OFED source {named} holds release 9.8-2.0.0.0, but software.ofed.version pins {PIN}" in proc.stderr

    # Only its content says so: the host reads its .mlnx from the stream and the role refuses it.
    path = f"mislabelled/MLNX_OFED_LINUX-{PIN}-debian12-x86_64.tgz"
    tarball = mlnxofed.build_tarball(httpserver.root(site_dir(SITE)) / path, "9.8-2.0.0.0")
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()  # its own: the release is what is refused
    proc, hosts = deploy(with_source(tmp_path, f"{SERVER}/{path}", digest), tmp_path)
    text = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 1 and hosts[HOST]["failed"] == 1 and hosts[HOST]["changed"] == 0, text[-3000:]
    assert (f"MLNX_OFED tarball {SERVER}/{path} holds release 9.8-2.0.0.0 "
            f"(MLNX_OFED_LINUX-9.8-2.0.0.0-debian12-x86_64/.mlnx), but the inventory pins {PIN} (installed: none); "
            "nothing was downloaded or changed") in text, text[-3000:]
    assert [r for r in served_requests(path) if r.startswith("198.18.74.11 ")], "the host did not read the tarball"
    assert sh(lab, HOST_STATE) == before


def test_installs_from_the_labs_http_server_then_changes_nothing(lab, clean_host, tmp_path: Path) -> None:
    """--check reads the tarball, reports the install and changes nothing; the run installs and
    verifies it; the next run changes nothing and does not even read the tarball."""
    path = URL.removeprefix(SERVER + "/")
    earlier = len(served_requests(path))  # another test's reads
    before = sh(lab, HOST_STATE)
    check, hosts = deploy(INVENTORY, tmp_path, "--check")
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
    assert "ofed : Report the MLNX_OFED install a run would do" in hosts[HOST]["changes"], hosts
    assert "common : Report the check a run would make" in hosts[HOST]["changes"], hosts  # the sha256's
    assert sh(lab, HOST_STATE) == before
    assert len(served_requests(path)) == earlier + 1  # the release read from the stream

    first, hosts = deploy(INVENTORY, tmp_path)
    text = " ".join((first.stdout + first.stderr).split())
    assert first.returncode == 0, text[-3000:]
    assert hosts[HOST]["failed"] == 0 and hosts[HOST]["changed"] >= 2, hosts  # unpack + mlnxofedinstall
    assert f"lab: MLNX_OFED {PIN} at {URL} -> a stand-in distribution" in first.stderr + first.stdout
    assert sh(lab, "ofed_info -s") == f"MLNX_OFED_LINUX-{PIN}:"
    assert sh(lab, f"cat {mlnxofed.INSTALL_LOG}") == "--without-fw-update --force"
    assert sh(lab, f"dpkg-query -W -f='${{Status}}' {mlnxofed.PACKAGE}") == "install ok installed"
    assert sh(lab, f"ls {WORKDIR}/MLNX_OFED_LINUX-{PIN}-debian12-x86_64") == "DEBS\ndistro\nmlnxofedinstall"
    # read (its release) then downloaded (to unpack) by the host, over the management network (+1: --check)
    assert len([r for r in served_requests(path) if r.startswith("198.18.74.11 ") and '" 200 ' in r]) == earlier + 3

    again, hosts = deploy(INVENTORY, tmp_path)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert hosts[HOST]["changed"] == 0 and hosts[HOST]["failed"] == 0, hosts
    assert sh(lab, f"cat {mlnxofed.INSTALL_LOG}") == "--without-fw-update --force"  # the installer ran once
    assert len(served_requests(path)) == earlier + 3  # the second deploy did not even read (nor hash) the tarball


def test_a_download_whose_sha256_is_not_the_inventorys_is_refused_naming_both_and_leaves_nothing(
        lab, clean_host, tmp_path: Path) -> None:
    """The tarball of the pinned release, with another sha256 in the inventory: the host reads its
    release (the pin), downloads it, and refuses it naming the expected and the actual digest; the
    download is gone, nothing was unpacked or installed."""
    path = URL.removeprefix(SERVER + "/")
    earlier = len(served_requests(path))
    wrong = hashlib.sha256(b"not the stand-in").hexdigest()
    before = sh(lab, HOST_STATE)
    proc, hosts = deploy(with_source(tmp_path, URL, wrong), tmp_path)
    text = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 1 and hosts[HOST]["failed"] == 1, text[-3000:]
    # the report's line (racfg keeps a failure's first 300 characters: the digests lead)
    assert (f"common : Check the installer's sha256 against the inventory's: MLNX_OFED: sha256 Expected: {wrong} "
            f"Actual: {SHA256}; refused: nothing was unpacked or run, what this run put on the host was removed"
            in hosts[HOST]["problems"][0]), hosts[HOST]["problems"]
    assert len(hosts[HOST]["problems"]) == 1, hosts[HOST]["problems"]
    assert len([r for r in served_requests(path)[earlier:] if r.startswith("198.18.74.11 ")]) == 2  # read, download
    assert sh(lab, HOST_STATE) == before


def test_lab_down_stops_the_http_server_and_removes_its_files(lab) -> None:
    directory = site_dir(SITE)
    pid = httpserver.SERVICE.running_pid(directory)
    served = httpserver.root(directory) / URL.removeprefix(SERVER + "/")
    assert pid is not None and served.is_file()
    assert any(item.startswith("HTTP server pid ") for item in leftovers(SITE))

    proc = subprocess.run([str(RACFG), "lab", "down", str(INVENTORY)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert not machines.is_running(pid, httpserver.SERVICE.module)
    assert httpserver.SERVICE.stray_pids(SITE) == []
    assert not served.exists() and not directory.exists()
    assert leftovers(SITE) == []
