"""MLNX_OFED version: ``ofed_info -s`` and comparing it with the inventory's pin.

``ofed_info -s`` prints one line such as ``MLNX_OFED_LINUX-5.5-1.0.3.2:`` (recorded on RHEL 7.4,
MLNX_OFED 5.5). Inventories pin the bare version, sometimes without the last component
(``4.5-1.0.1`` for ``4.5-1.0.1.0``), the way DeepOps gates its OFED install on ``ofed_info -s``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from racfg.hostfacts.common import require_text
from racfg.hostfacts.errors import ParseError

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


def compare_versions(installed: str, pin: str) -> int:
    """-1, 0, 1 as ``installed`` is older than, matches, or is newer than ``pin`` (pin's precision)."""
    have, want = _components(installed), _components(pin)
    head = have[: len(want)]
    return (head > want) - (head < want)
