"""What a source that racfg installs software from must carry, so that a host runs only what the
site vouched for.

racfg runs the MLNX_OFED and Weka installers as root on every host. A mirror, a download or a copy
on the controller can be replaced, and TLS protects only the transport (and only for https). So
each source names what it must be, and each host checks that before anything is unpacked or run
(the roles: common's ``installer.yml``, the ofed role's repository tasks):

- a file (a tarball on the controller or at an http(s) URL): its ``sha256``. A directory cannot be
  named by one digest that anyone else can confirm, so MLNX_OFED comes as the vendor's ``.tgz``,
  whose sha256 NVIDIA publishes beside the download;
- an apt repository (MLNX_OFED only): its OpenPGP signing key (``signed_by``), a file on the
  controller, put on the host and named in the source as ``signed-by``: apt then refuses an index
  that key did not sign. A repository is never added as ``trusted=yes``;
- plain ``http://`` only where that source says ``allow_http: true``: the digest or the key still
  checks what is read, but a site that fetches installers without TLS says so in its inventory.

The field validators of ``Ofed`` and ``Weka`` (racfg.inventory.model.software) call these; the
source's own validator sees the companions because they are declared before it, so a refusal
names the source's line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

SHA256 = re.compile(r"^[0-9a-f]{64}$")
TARBALL = re.compile(r"\.(tgz|tar\.gz)$")  # the ofed role's test of a source (tasks/mlnx_install.yml)
URL_SCHEMES = ("https://", "http://")
KEY_SUFFIXES = (".asc", ".gpg")  # apt reads a signed-by file by its suffix: armored or binary
ALLOWED = ("allowed: an https:// URL, a file on the controller, or an http:// URL with allow_http: true "
           "on this source")


def is_url(source: str) -> bool:
    """Whether the hosts read ``source`` themselves (a URL) rather than the controller (a path)."""
    return "://" in source


def check_sha256(value: str | None) -> str | None:
    """64 hexadecimal digits, kept in lower case (as sha256sum prints them)."""
    if value is None:
        return None
    digest = value.lower()
    if not SHA256.match(digest):
        raise ValueError("a sha256 is 64 hexadecimal digits (the first word sha256sum FILE prints)")
    return digest


def check_key_file(value: str | None) -> str | None:
    """A signing key is a file on the controller, never a URL: a key fetched from where the
    packages come from proves nothing about them."""
    if value is None:
        return None
    if is_url(value):
        raise ValueError("the signing key is a file on the controller (checked into the site's configuration), "
                         "not a URL: a key fetched from the repository's side proves nothing about it")
    if not value.endswith(KEY_SUFFIXES):
        raise ValueError("name the OpenPGP public key file .asc (armored) or .gpg (binary): "
                         "apt reads a signed-by file by its suffix")
    return value


def check_scheme(source: str, data: Mapping[str, Any]) -> None:
    """https:// or a path; http:// only with this source's allow_http; nothing else."""
    if not is_url(source) or source.startswith("https://"):
        return
    if source.startswith("http://"):
        if data.get("allow_http") is True:
            return
        raise ValueError("plain http: anyone on the path can replace what the hosts read and run as root; " + ALLOWED)
    raise ValueError(f"unsupported URL scheme; {ALLOWED}")


def check_file_source(source: str, data: Mapping[str, Any], what: str) -> None:
    """A file the hosts unpack and run needs its sha256 (and has no signing key)."""
    if data.get("signed_by"):
        raise ValueError(f"{what} is checked by its sha256; signed_by is for an apt repository: remove it")
    if "sha256" in data and data["sha256"] is None:  # absent from data: its own value was refused
        raise ValueError(f"{what} is installed only with its sha256: set sha256 to the 64 hexadecimal digits "
                         "sha256sum prints for it (compare them with the vendor's); each host checks the file "
                         "against it before anything is unpacked or run")


def check_ofed_source(source: str | None, data: Mapping[str, Any]) -> str | None:
    """software.ofed.source: a .tgz (sha256) or an apt repository URL (signed_by); no directory."""
    if source is None:
        return None
    check_scheme(source, data)
    if is_url(source) and not TARBALL.search(source):  # an apt repository (the role's classification)
        if data.get("sha256"):
            raise ValueError("an apt repository is checked by its signing key, not by a sha256: "
                             "remove sha256 and set signed_by")
        if "signed_by" in data and not data["signed_by"]:
            raise ValueError("an apt repository is added only with its signing key: set signed_by to the "
                             "repository's OpenPGP public key file on the controller (.asc or .gpg); racfg "
                             "never adds a repository as trusted=yes")
        return source
    if not TARBALL.search(source):
        raise ValueError("give the MLNX_OFED tarball (MLNX_OFED_LINUX-<release>-<os>-<arch>.tgz, as downloaded) "
                         "and its sha256: a directory cannot be checked against the digest NVIDIA publishes "
                         "beside each download")
    check_file_source(source, data, "a MLNX_OFED tarball")
    return source


def check_weka_dist(dist: str | None, data: Mapping[str, Any]) -> str | None:
    """software.weka.dist: the Weka tarball, with its sha256."""
    if dist is None:
        return None
    check_scheme(dist, data)
    check_file_source(dist, data, "the Weka distribution")
    return dist
