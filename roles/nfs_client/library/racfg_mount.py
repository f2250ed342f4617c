#!/usr/bin/python
"""Record a filesystem in /etc/fstab and have it mounted from there, as the entry says.

racfg ships this module so that the wheel alone deploys: ``ansible.posix.mount`` comes with the
``ansible`` package (a collection bundle of some hundred megabytes), not with ansible-core, and the
role needs only this much of it. The entry is the persistent truth (it brings the export back
after a reboot); the live mount is made from it with ``mount PATH``, so what boots and what runs
are the same line.

A mount whose entry changed, or that is mounted from another source or filesystem type, is
unmounted and mounted again (not ``mount -o remount``, which NFS and FUSE accept while keeping
some old options: the role's postcondition would then fail on a mount that looks changed). A busy
mount point makes the task fail with mount's own words rather than leave the old mount silently.
Check mode reports what would change and touches nothing.
"""

from __future__ import annotations

import os

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: racfg_mount
short_description: Manage one /etc/fstab entry and mount it from there
options:
  path: {description: Mount point., type: path, required: true}
  src: {description: What is mounted (server:export for NFS and sshfs)., type: str, required: true}
  fstype: {description: Filesystem type as fstab names it (nfs, fuse.sshfs)., type: str, required: true}
  opts: {description: Mount options, comma-separated., type: str, default: defaults}
  state:
    description: mounted (entry present and mounted), present (entry only), absent (neither).
    type: str
    choices: [mounted, present, absent]
    default: mounted
  fstab: {description: The fstab file (for tests)., type: path, default: /etc/fstab}
"""

RETURN = r"""
entry: {description: the fstab line wanted (absent - none), type: str}
fstab_changed: {description: whether the fstab file was rewritten, type: bool}
mount_action: {description: none, mounted, remounted or unmounted, type: str}
"""

MOUNTS = "/proc/self/mounts"


def escape(field: str) -> str:
    """fstab and /proc/mounts write space, tab, newline and backslash in a field as octal escapes."""
    return "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in field)


def unescape(field: str) -> str:
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit() and len(field[i + 1:i + 4]) == 3:
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def entry_line(src: str, path: str, fstype: str, opts: str) -> str:
    return " ".join((escape(src), escape(path), fstype, opts or "defaults", "0", "0"))


def rewrite_fstab(text: str, path: str, wanted: str | None) -> str:
    """``text`` with the entry of ``path`` being ``wanted`` (None: no entry). The first entry of the
    mount point is replaced in place, later ones are dropped (mount reads the last, boot mounts
    each); every other line, comments included, stays as it was."""
    out, placed = [], False
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and not fields[0].startswith("#") and unescape(fields[1]).rstrip("/") == path.rstrip("/"):
            if wanted is not None and not placed:
                out.append(wanted if fields[:6] != wanted.split() else line)
                placed = True
            continue
        out.append(line)
    if wanted is not None and not placed:
        out.append(wanted)
    return "\n".join(out) + "\n" if out else ""


def live_mount(path: str, mounts_text: str) -> tuple[str, str] | None:
    """(source, fstype) of the mount in use at ``path`` (the last one mounted there), or None."""
    found = None
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) >= 3 and unescape(fields[1]).rstrip("/") == path.rstrip("/"):
            found = (unescape(fields[0]), fields[2])
    return found


def same_mount(live: tuple[str, str], src: str, fstype: str) -> bool:
    """Whether the live mount is of ``src`` as ``fstype`` (an NFS entry of vers=4 shows as nfs4)."""
    return live[0].rstrip("/") == src.rstrip("/") and live[1].startswith(fstype)


def read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


def write_fstab(module: AnsibleModule, fstab: str, content: str) -> None:
    tmp = f"{fstab}.racfg-tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(content)
    os.chmod(tmp, 0o644)
    module.atomic_move(tmp, fstab)


def run_mount(module: AnsibleModule, argv: list[str], what: str) -> None:
    rc, out, err = module.run_command(argv)
    if rc != 0:
        module.fail_json(msg=f"{what} {module.params['path']} failed (rc {rc}): {(err or out).strip()}",
                         cmd=" ".join(argv))


def mount_action(module: AnsibleModule, fstab_changed: bool) -> str:
    """What the live mount needs: none, mounted, remounted or unmounted (done unless check mode)."""
    params = module.params
    path = params["path"]
    live = live_mount(path, read(MOUNTS))
    if params["state"] == "present":
        return "none"
    if params["state"] == "absent":
        if live is None:
            return "none"
        if not module.check_mode:
            run_mount(module, [module.get_bin_path("umount", True), path], "unmounting")
        return "unmounted"
    if live is not None and not fstab_changed and same_mount(live, params["src"], params["fstype"]):
        return "none"
    if module.check_mode:
        return "mounted" if live is None else "remounted"
    if live is not None:
        run_mount(module, [module.get_bin_path("umount", True), path], "unmounting")
    os.makedirs(path, exist_ok=True)
    table = [] if params["fstab"] == "/etc/fstab" else ["--fstab", params["fstab"]]
    run_mount(module, [module.get_bin_path("mount", True), *table, path], "mounting")
    return "mounted" if live is None else "remounted"


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "path": {"type": "path", "required": True},
            "src": {"type": "str", "required": True},
            "fstype": {"type": "str", "required": True},
            "opts": {"type": "str", "default": "defaults"},
            "state": {"type": "str", "choices": ["mounted", "present", "absent"], "default": "mounted"},
            "fstab": {"type": "path", "default": "/etc/fstab"},
        },
        supports_check_mode=True,
    )
    params = module.params
    wanted = None if params["state"] == "absent" else entry_line(params["src"], params["path"], params["fstype"],
                                                                 params["opts"])
    before = read(params["fstab"])
    after = rewrite_fstab(before, params["path"], wanted)
    fstab_changed = after != before
    if fstab_changed and not module.check_mode:
        write_fstab(module, params["fstab"], after)
    action = mount_action(module, fstab_changed)
    module.exit_json(
        changed=fstab_changed or action != "none",
        entry=wanted or "",
        fstab_changed=fstab_changed,
        mount_action=action,
        diff={"before": before, "after": after, "before_header": params["fstab"], "after_header": params["fstab"]},
    )


if __name__ == "__main__":
    main()
