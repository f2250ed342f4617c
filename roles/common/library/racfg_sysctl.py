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
from ansible.module_utils.racfg_sysctl_plan import key_path, plan, refused, render_file, unapplied

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
    bad = refused(settings, module.params["proc_root"])
    if bad:  # before anything is written: a key outside /proc/sys, a value that would add a line
        module.fail_json(msg="kernel parameters refused: " + "; ".join(bad), refused=bad)
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
