"""A stand-in MLNX_OFED distribution, built and served by the lab in place of the vendor's download.

An inventory whose ``software.ofed.source`` is an http URL on the lab's management gateway
(``http://198.18.74.1:8080/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz``) asks the lab to
be the download site: ``lab up`` builds a tarball of that name and serves it (racfg.lab.httpserver),
so deploy runs the ofed role's URL path for real (the host reads the tarball's release,
downloads, unpacks, runs ``mlnxofedinstall``, checks ``ofed_info -s``).

The tarball has the vendor's layout: ``MLNX_OFED_LINUX-<release>-<distro>-<arch>/`` holding
``mlnxofedinstall``, ``.mlnx`` (the release), ``.arch``, ``distro`` and ``DEBS/``. What is a
stand-in: the installer is a shell script that installs the one package in DEBS/ with dpkg and
logs its arguments; that package (a real .deb made with dpkg-deb) holds only an ``ofed_info``
that prints the release as MLNX_OFED's does. No drivers, no firmware, no kernel modules.

The release is the one the file name carries, else the inventory's pin.
"""

from __future__ import annotations

import ipaddress
import re
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from racfg.hostfacts.ofed import release_from_name
from racfg.inventory import Cluster
from racfg.lab import fabric

DISTRO, ARCH = "debian12", "x86_64"  # the lab image: Debian bookworm on this machine
PACKAGE = "racfg-lab-mlnx-ofed"
INSTALL_LOG = "/var/log/racfg-lab-mlnxofedinstall.log"
LAB_NETWORK = ipaddress.ip_network("198.18.0.0/15")
_NAME_RE = re.compile(r"^MLNX_OFED_LINUX-(?P<release>\d[\w.]*-[\d.]+)-(?P<distro>[\w.]+)-(?P<arch>\w+)\.(tgz|tar\.gz)$")

MLNXOFEDINSTALL = """#!/bin/sh
# racfg lab stand-in for MLNX_OFED's installer: installs this distribution's package (an ofed_info
# of release {release}, no drivers) with dpkg and logs how it was called.
set -e
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || {{ echo "mlnxofedinstall: run it as root" >&2; exit 1; }}
echo "$*" >> {log}
dpkg -i "$here"/DEBS/*.deb >/dev/null
echo "Installation passed successfully (racfg lab stand-in, release {release})"
"""

OFED_INFO = """#!/bin/sh
[ "$1" = "-s" ] && echo "MLNX_OFED_LINUX-{release}:" && exit 0
echo "MLNX_OFED_LINUX-{release} (racfg lab stand-in: no drivers)"
"""


@dataclass(frozen=True)
class LabOfedSource:
    """An inventory's MLNX_OFED URL that the lab serves: where to listen and what to put there."""

    url: str
    address: str
    port: int
    path: str  # below the server's root, no leading slash
    release: str
    distro: str = DISTRO
    arch: str = ARCH


def lab_source(cluster: Cluster) -> LabOfedSource | None:
    """The inventory's MLNX_OFED source when it is an http URL on the lab's management gateway."""
    ofed = cluster.inventory.software.ofed
    if ofed is None or ofed.flavor != "mlnx" or not ofed.source or source_problem(cluster) is not None:
        return None
    url = urlsplit(ofed.source)
    if url.hostname != str(fabric.mgmt_gateway(cluster).ip):
        return None
    path = url.path.lstrip("/")
    named = _NAME_RE.match(Path(path).name)
    release = release_from_name(path) or (ofed.version or "")
    return LabOfedSource(ofed.source, url.hostname, url.port or 80, path, release,
                         *((named["distro"], named["arch"]) if named else (DISTRO, ARCH)))


def source_problem(cluster: Cluster) -> str | None:
    """Why the lab cannot serve an MLNX_OFED URL on a lab address, or None (also for any other source)."""
    ofed = cluster.inventory.software.ofed
    if ofed is None or ofed.flavor != "mlnx" or not ofed.source or "://" not in ofed.source:
        return None
    url = urlsplit(ofed.source)
    try:
        host = ipaddress.ip_address(url.hostname or "")
    except ValueError:
        return None  # a name: not the lab's
    if host not in LAB_NETWORK:
        return None
    gateway = fabric.mgmt_gateway(cluster).ip
    if host != gateway:
        return (f"software.ofed.source {ofed.source}: the lab serves files on its management gateway "
                f"{gateway} only")
    if url.scheme != "http":
        return f"software.ofed.source {ofed.source}: the lab serves http only"
    if not re.search(r"\.(tgz|tar\.gz)$", url.path) or not (release_from_name(url.path) or ofed.version):
        return (f"software.ofed.source {ofed.source}: the lab serves a MLNX_OFED .tgz of the pinned release: "
                "name it MLNX_OFED_LINUX-<release>-<distro>-<arch>.tgz or set software.ofed.version")
    return None


def build_distribution(parent: Path, release: str, *, installs: str | None = None, distro: str = DISTRO,
                       arch: str = ARCH) -> Path:
    """``parent/MLNX_OFED_LINUX-<release>-<distro>-<arch>``, whose installer puts an ``ofed_info``
    printing ``installs`` (default: ``release``) on the host, from a real package (dpkg-deb)."""
    dist = parent / f"MLNX_OFED_LINUX-{release}-{distro}-{arch}"
    (dist / "DEBS").mkdir(parents=True)
    (dist / ".mlnx").write_text(f"{release}\n")
    (dist / ".arch").write_text(f"{arch}\n")
    (dist / "distro").write_text(f"{distro}\n")
    installer = dist / "mlnxofedinstall"
    installer.write_text(MLNXOFEDINSTALL.format(release=installs or release, log=INSTALL_LOG))
    installer.chmod(0o755)
    with tempfile.TemporaryDirectory(prefix="racfg-mlnx-pkg-") as tmp:
        root = Path(tmp)
        (root / "DEBIAN").mkdir()
        (root / "usr" / "bin").mkdir(parents=True)
        (root / "DEBIAN" / "control").write_text(
            f"Package: {PACKAGE}\nVersion: {(installs or release).replace('-', '.')}\nArchitecture: all\n"
            "Maintainer: racfg lab\nDescription: racfg lab stand-in for MLNX_OFED (ofed_info only)\n")
        ofed_info = root / "usr" / "bin" / "ofed_info"
        ofed_info.write_text(OFED_INFO.format(release=installs or release))
        ofed_info.chmod(0o755)
        subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(root),
                        str(dist / "DEBS" / f"{PACKAGE}.deb")], check=True, capture_output=True)
    return dist


def build_tarball(dest: Path, release: str, *, installs: str | None = None, distro: str = DISTRO,
                  arch: str = ARCH) -> Path:
    """A gzipped tarball at ``dest`` of build_distribution(release, ...), its directory first."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="racfg-mlnx-dist-") as tmp:
        dist = build_distribution(Path(tmp), release, installs=installs, distro=distro, arch=arch)
        partial = dest.with_name(dest.name + ".part")
        with tarfile.open(partial, "w:gz") as archive:
            archive.add(dist, arcname=dist.name)
        partial.replace(dest)
    return dest


def publish(root: Path, source: LabOfedSource) -> Path:
    """The tarball the inventory's URL names, under the HTTP server's ``root`` (built once)."""
    dest = root / source.path
    if not dest.is_file():
        build_tarball(dest, source.release, distro=source.distro, arch=source.arch)
    return dest
