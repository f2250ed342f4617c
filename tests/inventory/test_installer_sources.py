"""The installers' sources in the schema (racfg.inventory.model.installer): every source that installs
something names what it must be (a tarball its sha256, an apt repository its signing key), plain http
needs the source's own opt-in, and a directory is refused; each refusal is located at the source's line
and says what is allowed. `racfg check` exits 2 on them; render hands the roles the checked values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from racfg.deploy.preflight import ofed_source_problem
from racfg.inventory import InventoryError, load_cluster
from racfg.render.ansible_inventory import ofed_vars, weka_vars
from tests.inventory.conftest import base

DIGEST = "3f" * 32
TGZ = "/srv/mlnx/MLNX_OFED_LINUX-4.5-1.0.1.0-ubuntu16.04-x86_64.tgz"
HTTPS_TGZ = "https://mirror.example/MLNX_OFED_LINUX-4.5-1.0.1.0-ubuntu16.04-x86_64.tgz"
REPO_URL = "https://linux.mellanox.com/public/repo/mlnx_ofed/4.5-1.0.1.0/ubuntu16.04/x86_64/"


def site(ofed: dict[str, Any] | None = None, weka: dict[str, Any] | None = None) -> dict[str, Any]:
    data = base()
    data["software"]["ofed"] = {"flavor": "mlnx", "version": "4.5-1.0.1.0", **(ofed or {})}
    if weka is not None:
        data["software"]["weka"] = {"version": "3.3.3", **weka}
    return data


def refusal(write_inventory, data: dict[str, Any]) -> tuple[str, str, str]:
    """The one problem the file has: (path, text, the line of the file it points at)."""
    path = write_inventory(data)
    with pytest.raises(InventoryError) as info:
        load_cluster(path)
    [problem] = info.value.problems
    return problem.path, str(problem), path.read_text().splitlines()[problem.line - 1]


@pytest.mark.parametrize(("ofed", "path", "needle", "line"), [
    ({"source": TGZ}, "software.ofed.source",
     "a MLNX_OFED tarball is installed only with its sha256: set sha256", "source:"),
    ({"source": TGZ.removesuffix(".tgz"), "sha256": DIGEST}, "software.ofed.source",
     "give the MLNX_OFED tarball (MLNX_OFED_LINUX-<release>-<os>-<arch>.tgz, as downloaded) and its sha256: "
     "a directory cannot be checked", "source:"),
    ({"source": HTTPS_TGZ.replace("https", "http"), "sha256": DIGEST}, "software.ofed.source",
     "plain http: anyone on the path can replace what the hosts read and run as root; allowed: an https:// URL, "
     "a file on the controller, or an http:// URL with allow_http: true on this source", "source:"),
    ({"source": HTTPS_TGZ.replace("https", "ftp"), "sha256": DIGEST}, "software.ofed.source",
     "unsupported URL scheme; allowed: an https:// URL", "source:"),
    ({"source": TGZ, "sha256": "3f" * 31}, "software.ofed.sha256",
     "a sha256 is 64 hexadecimal digits", "sha256:"),
    ({"source": TGZ, "sha256": DIGEST, "signed_by": "keys/mlnx.asc"}, "software.ofed.source",
     "signed_by is for an apt repository", "source:"),
    ({"source": REPO_URL}, "software.ofed.source",
     "an apt repository is added only with its signing key: set signed_by", "source:"),
    ({"source": REPO_URL, "signed_by": "keys/mlnx.asc", "sha256": DIGEST}, "software.ofed.source",
     "an apt repository is checked by its signing key, not by a sha256", "source:"),
    ({"source": REPO_URL, "signed_by": "https://linux.mellanox.com/public/repo/mlnx_ofed/GPG-KEY-Mellanox.pub"},
     "software.ofed.signed_by", "the signing key is a file on the controller", "signed_by:"),
    ({"source": REPO_URL, "signed_by": "keys/mlnx.pub"}, "software.ofed.signed_by",
     "name the OpenPGP public key file .asc (armored) or .gpg (binary)", "signed_by:"),
])
def test_an_ofed_source_that_cannot_be_checked_is_refused_at_its_line(write_inventory, ofed, path, needle,
                                                                     line) -> None:
    where, text, pointed = refusal(write_inventory, site(ofed))
    assert where == path and needle in text, text
    assert pointed.strip().startswith(line), pointed


@pytest.mark.parametrize(("weka", "needle"), [
    ({"dist": "/srv/weka/weka-3.3.3.tar"}, "the Weka distribution is installed only with its sha256"),
    ({"dist": "http://get.example/dist/weka-3.3.3.tar", "sha256": DIGEST}, "plain http: anyone on the path"),
    ({"dist": "file:///srv/weka/weka-3.3.3.tar", "sha256": DIGEST}, "unsupported URL scheme"),
])
def test_a_weka_dist_that_cannot_be_checked_is_refused_at_its_line(write_inventory, weka, needle) -> None:
    where, text, pointed = refusal(write_inventory, site({"flavor": "inbox"}, weka))
    assert where == "software.weka.dist" and needle in text, text
    assert pointed.strip().startswith("dist:"), pointed


@pytest.mark.parametrize(("ofed", "weka"), [
    ({"source": TGZ, "sha256": DIGEST.upper()}, {"dist": "/srv/weka/weka-3.3.3.tar", "sha256": DIGEST}),
    ({"source": HTTPS_TGZ, "sha256": DIGEST}, {"dist": "https://get.example/dist/weka-3.3.3.tar", "sha256": DIGEST}),
    ({"source": HTTPS_TGZ.replace("https", "http"), "sha256": DIGEST, "allow_http": True},
     {"dist": "http://get.example/dist/weka-3.3.3.tar", "sha256": DIGEST, "allow_http": True}),
    ({"source": REPO_URL, "signed_by": "keys/mlnx.gpg"}, None),
    ({"source": REPO_URL.replace("https", "http"), "signed_by": "keys/mlnx.asc", "allow_http": True}, None),
])
def test_a_source_with_what_checks_it_is_accepted(write_inventory, ofed, weka) -> None:
    cluster = load_cluster(write_inventory(site(ofed, weka)))
    assert cluster.inventory.software.ofed.sha256 in (None, DIGEST)  # kept as sha256sum prints it


def test_without_a_source_nothing_is_asked_and_a_weka_without_dist_needs_no_digest(write_inventory) -> None:
    load_cluster(write_inventory(site({"flavor": "inbox"}, {"mount_point": "/mnt/weka"})))


def test_racfg_check_exits_2_naming_file_line_and_what_is_allowed(tmp_path: Path, write_inventory) -> None:
    path = write_inventory(site({"source": HTTPS_TGZ.replace("https", "http"), "sha256": DIGEST}))
    proc = subprocess.run([sys.executable, "-m", "racfg", "check", str(path)], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "RACFG_PLAIN": "1"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "source: http://" in text)
    assert f"{path}:{line} software.ofed.source: plain http" in proc.stderr
    assert "or an http:// URL with allow_http: true on this source" in proc.stderr and "Traceback" not in proc.stderr


def test_render_hands_the_roles_the_digest_the_opt_in_and_the_key_where_the_controller_has_them(
        write_inventory, tmp_path: Path) -> None:
    ofed = {"source": REPO_URL.replace("https", "http"), "signed_by": "keys/mlnx.asc", "allow_http": True}
    cluster = load_cluster(write_inventory(site(ofed, {"dist": "dist/weka-3.3.3.tar", "sha256": DIGEST})))
    assert ofed_vars(cluster) | {"install_flags": []} == {
        "flavor": "mlnx", "version": "4.5-1.0.1.0", "allow_http": True, "sha256": None,
        "signed_by": str(tmp_path / "keys" / "mlnx.asc"), "source": ofed["source"], "install_flags": []}
    assert weka_vars(cluster)["dist"] == str(tmp_path / "dist" / "weka-3.3.3.tar")
    assert weka_vars(cluster)["sha256"] == DIGEST and weka_vars(cluster)["allow_http"] is False

    problem = ofed_source_problem(cluster)  # the key must be a file here, the controller
    assert problem is not None and "software.ofed.signed_by" in problem and "keys/mlnx.asc is not a file" in problem
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "mlnx.asc").write_text("-----BEGIN PGP PUBLIC KEY BLOCK-----\n")
    assert ofed_source_problem(cluster) is None
