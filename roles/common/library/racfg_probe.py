#!/usr/bin/python
"""Read, in one module run, everything a racfg role manages on a host and say what differs.

Why: a role of a dozen tasks costs a dozen module runs per host even when nothing has to change
(each a Python start and an SSH round trip on the host, a worker fork on the controller). A role
first asks this module whether the host is already as the inventory wants it; only when
something differs does it run its tasks, which then change, report (``--check``) and verify
exactly as before. The probe never changes anything, in or out of check mode, and errs on the
side of "differs": a file it cannot read, a unit it cannot query, a command that fails all count
as different, so a false "converged" cannot hide a change from deploy or drift.

It also reads the facts racfg keeps as a baseline (``host_facts``), for playbooks/facts.yml and
for the common role's probe of a ``racfg deploy`` run: a run that changes nothing then records
its baseline from this read, without a module run per host at the end of the run. Those facts are
their own concept and live in module_utils/racfg_host_facts.py (with the read-only command runner).
"""

from __future__ import annotations

import glob
import os
import platform
import re

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.sys_info import (
    get_distribution,
    get_distribution_codename,
    get_distribution_version,
)
from ansible.module_utils.racfg_drives import read_drives
from ansible.module_utils.racfg_host_facts import host_facts, run, run_command
from ansible.module_utils.racfg_state import (
    applies,
    checks_differ,
    content_diffs,
    directory_differs,
    file_differs,
    owner_differs,
    read_bytes,
    values_differ,
)
from ansible.module_utils.racfg_sysctl_plan import compare as sysctl_compare
from ansible.module_utils.racfg_sysctl_plan import render_file as sysctl_file

DOCUMENTATION = r"""
module: racfg_probe
short_description: Compare a host with the state a racfg role wants, read-only, in one run
options:
  files:
    description: >-
      Files with their wanted content (text), and optionally mode (octal string), owner, group.
      Any check (files, directories, units, ...) may carry only_if, {exists: path} or
      {lacks_capability: bit}: it is then made only on hosts where that holds.
    type: list
    elements: dict
    default: []
  directories:
    description: Directories that must exist, with optional mode, owner and group.
    type: list
    elements: dict
    default: []
  contains:
    description: >-
      "{path, lines, mode, owner, group}: the file must contain these lines, in a row (a managed
      block), and have the mode, owner and group given."
    type: list
    elements: dict
    default: []
  absent_lines:
    description: "{path, regexp}: no line of the file may match (a line a role removes)."
    type: list
    elements: dict
    default: []
  packages:
    description: Debian packages that must be installed (dpkg-query).
    type: list
    elements: str
    default: []
  units:
    description: "{name, active (bool), enabled (bool)}: systemd units and their wanted state."
    type: list
    elements: dict
    default: []
  values:
    description: >-
      "{glob, value} or {glob, regexp}: every file the glob matches must read this value, or match
      this regexp (sysfs settings: a governor, a block device's [scheduler])."
    type: list
    elements: dict
    default: []
  commands:
    description: "{argv, why}: read-only commands that must exit 0 (a postcondition such as a synchronised clock)."
    type: list
    elements: dict
    default: []
  read:
    description: Files whose content is returned (missing ones as null), for the role's own decisions.
    type: list
    elements: str
    default: []
  exists:
    description: Paths whose existence is returned.
    type: list
    elements: str
    default: []
  outputs:
    description: >-
      "{name, argv, may_fail}: read-only commands whose output the role decides on (ip -j addr show),
      returned under their names. One that fails fails the probe, as a command task would, unless
      it may_fail (a tool a later role installs): its exit status and stderr are then returned too."
    type: list
    elements: dict
    default: []
  also:
    description: >-
      Other roles' checks (name -> the same keys as files, directories, contains, absent_lines,
      packages, units, values, commands), compared in this run and returned by name under
      ``also``: the first role's probe reads what the later roles of the play manage, so a
      converged host costs one module run for all of them.
    type: dict
    default: {}
  sysctl:
    description: >-
      "{settings, file, header}: the kernel parameters racfg_sysctl persists and applies, compared
      as it would (returned under sysctl: differs, and not_applied with the reason per key)."
    type: dict
    default: {}
  diffs:
    description: >-
      Also return, as the task's diff, each wanted file whose content differs (racfg drift's
      config layer shows them; a deploy's own tasks show theirs, so it leaves this off).
    type: bool
    default: false
  pci:
    description: Also return each PCI device's vendor and class (the GPU role counts its GPUs from it).
    type: bool
    default: false
  host_facts:
    description: >-
      "{nics, drives, identity}: also return the baseline document (racfg_host_facts): identity as
      given (host, kernel, OS from Ansible's facts), the installed packages (dpkg-query or rpm),
      ofed_info -s, each named data NIC's MTU, IPv4 addresses, driver and firmware, each declared
      drive path's device and any other NVMe disk, the GPU driver and VBIOS. A missing tool
      leaves its fact empty."
    type: dict
    default: {}
  drives:
    description: >-
      racfg_drive_probe's options (drives, host_name, weka_partition_type, state): also read the
      declared drives in this run, as that module does, and return what it returns under drives
      (its diff with this run's). playbooks/read.yml gives them on storage hosts, whose play has the
      nvme_storage role too: one module run per host there, not two.
    type: dict
    default: {}
  facts:
    description: >-
      Also return, as ansible_facts, the few facts the roles read (hostname, kernel, distribution,
      distribution_version, distribution_release), by Ansible's own collectors: the play then
      gathers no facts (a setup run per host saved on every run).
    type: bool
    default: false
"""

RETURN = r"""
differs: {description: what is not as wanted, one line each (empty when the host is converged), type: list}
read: {description: path -> content (null when missing), type: dict}
exists: {description: path -> whether it exists, type: dict}
outputs: {description: name -> the command's stdout, type: dict}
output_errors: {description: "name -> {rc, stderr} of a may_fail command that failed", type: dict}
also: {description: name -> what is not as wanted among that role's checks, type: dict}
sysctl: {description: "with sysctl: {differs, not_applied}", type: dict}
pci: {description: "with pci: [{vendor, class}] per PCI device, as sysfs writes them", type: list}
checked: {description: how many things were compared, type: int}
diff:
  description: >-
    "with diffs: [{before, after, before_header, after_header}] per file (the other roles' too) whose
    content differs, the host's beside the rendered one"
  type: list
drives: {description: "with drives: what racfg_drive_probe returns (drives, record, state, ...)", type: dict}
racfg_host_facts: {description: the baseline document, only when host_facts is given, type: dict}
ansible_facts: {description: "with facts: hostname, kernel and the distribution facts, as setup names them", type: dict}
"""


def contains_differs(spec: dict) -> list[str]:
    """The managed block, and the file's mode, owner and group where given: the task that writes the
    block (blockinfile) sets them too, so a read that skipped them would call a chmod'ed file converged."""
    have = read_bytes(spec["path"])
    block = "\n".join(spec["lines"]) + "\n"
    if have is None or block.encode() not in have:
        return [f"file {spec['path']} lacks its managed block"]
    return owner_differs(spec["path"], spec, "file")


def absent_line_differs(spec: dict) -> list[str]:
    have = read_bytes(spec["path"])
    if have is None:
        return []
    pattern = re.compile(spec["regexp"])
    if any(pattern.search(line) for line in have.decode(errors="replace").splitlines()):
        return [f"file {spec['path']} has a line matching {spec['regexp']}"]
    return []


def packages_differ(names: list[str]) -> list[str]:
    if not names:
        return []
    _rc, out = run(["dpkg-query", "--show", "--showformat=${Package} ${db:Status-Status}\n", *names])
    installed = {line.split()[0] for line in out.splitlines() if line.endswith(" installed")}
    return [f"package {name} not installed" for name in names if name not in installed]


def units_differ(units: list[dict]) -> list[str]:
    out = []
    for unit in units:
        if not applies(unit):
            continue
        rc, text = run(["systemctl", "show", "--property=ActiveState,UnitFileState", unit["name"]])
        props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        if rc != 0:
            out.append(f"unit {unit['name']} unreadable")
            continue
        if unit.get("active") and props.get("ActiveState") != "active":
            out.append(f"unit {unit['name']} {props.get('ActiveState', '?')} (wanted active)")
        if unit.get("enabled") and props.get("UnitFileState") != "enabled":
            out.append(f"unit {unit['name']} {props.get('UnitFileState', '?')} (wanted enabled)")
    return out


def command_differs(spec: dict) -> list[str]:
    rc, _out = run([str(arg) for arg in spec["argv"]])
    return [] if rc == 0 else [f"{spec.get('why') or ' '.join(spec['argv'])} (exit {rc})"]


def command_outputs(items: list[dict]) -> tuple[dict[str, str], dict[str, dict], str | None]:
    """Each ``{name, argv}`` command's stdout by name, the failures of those that may fail, or why
    one that may not failed (the probe then fails: a role cannot decide on the output of a
    command that did not work)."""
    outputs, errors = {}, {}
    for item in items:
        argv = [str(arg) for arg in item["argv"]]
        rc, out, err = run_command(argv)
        if rc != 0 and not item.get("may_fail"):
            return outputs, errors, f"{' '.join(argv)} failed (exit {rc}): {(out + err).strip()[:300]}"
        outputs[item["name"]] = out
        if rc != 0:
            errors[item["name"]] = {"rc": rc, "stderr": err}
    return outputs, errors, None


def pci_devices(root: str = "/sys/bus/pci/devices") -> list[dict]:
    """Each PCI device's vendor and class, as sysfs writes them (0x10de, 0x030200)."""
    out = []
    for device in sorted(glob.glob(os.path.join(root, "*"))):
        found = {name: (read_bytes(os.path.join(device, name)) or b"").decode(errors="replace").strip()
                 for name in ("vendor", "class")}
        out.append(found)
    return out


def system_facts() -> dict:
    """The facts the roles read, named as setup names them: hostname and kernel as its platform
    collector reads them, the distribution, its version and code name from the functions its
    distribution collector starts from (the same values on the Debian family racfg supports).
    Not the collectors themselves: their package imports every fact collector, a fifth of this
    module's run on a host (issue 40)."""
    return {"hostname": platform.node().split(".")[0], "kernel": platform.release(),
            "distribution": get_distribution(), "distribution_version": get_distribution_version(),
            "distribution_release": get_distribution_codename()}


def wanted_files(params: dict) -> list[dict]:
    """Every file this run compares by content: its own, the other roles' (also) and the
    persisted kernel parameters."""
    files = [*params["files"], *(f for checks in params["also"].values() for f in (checks or {}).get("files") or [])]
    sysctl = params["sysctl"]
    if sysctl.get("settings"):
        files.append({"path": sysctl["file"], "content": sysctl_file(sysctl["settings"], sysctl.get("header") or "")})
    return files


CHECK_LISTS = ("files", "directories", "contains", "absent_lines", "values", "commands")


def compare(params: dict) -> tuple[list[str], int]:
    """What differs among one role's checks (the keys of CHECK_LISTS, packages, units), and how
    many things were compared."""
    checks = ((file_differs, "files"), (directory_differs, "directories"), (contains_differs, "contains"),
              (absent_line_differs, "absent_lines"), (values_differ, "values"), (command_differs, "commands"))
    differs = checks_differ(params, checks)
    differs += packages_differ(list(params.get("packages") or []))
    differs += units_differ(list(params.get("units") or []))
    checked = sum(len(params.get(key) or []) for key in (*CHECK_LISTS, "packages", "units"))
    return differs, checked


def main() -> None:
    spec = {name: {"type": "list", "elements": "dict", "default": []} for name in (*CHECK_LISTS, "units", "outputs")}
    spec.update({name: {"type": "list", "elements": "str", "default": []} for name in ("packages", "read", "exists")})
    spec.update({name: {"type": "dict", "default": {}} for name in ("host_facts", "also", "sysctl", "drives")})
    spec.update({name: {"type": "bool", "default": False} for name in ("facts", "diffs", "pci")})
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = module.params
    outputs, output_errors, error = command_outputs(params["outputs"])
    if error:
        module.fail_json(msg=error)
    differs, checked = compare(params)
    also = {}
    for name, checks in params["also"].items():
        also[name], counted = compare(checks or {})
        checked += counted
    read = {}
    for path in params["read"]:
        data = read_bytes(path)
        read[path] = None if data is None else data.decode(errors="replace")
    facts = system_facts() if params["facts"] or params["host_facts"] else {}
    extra: dict = {"ansible_facts": facts} if params["facts"] else {}
    if params["pci"]:
        extra["pci"] = pci_devices()
    if params["sysctl"].get("settings"):
        sysctl = params["sysctl"]
        extra["sysctl"] = sysctl_compare(sysctl["settings"], sysctl["file"], sysctl.get("header") or "")
    if params["diffs"]:
        extra["diff"] = content_diffs(wanted_files(params))
    if params["drives"]:
        try:
            extra["drives"] = read_drives(params["drives"])
        except RuntimeError as exc:
            module.fail_json(msg=f"drives: {exc}")
        extra["diff"] = extra.get("diff", []) + extra["drives"].pop("diff", [])
    if params["host_facts"]:
        read = {" ".join(str(arg) for arg in item["argv"]): outputs[item["name"]] for item in params["outputs"]
                if item["name"] in outputs and item["name"] not in output_errors}
        extra["racfg_host_facts"] = host_facts(params["host_facts"], facts, read)
    module.exit_json(changed=False, differs=differs, checked=checked, read=read, outputs=outputs,
                     output_errors=output_errors, also=also,
                     exists={path: os.path.exists(path) for path in params["exists"]}, **extra)


if __name__ == "__main__":
    main()
