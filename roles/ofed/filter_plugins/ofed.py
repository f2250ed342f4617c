"""The ofed role's decisions about MLNX_OFED releases: which release is installed, which one a
distribution holds, and whether it is the inventory's pin.

The version grammar, the pin comparison and the reading of a distribution belong to
:mod:`racfg.hostfacts.ofed` (deploy's preflight, validate and drift use the same); these filters
hand them to the role, so a host with ``4.5-1.0.10.0`` is never taken for a ``4.5-1.0.1`` pin the
way a text prefix would.

``ofed_dist_release`` reads the controller's file system: filters run on the controller, which
is where a ``software.ofed.source`` that is not a URL lives (the role copies it to the hosts
only after this check, so a distribution of another release is refused before any change).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ansible.errors import AnsibleFilterError

try:
    from racfg.hostfacts import ofed
    from racfg.hostfacts.parse_error import ParseError
except ImportError as exc:  # pragma: no cover - Ansible run from another Python than racfg's
    raise AnsibleFilterError(f"racfg is not importable ({exc}); run Ansible from racfg's Python") from exc


def installed_version(stdout: str, rc: int = 0) -> str:
    """The version ``ofed_info -s`` printed, or '' (no MLNX_OFED: command missing, inbox stack)."""
    if rc != 0:
        return ""
    try:
        return ofed.parse_ofed_info_s(stdout).version
    except ParseError:
        return ""


def matches_pin(installed: str, pin: str) -> bool:
    """True when ``installed`` is the pinned release (component-wise, pin's precision)."""
    if not installed or not pin:
        return False
    try:
        return ofed.version_matches(installed, str(pin))
    except ParseError as exc:
        raise AnsibleFilterError(f"software.ofed.version {pin!r}: {exc}") from exc


def release_from_name(name: str) -> str:
    """``.../MLNX_OFED_LINUX-5.8-1.0.1.1-ubuntu22.04-x86_64.tgz`` -> ``5.8-1.0.1.1``; '' if not named so."""
    return ofed.release_from_name(name)


def dist_release(source: str) -> str:
    """The release of a distribution on the controller (an absolute path: a directory or a tarball)."""
    path = Path(str(source)).expanduser()
    if not path.is_absolute():
        raise AnsibleFilterError(f"MLNX_OFED source {source}: give an absolute path on the controller or a URL")
    try:
        return ofed.distribution_release(path)
    except ofed.DistributionError as exc:
        raise AnsibleFilterError(str(exc)) from exc


class FilterModule:
    """ofed_installed_version, ofed_matches_pin, ofed_release_from_name, ofed_dist_release."""

    def filters(self) -> dict[str, Any]:
        return {
            "ofed_installed_version": installed_version,
            "ofed_matches_pin": matches_pin,
            "ofed_release_from_name": release_from_name,
            "ofed_dist_release": dist_release,
        }
