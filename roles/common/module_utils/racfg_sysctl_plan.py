"""What racfg_sysctl would do with a set of kernel parameters, read-only: the module that applies
them and racfg_probe, which compares them in the common role's one read of a host, share it, so
a converged host's probe and the apply agree on what "as wanted" is."""

from __future__ import annotations

import os


def compare(settings: dict, file: str, header: str, proc_root: str = "/proc/sys", writable=None) -> dict:
    """What differs (the persisted file, running values that can be set) and what cannot be set
    here and why (``not_applied``, as racfg_sysctl reports it)."""
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
    return os.path.join(proc_root, *key.split("."))


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
