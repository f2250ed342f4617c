"""What racfg_sysctl would do with a set of kernel parameters, read-only: the module that applies
them and racfg_probe, which compares them in the common role's one read of a host, share it, so
a converged host's probe and the apply agree on what "as wanted" is.

A key names a file under /proc/sys and a value becomes a line of the sysctl.d file, so both are
checked here as well as by racfg's schema (these modules may be run with variables that never went
through it): a key is ``a.b.c`` (no '/', no empty part, so no '..'), and its file, symlinks resolved,
lies inside /proc/sys; a value is one line."""

from __future__ import annotations

import os
import re

KEY = re.compile(r"^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+$")
LINE_BREAKERS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # control characters but the tab /proc/sys itself writes


def compare(settings: dict, file: str, header: str, proc_root: str = "/proc/sys", writable=None) -> dict:
    """What differs (the persisted file, running values that can be set) and what cannot be set
    here and why (``not_applied``, as racfg_sysctl reports it). A refused key or value differs (the
    apply then fails on it, naming it) and is not read."""
    bad = refused(settings, proc_root)
    if bad:
        return {"differs": [f"kernel parameter {problem}" for problem in bad], "not_applied": {}}
    try:
        with open(file, encoding="utf-8") as handle:
            current: str | None = handle.read()
    except OSError:
        current = None
    differs = [] if current == render_file(settings, header) else [f"file {file} content"]
    to_apply, _unchanged, skipped = plan(settings, proc_root, writable or is_writable)
    differs += [f"kernel parameter {key} is {old} (wanted {new})" for key, (old, new) in to_apply.items()]
    return {"differs": differs, "not_applied": skipped}


def normalise(value: object) -> str:
    """Sysctl values compare by whitespace-separated fields ("4096\t87380" == "4096 87380")."""
    if isinstance(value, bool):
        value = int(value)
    return " ".join(str(value).split())


def render_file(settings: dict, header: str) -> str:
    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"{key} = {normalise(settings[key])}" for key in sorted(settings)]
    return "\n".join(lines) + "\n"


def key_path(proc_root: str, key: str) -> str:
    """The file of ``key`` under ``proc_root``; ValueError for a key that is not ``a.b.c`` or whose file,
    symlinks resolved, lies outside ``proc_root``."""
    if not isinstance(key, str) or not KEY.match(key):
        raise ValueError(f"{key!r}: not a sysctl key a.b.c (parts of letters, digits, '_', '-'; no '/', no '..')")
    path = os.path.join(proc_root, *key.split("."))
    root = os.path.realpath(proc_root)
    if os.path.commonpath([root, os.path.realpath(path)]) != root:
        raise ValueError(f"{key!r}: resolves to {os.path.realpath(path)}, outside {proc_root}")
    return path


def refused(settings: dict, proc_root: str = "/proc/sys") -> list[str]:
    """Why each refused key or value may not be applied (key_path's reasons; a value that is not one line)."""
    out = []
    for key in sorted(settings, key=str):
        try:
            key_path(proc_root, key)
        except ValueError as exc:
            out.append(str(exc))
            continue
        value = settings[key]
        if isinstance(value, bool) or not isinstance(value, (str, int)) or LINE_BREAKERS.search(str(value)):
            out.append(f"{key}: value {value!r} is not one line of text or an integer")
    return out


def is_writable(path: str) -> bool:
    return os.access(path, os.W_OK)


def plan(settings: dict, proc_root: str, writable=is_writable) -> tuple[dict, list, dict]:
    """Return (to_apply {key: (old, new)}, unchanged [keys], skipped {key: reason})."""
    to_apply, unchanged, skipped = {}, [], {}
    for key in sorted(settings):
        want = normalise(settings[key])
        path = key_path(proc_root, key)
        if not os.path.exists(path):
            skipped[key] = "not present on this kernel or in this network namespace"
            continue
        try:
            with open(path, encoding="ascii") as handle:
                have = normalise(handle.read())
        except OSError as exc:
            skipped[key] = f"unreadable: {exc.strerror}"
            continue
        if have == want:
            unchanged.append(key)
        elif not writable(path):
            skipped[key] = f"read-only here (running value {have}, wanted {want})"
        else:
            to_apply[key] = (have, want)
    return to_apply, unchanged, skipped


def unapplied(applied: dict, proc_root: str) -> list[str]:
    """The written keys whose running value is not the wanted one when read back: a write the
    kernel accepted but ignored or clamped (a value out of its range) is a failure, not a change."""
    out = []
    for key, change in sorted(applied.items()):
        with open(key_path(proc_root, key), encoding="ascii") as handle:
            have = normalise(handle.read())
        if have != change["after"]:
            out.append(f"{key}: Expected: {change['after']} Actual: {have}")
    return out
