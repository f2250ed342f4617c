"""What a racfg role's file, directory and sysfs value checks compare, shared by the reads of a
host in one module run: racfg_probe (the common role's read of everything the roles manage) and
racfg_drives (the drives, then their schedulers, udev rule and record in the same run, issue 40;
racfg_drive_probe's read, and racfg_probe's with its drives option). One owner for "as wanted",
so that every read agrees with what the roles write.

Every check errs on the side of "differs": a path that cannot be read is different.
"""

from __future__ import annotations

import glob
import grp
import hashlib
import os
import pwd
import re
from collections.abc import Callable


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def owner_differs(path: str, spec: dict, kind: str) -> list[str]:
    """Mode, owner and group of a path against the wanted ones (those given)."""
    try:
        info = os.stat(path)
    except OSError:
        return [f"{kind} {path} missing"]
    out = []
    if spec.get("mode") is not None and (info.st_mode & 0o7777) != int(str(spec["mode"]), 8):
        out.append(f"{kind} {path} mode {oct(info.st_mode & 0o7777)} (wanted {spec['mode']})")
    if spec.get("owner") is not None and _name(pwd.getpwuid, info.st_uid) != spec["owner"]:
        out.append(f"{kind} {path} owner {_name(pwd.getpwuid, info.st_uid)} (wanted {spec['owner']})")
    if spec.get("group") is not None and _name(grp.getgrgid, info.st_gid) != spec["group"]:
        out.append(f"{kind} {path} group {_name(grp.getgrgid, info.st_gid)} (wanted {spec['group']})")
    return out


def _name(lookup, ident: int) -> str:
    try:
        return lookup(ident)[0]
    except KeyError:
        return str(ident)


def file_differs(spec: dict) -> list[str]:
    path = spec["path"]
    have = read_bytes(path)
    if have is None:
        return [f"file {path} missing"]
    if sha1(have) != sha1(spec["content"].encode()):
        return [f"file {path} content"]
    return owner_differs(path, spec, "file")


def directory_differs(spec: dict) -> list[str]:
    if not os.path.isdir(spec["path"]):
        return [f"directory {spec['path']} missing"]
    return owner_differs(spec["path"], spec, "directory")


def values_differ(spec: dict) -> list[str]:
    out = []
    for path in sorted(glob.glob(spec["glob"])):
        data = read_bytes(path)
        have = None if data is None else data.decode(errors="replace").strip()
        if "regexp" in spec:
            if have is None or not re.search(spec["regexp"], have):
                out.append(f"{path} does not match {spec['regexp']}")
        elif have != str(spec["value"]):
            out.append(f"{path} is not {spec['value']}")
    return out


def bounding_capabilities() -> int:
    """The capability bounding set of this process (what the host lets its services have)."""
    status = (read_bytes("/proc/self/status") or b"").decode(errors="replace")
    found = re.search(r"^CapBnd:\s*([0-9a-fA-F]+)", status, re.MULTILINE)
    return int(found.group(1), 16) if found else 0


def applies(spec: dict) -> bool:
    """A check with ``only_if`` is made only on hosts where that holds: ``{exists: path}`` (e.g. a
    governor unit where the host has cpufreq) or ``{lacks_capability: bit}`` (e.g. the chronyd
    drop-in of a host that may not set the clock)."""
    only_if = spec.get("only_if") or {}
    if "exists" in only_if and not os.path.exists(only_if["exists"]):
        return False
    if "absent" in only_if and os.path.exists(only_if["absent"]):
        return False
    has_capability = "lacks_capability" in only_if and bounding_capabilities() >> int(only_if["lacks_capability"]) & 1
    return not has_capability


# A file's diff is for a person to read: one larger than this is named, not shown.
DIFF_MAX_BYTES = 256 * 1024


def content_diffs(files: list[dict]) -> list[dict]:
    """With diffs: each wanted file (that applies) whose content differs, the host's beside the
    rendered one, as Ansible's modules return a diff: drift shows what a deploy would write
    without a check-mode run of the role."""
    out = []
    for spec in files:
        if not applies(spec):
            continue
        have = read_bytes(spec["path"])
        want = spec["content"].encode()
        if have is not None and sha1(have) == sha1(want):
            continue
        if max(len(have or b""), len(want)) > DIFF_MAX_BYTES:
            before, after = f"({len(have or b'')} bytes)\n", f"({len(want)} bytes)\n"
        else:
            before, after = (have or b"").decode(errors="replace"), spec["content"]
        out.append({"before": before, "after": after, "before_header": f"{spec['path']} (on the host)",
                    "after_header": f"{spec['path']} (rendered)"})
    return out


# The checks of paths, by the key of the list they read in a module's options
PATH_CHECKS: tuple[tuple[Callable[[dict], list[str]], str], ...] = (
    (file_differs, "files"), (directory_differs, "directories"), (values_differ, "values"))


def checks_differ(params: dict, checks: tuple[tuple[Callable[[dict], list[str]], str], ...] = PATH_CHECKS,
                  ) -> list[str]:
    """What differs among ``params``' check lists (key -> items), in the order of ``checks``; an item
    is checked only where it applies."""
    return [line for check, key in checks for item in params.get(key) or [] if applies(item)
            for line in check(item)]
