"""MLNX_OFED version: ``ofed_info -s`` and comparing it with the inventory's pin.

``ofed_info -s`` prints one line such as ``MLNX_OFED_LINUX-5.5-1.0.3.2:`` (recorded on RHEL 7.4,
MLNX_OFED 5.5). Inventories pin the bare version, sometimes without the last component
(``4.5-1.0.1`` for ``4.5-1.0.1.0``), the way DeepOps gates its OFED install on ``ofed_info -s``.
The release a MLNX_OFED distribution holds (read on the controller) is compared the same way.
"""

from __future__ import annotations

import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

from racfg.hostfacts.common import require_text
from racfg.hostfacts.parse_error import ParseError

TOOL = "ofed_info"
_VERSION = r"\d+\.\d+-\d+(?:\.\d+)*"
_LINE_RE = re.compile(
    rf"^(?P<full>(?P<flavour>MLNX_OFED_LINUX|MLNX_EN|OFED|OFED-internal)[-_](?P<version>{_VERSION})):?$"
)


@dataclass(frozen=True)
class OfedVersion:
    """``full`` as printed without the colon (``MLNX_OFED_LINUX-5.5-1.0.3.2``), and ``version`` (``5.5-1.0.3.2``)."""

    full: str
    flavour: str
    version: str

    def matches(self, pin: str) -> bool:
        """True when this version is the pinned one (see :func:`version_matches`)."""
        return version_matches(self.version, pin)


def parse_ofed_info_s(text: str | bytes) -> OfedVersion:
    """Parse ``ofed_info -s``. Other lines (a shell warning on stderr merged in) are skipped; a missing
    version line (``ofed_info: command not found``, inbox drivers) is a ParseError."""
    for line in require_text(text, TOOL):
        match = _LINE_RE.match(line.strip())
        if match:
            return OfedVersion(full=match["full"], flavour=match["flavour"], version=match["version"])
    raise ParseError(TOOL, "-s: no MLNX_OFED_LINUX-X.Y-... version line")


def _components(version: str) -> list[int]:
    text = version.strip()
    for prefix in ("MLNX_OFED_LINUX-", "MLNX_OFED_LINUX_"):
        text = text.removeprefix(prefix)
    if not re.fullmatch(_VERSION, text.rstrip(":")):
        raise ParseError(TOOL, f"not an OFED version: {version!r} (expected like 5.5-1.0.3.2)")
    return [int(part) for part in re.split(r"[.-]", text.rstrip(":"))]


def version_matches(installed: str, pin: str) -> bool:
    """True when ``installed`` is ``pin`` or starts with it component-wise.

    ``version_matches("4.5-1.0.1.0", "4.5-1.0.1")`` is True, ``("4.5-1.0.1.0", "4.5-1.0.1.1")`` False,
    and ``("4.5-1.0.10.0", "4.5-1.0.1")`` False (components are numbers, not text prefixes).
    """
    have, want = _components(installed), _components(pin)
    return have[: len(want)] == want


# --- MLNX_OFED distributions (on the controller) -----------------------------------------------
# Mellanox names a distribution MLNX_OFED_LINUX-<release>-<os>-<arch> (directory, .tgz, .iso);
# an unpacked one carries mlnxofedinstall and a .mlnx file. Deploy's preflight and the ofed
# role read the release here, so a distribution of another release than the pin is refused
# before anything is copied or installed.
INSTALLER = "mlnxofedinstall"
_DIST_NAME_RE = re.compile(rf"MLNX_OFED_LINUX-({_VERSION})(?:-|$|\.t)")


class DistributionError(ValueError):
    """A MLNX_OFED source that cannot be installed as given (missing, no installer, no release)."""


def release_from_name(name: str) -> str:
    """``.../MLNX_OFED_LINUX-5.8-1.0.1.1-ubuntu22.04-x86_64.tgz`` -> ``5.8-1.0.1.1``; '' if not named so."""
    match = _DIST_NAME_RE.search(str(name).rstrip("/").rsplit("/", 1)[-1])
    return match.group(1) if match else ""


def _release_in_tarball(path: Path) -> str:
    """The release of the directory a tarball unpacks to (its first member's top directory)."""
    try:
        with tarfile.open(path) as archive:
            first = archive.next()
    except (OSError, tarfile.TarError) as exc:
        raise DistributionError(f"MLNX_OFED tarball {path} cannot be read on the controller: {exc}") from exc
    if first is None:
        raise DistributionError(f"MLNX_OFED tarball {path} is empty")
    return release_from_name(first.name.split("/")[0]) or release_from_name(path.name)


def distribution_release(path: Path) -> str:
    """The release a MLNX_OFED distribution holds: a directory with ``mlnxofedinstall`` (release from
    its name or, renamed, its ``.mlnx`` file) or a tarball (from the directory it unpacks to).
    Raises DistributionError when it is missing or tells no release: what cannot be compared
    with the pin is not installed."""
    if path.is_dir():
        if not (path / INSTALLER).is_file():
            raise DistributionError(f"MLNX_OFED source {path} holds no {INSTALLER}")
        release = release_from_name(path.name)
        if not release and (path / ".mlnx").is_file():
            release = (path / ".mlnx").read_text().strip()
    elif path.is_file():
        release = _release_in_tarball(path)
    else:
        raise DistributionError(f"MLNX_OFED source {path} does not exist on the controller")
    if not release:
        raise DistributionError(f"MLNX_OFED source {path}: cannot tell its release (expected a name like "
                                "MLNX_OFED_LINUX-5.8-1.0.1.1-ubuntu22.04-x86_64 or a .mlnx file)")
    return release
