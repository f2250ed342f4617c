"""Mounted filesystems: ``/proc/mounts`` (the kernel's own list, which fstab cannot fake).

A mount of an external array is judged by what the kernel reports: source, filesystem type and
options. Not every option given to ``mount`` shows there: fstab-only ones (``_netdev``, ``nofail``)
never do, and a FUSE filesystem shows only the kernel's generic options, not its helper's own
(sshfs's ``reconnect`` or ``IdentityFile=``). ``reported_options`` splits the declared options into
those the kernel would show and those it cannot, so a check never fails on an option it cannot see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from racfg.hostfacts.parse_error import ParseError

# Options only mount(8) / fstab read; the kernel never lists them.
FSTAB_ONLY = {"defaults", "auto", "noauto", "nofail", "_netdev", "user", "users", "nouser", "owner", "group"}
# Options any filesystem's entry can show: the VFS mount flags.
VFS_FLAGS = {"ro", "rw", "nosuid", "nodev", "noexec", "noatime", "nodiratime", "relatime", "strictatime", "sync",
             "dirsync", "lazytime", "mand"}
# Options the FUSE kernel module itself shows besides the VFS flags.
FUSE_OPTIONS = {"allow_other", "default_permissions"}
# NFS options the kernel shows under another spelling.
NFS_ALIASES = {"nfsvers": "vers", "tcp": "proto=tcp", "udp": "proto=udp"}


@dataclass(frozen=True)
class Mount:
    source: str
    point: str
    fstype: str
    options: tuple[str, ...]


def _unescape(field: str) -> str:
    """/proc/mounts writes space, tab, newline and backslash as octal escapes (\\040 ...)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_proc_mounts(text: str) -> list[Mount]:
    """Every line of ``/proc/mounts`` (or ``/proc/self/mounts``): six fields per mount."""
    mounts = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 6:
            raise ParseError(f"/proc/mounts line {number}: expected 6 fields, got {len(fields)}: {line[:120]!r}")
        source, point, fstype, options = (_unescape(f) for f in fields[:4])
        mounts.append(Mount(source, point, fstype, tuple(options.split(","))))
    return mounts


def mount_at(mounts: list[Mount], point: str) -> Mount | None:
    """The mount visible at ``point``: the last one mounted there (later mounts hide earlier ones)."""
    found = [m for m in mounts if m.point.rstrip("/") == point.rstrip("/") or m.point == point]
    return found[-1] if found else None


def _is_nfs(fstype: str) -> bool:
    return fstype in ("nfs", "nfs4")


def reported_options(declared: list[str], fstype: str) -> tuple[list[str], list[str]]:
    """(options the kernel shows for ``fstype`` as declared or aliased, options it cannot show)."""
    shown, hidden = [], []
    for option in declared:
        name = option.split("=", 1)[0]
        if name in FSTAB_ONLY or name.startswith("x-") or name == "comment":
            hidden.append(option)
        elif _is_nfs(fstype) or name in VFS_FLAGS or (fstype.startswith("fuse") and name in FUSE_OPTIONS):
            shown.append(option)
        else:
            hidden.append(option)
    return shown, hidden


def option_present(option: str, mount: Mount) -> bool:
    """Whether the kernel shows ``option`` on ``mount``; NFS versions match by prefix (vers=4 is vers=4.2)."""
    name, _, value = option.partition("=")
    if _is_nfs(mount.fstype) and name in NFS_ALIASES:
        alias = NFS_ALIASES[name]
        option = f"{alias}={value}" if value and "=" not in alias else alias
        name, _, value = option.partition("=")
    if option in mount.options:
        return True
    if _is_nfs(mount.fstype) and name == "vers" and value:
        return any(o.startswith("vers=") and (o[5:] == value or o[5:].startswith(value + "."))
                   for o in mount.options)
    return False
