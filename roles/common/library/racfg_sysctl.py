#!/usr/bin/python
"""Persist kernel parameters in a sysctl.d file and apply, now, those that differ, then read
the applied ones back (the postcondition: a value the kernel did not take fails the task).

Unlike ansible.posix.sysctl (not available with ansible-core alone) this module handles many
keys at once and is honest about hosts where a key cannot be set: a key that does not exist
(e.g. kernel.numa_balancing on a kernel without NUMA balancing, net.core.* globals inside a
network namespace) or that is read-only (e.g. /proc/sys in a container) is reported under
``not_applied`` with the reason, never as applied. (Not ``skipped``: Ansible reads a result key
of that name as "the task was skipped", which hid the task's changes, also from check mode.)
"""

from __future__ import annotations

import os

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: racfg_sysctl
short_description: Persist and apply a set of sysctls, reporting keys that cannot be set
options:
  settings:
    description: Mapping of sysctl key (dotted) to value.
    type: dict
    required: true
  file:
    description: sysctl.d file that persists the settings across reboots.
    type: path
    required: true
  header:
    description: Comment written at the top of the file.
    type: str
    default: Managed by racfg. Do not edit.
  apply:
    description: Also write the running values (not only the file).
    type: bool
    default: true
  proc_root:
    description: Where the sysctl tree is (for tests).
    type: path
    default: /proc/sys
"""

RETURN = r"""
applied: {description: keys whose running value was changed, type: dict}
unchanged: {description: keys already at the wanted value, type: list}
not_applied: {description: key -> reason it could not be applied now, type: dict}
file_changed: {description: whether the sysctl.d file was rewritten, type: bool}
"""


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


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "settings": {"type": "dict", "required": True},
            "file": {"type": "path", "required": True},
            "header": {"type": "str", "default": "Managed by racfg. Do not edit."},
            "apply": {"type": "bool", "default": True},
            "proc_root": {"type": "path", "default": "/proc/sys"},
        },
        supports_check_mode=True,
    )
    settings = module.params["settings"]
    path = module.params["file"]
    content = render_file(settings, module.params["header"])
    try:
        with open(path, encoding="utf-8") as handle:
            current = handle.read()
    except FileNotFoundError:
        current = None
    file_changed = current != content
    if file_changed and not module.check_mode:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.racfg-tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(content)
        os.chmod(tmp, 0o644)
        module.atomic_move(tmp, path)

    to_apply, unchanged, skipped = plan(settings, module.params["proc_root"])
    applied = {}
    if module.params["apply"]:
        for key, (old, new) in to_apply.items():
            if not module.check_mode:
                try:
                    with open(key_path(module.params["proc_root"], key), "w", encoding="ascii") as handle:
                        handle.write(new)
                except OSError as exc:
                    skipped[key] = f"write refused: {exc.strerror} (running value {old}, wanted {new})"
                    continue
            applied[key] = {"before": old, "after": new}
    if not module.check_mode:
        wrong = unapplied(applied, module.params["proc_root"])
        if wrong:
            module.fail_json(msg="kernel parameters not at their value after writing them: " + "; ".join(wrong),
                             applied=applied, not_applied=skipped)
    module.exit_json(
        changed=file_changed or bool(applied),
        applied=applied,
        unchanged=unchanged,
        not_applied=skipped,
        file_changed=file_changed,
        diff={"before": current or "", "after": content, "before_header": path, "after_header": path},
    )


if __name__ == "__main__":
    main()
