"""What uses a declared drive: the kernel's holders of it and of its partitions, followed all the way
down (LVM, dm-crypt and other device-mapper targets, md arrays: ``/sys/class/block/*/holders``), the
mounts of any of them in every mount namespace this module can see, swap, and the kernel's own
answer to an exclusive open. A drive anything uses is never wiped (racfg_drives, nvme_storage).

Why files, not ``lsblk``/``dmsetup``/``mdadm`` per drive: a deploy's read pass reads the drives on
every run; the holders, the mount tables and the swap list are files, read once per run (the mount
tables and swaps) or once per device (its holders), with no process per drive.

Why the exclusive open too: the kernel refuses ``O_EXCL`` on a block device that is mounted, swapped
on or held, or whose partition is, whichever namespace did it. It catches what this module cannot
see (a mount in the namespace of a container whose processes are hidden from it), but names no one:
the walk over holders and mount tables names the chain (``/dev/nvme0n1p1 -> dm-0 (LVM vg0-lv0)
mounted on /srv/data``). ``wipefs`` opens the drive the same way when it wipes, so a drive taken
between this read and the wipe is refused there too.

Fail closed: a read that fails (a mount table of this module's own namespace, /proc/swaps, a sysfs
directory of the drive or a holder) is a reason the drive is in use, never a sign it is free.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass, field

SYS = "/sys"
PROC = "/proc"
MAX_DEPTH = 16  # holders of holders: a real stack is 3-4 deep (partition, crypt, LVM, md)
_OCTAL = re.compile(r"\\([0-7]{3})")


def _unescape(text: str) -> str:
    """The kernel writes a blank in a path as \\040 (mountinfo, /proc/swaps)."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), text)


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def parse_mountinfo(text: str) -> list[tuple[str, str, str]]:
    """``/proc/<pid>/mountinfo``: (major:minor, source, mount point) of each mount. A filesystem
    without a device of its own (btrfs, for one) shows an anonymous 0:N: its source names it."""
    out = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if sep and len(fields) >= 5:
            out.append((fields[2], _unescape(tail[1]) if len(tail) > 1 else "", _unescape(fields[4])))
    return out


def parse_swaps(text: str) -> list[str]:
    """``/proc/swaps``: the file or device of each active swap area (the first line is a header)."""
    return [_unescape(line.split()[0]) for line in text.splitlines()[1:] if line.split()]


@dataclass
class UseContext:
    """What this host's mount tables and swap list say, read once per run for all drives."""

    mounts: dict[str, list[str]] = field(default_factory=dict)  # major:minor or source -> where mounted
    swaps: set[str] = field(default_factory=set)  # each swap area's name, and its major:minor if a device
    errors: list[str] = field(default_factory=list)  # reads that failed: every drive is in use


def _mount_tables(proc: str) -> list[tuple[str, str]]:
    """(where, mountinfo text): this module's mount namespace, then one of each other namespace a
    process it can see lives in. Those other reads are best effort (a process may exit meanwhile):
    a mount there that this misses still makes the exclusive open say busy."""
    tables = [("", _read(f"{proc}/self/mountinfo"))]
    try:
        seen = {os.readlink(f"{proc}/self/ns/mnt")}
    except OSError:
        return tables
    for pid in sorted((p for p in os.listdir(proc) if p.isdigit()), key=int):
        try:
            namespace = os.readlink(f"{proc}/{pid}/ns/mnt")
            if namespace in seen:
                continue
            text = _read(f"{proc}/{pid}/mountinfo")
        except OSError:
            continue
        seen.add(namespace)
        tables.append((f" (in the mount namespace of pid {pid})", text))
    return tables


def read_use_context(proc: str = PROC) -> UseContext:
    """The mount tables of every mount namespace visible here and the active swap areas."""
    context = UseContext()
    try:
        for where, text in _mount_tables(proc):
            for device, source, point in parse_mountinfo(text):
                for key in {device, source} - {""}:
                    context.mounts.setdefault(key, []).append(point + where)
    except OSError as exc:
        context.errors.append(f"the mount table could not be read ({proc}/self/mountinfo: {exc.strerror})")
    try:
        for name in parse_swaps(_read(f"{proc}/swaps")):
            context.swaps.add(name)
            try:
                rdev = os.stat(name).st_rdev
                context.swaps.add(f"{os.major(rdev)}:{os.minor(rdev)}")
            except OSError:
                pass  # a swap file, or a device this namespace has no node for: matched by name
    except OSError as exc:
        context.errors.append(f"the swap areas could not be read ({proc}/swaps: {exc.strerror})")
    return context


def kernel_name(path: str, sysfs: str = SYS) -> str:
    """The kernel's name of block device ``path`` (``/dev/nvme0n1`` -> nvme0n1, a lab's bound loop
    device -> loop3), from its device number: no process, and right where the path is a symlink or
    another node of the same device."""
    rdev = os.stat(path).st_rdev
    return os.path.basename(os.readlink(f"{sysfs}/dev/block/{os.major(rdev)}:{os.minor(rdev)}"))


class _Walk:
    """One drive's holder tree, read from sysfs; ``found`` collects each chain that ends in a use."""

    def __init__(self, context: UseContext, sysfs: str) -> None:
        self.context, self.sysfs, self.found = context, sysfs, []

    def node(self, name: str) -> str:
        return f"{self.sysfs}/class/block/{name}"

    def label(self, name: str) -> tuple[str, set[str]]:
        """A holder as a person knows it, and the names a mount or swap entry may give it."""
        base, names = self.node(name), {f"/dev/{name}"}
        if os.path.isdir(f"{base}/dm"):
            dm_name, uuid = _read(f"{base}/dm/name").strip(), _read(f"{base}/dm/uuid").strip()
            names.add(f"/dev/mapper/{dm_name}")
            kind = next((k for prefix, k in (("LVM-", "LVM"), ("CRYPT-", "dm-crypt"), ("mpath-", "multipath"))
                         if uuid.startswith(prefix)), "device-mapper")
            return f"{name} ({kind} {dm_name})", names
        if os.path.isdir(f"{base}/md"):
            return f"{name} (md {_read(f'{base}/md/level').strip()})", names
        return name, names

    def uses(self, name: str, names: set[str]) -> str:
        """How this one device is used directly: mounted (where), swap."""
        device = _read(f"{self.node(name)}/dev").strip()
        points = sorted({p for key in {device, *names} for p in self.context.mounts.get(key, [])})
        said = [f"mounted on {', '.join(points)}"] if points else []
        if {device, *names} & self.context.swaps:
            said.append("used as swap")
        return " and ".join(said)

    def visit(self, name: str, here: str, names: set[str], depth: int, top: bool) -> None:
        used = self.uses(name, names)
        if used:
            self.found.append(f"{here} {used}")
        holders = sorted(os.listdir(f"{self.node(name)}/holders"))
        if holders and depth >= MAX_DEPTH:
            self.found.append(f"{here} -> {', '.join(holders)} (holders deeper than {MAX_DEPTH} levels)")
            return
        for holder in holders:
            label, holder_names = self.label(holder)
            self.visit(holder, f"{here} -> {label}", holder_names, depth + 1, False)
        if not holders and not used and not top:
            self.found.append(f"{here} active")  # a holder nothing mounts: an open array, mapping or LV

    def partitions(self, kname: str) -> list[str]:
        base = self.node(kname)
        return sorted(e for e in os.listdir(base) if e.startswith(kname) and os.path.exists(f"{base}/{e}/partition"))


def exclusive_open(path: str) -> str:
    """'' when the kernel lets this module open ``path`` exclusively (nothing holds it), else why not."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return (f"{path} is busy: the kernel refuses to open it exclusively (mounted, swap or held "
                    "where this host's mount namespaces and /sys do not show it)")
        return f"{path} could not be opened exclusively to see whether anything holds it ({exc.strerror})"
    os.close(fd)
    return ""


def in_use(path: str, kname: str, context: UseContext, sysfs: str = SYS) -> list[str]:
    """Why drive ``path`` (kernel name ``kname``) is in use, one entry per chain from it or one of its
    partitions to a use; empty when nothing uses it."""
    walk = _Walk(context, sysfs)
    reasons = list(context.errors)
    try:
        walk.visit(kname, path, {path, f"/dev/{kname}"}, 0, True)
        for part in walk.partitions(kname):
            walk.visit(part, f"/dev/{part}", {f"/dev/{part}"}, 1, True)
    except OSError as exc:
        reasons.append(f"its holders could not be read ({exc.filename}: {exc.strerror})")
    reasons += walk.found
    busy = exclusive_open(path)
    if busy and not walk.found:  # the walk named who holds it; else say what the kernel says
        reasons.append(busy)
    return reasons
