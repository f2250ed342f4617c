#!/usr/bin/python
"""Read the declared data drives in one pass and say which ones a storage system owns.

Why a module: the role must decide, before any wipe or scheduler step, whether a drive belongs
to Weka. That decision combines the Weka cluster's own drive list (``weka cluster drive -J``),
the Weka partition signature on the drive (a GPT partition of Weka's type GUID, written when
Weka signs a drive) and the kernel's view (a drive Weka drives itself leaves the kernel's block
layer). One module reads all of it for all drives in one SSH round trip, read-only, also under
``--check``; the role's YAML then only acts on the drives this module reports as free.

A drive is *owned by Weka* when any of these hold:
- its path or serial is in the cluster's drive list for this host;
- its partition table holds a partition of Weka's type GUID;
- Weka is installed here and its drive list could not be read (the safe side: any drive may be
  Weka's, a present one as much as one Weka took from the kernel).

A drive is *in use* (``in_use``, racfg_drive_use) when it or anything below it (its partitions,
their holders all the way down: LVM, dm-crypt and other device-mapper targets, md arrays) is
mounted in a mount namespace this module can see, used as swap, an active holder, or when the
kernel refuses to open it exclusively; and when a read of it failed (lsblk, blkid, partx, sysfs,
the mount table, /proc/swaps). The role never wipes a drive in use, and refuses it by name.

With ``state`` the same run also compares what the role's apply tasks manage on the free drives
(their I/O scheduler, the udev rule that keeps it, the drives' record), which depend on what
this run reads (each drive's kernel name, model and serial): a converged storage host costs the
role one module run, not two (issue 40).

The read itself is ``racfg_drives`` (roles/common/module_utils): racfg_probe runs the same read
with these options (its ``drives``) where a play has both roles, as playbooks/read.yml does.
"""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.racfg_drives import WEKA_PARTITION_TYPE, read_drives

DOCUMENTATION = r"""
module: racfg_drive_probe
short_description: Probe declared data drives; report identity, signatures and Weka ownership
options:
  drives:
    description: The declared drives, each {path, model}.
    type: list
    elements: dict
    required: true
  host_name:
    description: This host's name in the Weka cluster (its hostname).
    type: str
    required: true
  weka_partition_type:
    description: GPT partition type GUID Weka writes when it signs a drive.
    type: str
    default: 993ec906-b4e2-11e7-a205-a0a8cd3ea1de
  weka_cli:
    description: The weka command; when absent from PATH, Weka is not installed here.
    type: str
    default: weka
  state:
    description: >-
      What to compare on the free drives, read-only: {scheduler (the I/O scheduler each free drive
      should run), record ({path, mode, owner, group} of the drives' record; its content is the
      record of this read), files (with content, mode, owner, group), directories, diffs (return
      each differing file beside its wanted content, as --diff shows it)}. Empty: compare nothing.
    type: dict
    default: {}
"""

RETURN = r"""
drives: {description: "one entry per declared drive (path, present, kname, size_bytes, model, serial,
         declared_model, mounts, partitions, signatures, partition_types, in_use (why it is in use, each
         holder chain or failed read; empty: nothing uses it), weka (why Weka owns it; empty: it does not))",
         type: list}
weka_installed: {description: whether the weka CLI is on this host, type: bool}
weka_drive_list: {description: "'read', 'none' (Weka not installed) or why it could not be read", type: str}
record: {description: the drives' record this read makes (the content the role writes), type: str}
state: {description: "with state: {differs (what is not as wanted), exists (each free drive's scheduler
        file: whether it is there)}", type: dict}
diff: {description: with state.diffs, each differing file, the host's beside the wanted one, type: list}
"""

def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "drives": {"type": "list", "elements": "dict", "required": True},
            "host_name": {"type": "str", "required": True},
            "weka_partition_type": {"type": "str", "default": WEKA_PARTITION_TYPE},
            "weka_cli": {"type": "str", "default": "weka"},
            "state": {"type": "dict", "default": {}},
        },
        supports_check_mode=True,
    )
    try:
        result = read_drives(module.params)
    except RuntimeError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
