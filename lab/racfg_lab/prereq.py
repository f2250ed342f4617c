"""What the lab needs from this machine, checked before anything is touched.

A missing tool must end in one clear sentence that says what to install, with exit code 3,
not in a half-built lab and a FileNotFoundError.
"""

from __future__ import annotations

import os
import shutil

from racfg.errors import CannotRunError

# tool -> Debian package that provides it
TOOLS = {
    "systemd-nspawn": "systemd-container",
    "debootstrap": "debootstrap",
    "ip": "iproute2",
    "tc": "iproute2",
    "ssh-keygen": "openssh-client",
    "ssh": "openssh-client",
    "losetup": "mount",
    "nsenter": "util-linux",
    "mount": "mount",
    "apt-get": "apt",
    "dpkg-deb": "dpkg",
    "lldpd": "lldpd",  # LLDP of the lab's Ethernet switches
    "lldpcli": "lldpd",
}


def missing() -> tuple[bool, list[str]]:
    """(is root, [missing tools])."""
    return os.geteuid() == 0, [tool for tool in TOOLS if shutil.which(tool) is None]


def require() -> None:
    root, tools = missing()
    problems = []
    if not root:
        problems.append("it must run as root (namespaces, mounts, loop devices)")
    if tools:
        problems.append(f"missing tools: {', '.join(tools)}")
    if not problems:
        return
    packages = sorted({TOOLS[t] for t in tools}) or ["systemd-container", "debootstrap"]
    raise CannotRunError(
        "the virtual lab cannot run here: " + "; ".join(problems),
        hint=("run as root" + (" and " if tools else "") if not root else "")
        + (f"apt-get install {' '.join(packages)}" if tools else "")
        + (", or run scripts/setup.sh as root" if tools else ""),
    )
