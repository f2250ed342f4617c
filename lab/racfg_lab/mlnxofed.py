"""A stand-in MLNX_OFED distribution, built and served by the lab in place of the vendor's download.

An inventory whose ``software.ofed.source`` is an http URL on the lab's management gateway
(``http://198.18.74.1:8080/MLNX_OFED_LINUX-9.9-1.0.0.0-debian12-x86_64.tgz``) asks the lab to
be the download site: ``lab up`` builds a tarball of that name and serves it (racfg_lab.httpserver),
so deploy runs the ofed role's URL path for real (the host reads the tarball's release,
downloads, unpacks, runs ``mlnxofedinstall``, checks ``ofed_info -s``).

The tarball has the vendor's layout: ``MLNX_OFED_LINUX-<release>-<distro>-<arch>/`` holding
``mlnxofedinstall``, ``.mlnx`` (the release), ``.arch``, ``distro`` and ``DEBS/``. What is a
stand-in: the installer is a shell script that installs the one package in DEBS/ with dpkg and
logs its arguments; that package (a real .deb, which dpkg installs) holds only an ``ofed_info``
that prints the release as MLNX_OFED's does. No drivers, no firmware, no kernel modules.

The build is reproducible (fixed dates and owners, stored deflate blocks, no outside tool): an
inventory carries the sha256 of the tarball the lab will serve, as a site carries the vendor's
(``sha256_of`` gives it; ``lab up`` prints it), and the host checks it as it would NVIDIA's.

The release is the one the file name carries, else the inventory's pin.
"""

from __future__ import annotations

import hashlib
import io
import ipaddress
import re
import struct
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from racfg.hostfacts.ofed import release_from_name
from racfg.inventory import Cluster
from racfg_lab import fabric

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


# Every member's date and owner: the same release builds the same bytes on any machine, so an
# inventory can carry the sha256 of the tarball the lab serves (tests/roles/ofedurl.yaml does).
EPOCH = 1_700_000_000
_STORED_BLOCK = 65535  # the largest deflate block that holds its bytes as they are


def distribution_members(release: str, *, installs: str | None = None, distro: str = DISTRO,
                         arch: str = ARCH) -> list[tuple[str, bytes | None, int]]:
    """``MLNX_OFED_LINUX-<release>-<distro>-<arch>/`` and its files, as (name, content or None for a
    directory, mode): an installer that puts an ``ofed_info`` printing ``installs`` (default:
    ``release``) on the host from a real package."""
    top = f"MLNX_OFED_LINUX-{release}-{distro}-{arch}"
    installed = installs or release
    installer = MLNXOFEDINSTALL.format(release=installed, log=INSTALL_LOG).encode()
    return [(top, None, 0o755), (f"{top}/.arch", f"{arch}\n".encode(), 0o644),
            (f"{top}/.mlnx", f"{release}\n".encode(), 0o644), (f"{top}/DEBS", None, 0o755),
            (f"{top}/DEBS/{PACKAGE}.deb", package(installed), 0o644),
            (f"{top}/distro", f"{distro}\n".encode(), 0o644), (f"{top}/mlnxofedinstall", installer, 0o755)]


def package(release: str) -> bytes:
    """The stand-in's .deb (dpkg reads uncompressed control.tar and data.tar): an ``ofed_info``."""
    control = (f"Package: {PACKAGE}\nVersion: {release.replace('-', '.')}\nArchitecture: all\n"
               "Maintainer: racfg lab\nDescription: racfg lab stand-in for MLNX_OFED (ofed_info only)\n")
    control_tar = tar([(".", None, 0o755), ("./control", control.encode(), 0o644)])
    data_tar = tar([(".", None, 0o755), ("./usr", None, 0o755), ("./usr/bin", None, 0o755),
                    ("./usr/bin/ofed_info", OFED_INFO.format(release=release).encode(), 0o755)])
    return ar([("debian-binary", b"2.0\n"), ("control.tar", control_tar), ("data.tar", data_tar)])


def tar(members: list[tuple[str, bytes | None, int]]) -> bytes:
    """A ustar archive of ``members`` in that order, owned by root and dated EPOCH."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name, content, mode in members:
            info = tarfile.TarInfo(name)
            info.mode, info.mtime, info.uid, info.gid, info.uname, info.gname = mode, EPOCH, 0, 0, "root", "root"
            if content is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            else:
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
    return out.getvalue()


def ar(members: list[tuple[str, bytes]]) -> bytes:
    """An ar archive (a .deb's container) of ``members``, dated EPOCH."""
    out = bytearray(b"!<arch>\n")
    for name, data in members:
        out += f"{name:<16}{EPOCH:<12}{0:<6}{0:<6}{0o100644:<8o}{len(data):<10}`\n".encode()
        out += data + (b"\n" if len(data) % 2 else b"")
    return bytes(out)


def gzip_stored(data: bytes) -> bytes:
    """``data`` as gzip in stored deflate blocks: unlike a compressor's output, the same bytes
    whatever zlib this machine has (the stand-in is a few kilobytes)."""
    out = bytearray(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")  # deflate, no name, mtime 0, OS unknown
    blocks = [data[i:i + _STORED_BLOCK] for i in range(0, len(data), _STORED_BLOCK)] or [b""]
    for index, block in enumerate(blocks):
        out += bytes([index == len(blocks) - 1]) + struct.pack("<HH", len(block), 0xFFFF ^ len(block)) + block
    return bytes(out + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF))


def build_tarball(dest: Path, release: str, *, installs: str | None = None, distro: str = DISTRO,
                  arch: str = ARCH) -> Path:
    """The stand-in distribution as a gzipped tarball at ``dest``, its directory first; the same
    arguments give the same bytes (so the same sha256) everywhere."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    partial.write_bytes(gzip_stored(tar(distribution_members(release, installs=installs, distro=distro, arch=arch))))
    partial.replace(dest)
    return dest


def sha256_of(source: LabOfedSource) -> str:
    """The sha256 of the tarball the lab serves for ``source`` (what its inventory must carry)."""
    members = distribution_members(source.release, distro=source.distro, arch=source.arch)
    return hashlib.sha256(gzip_stored(tar(members))).hexdigest()


def publish(root: Path, source: LabOfedSource) -> Path:
    """The tarball the inventory's URL names, under the HTTP server's ``root`` (built once)."""
    dest = root / source.path
    if not dest.is_file():
        build_tarball(dest, source.release, distro=source.distro, arch=source.arch)
    return dest
