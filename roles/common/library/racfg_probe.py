#!/usr/bin/python
"""Read, in one module run, everything a racfg role manages on a host and say what differs.

Why: a role of a dozen tasks costs a dozen module runs per host even when nothing has to change
(each a Python start and an SSH round trip on the host, a worker fork on the controller). A role
first asks this module whether the host is already as the inventory wants it; only when
something differs does it run its tasks, which then change, report (``--check``) and verify
exactly as before. The probe never changes anything, in or out of check mode, and errs on the
side of "differs": a file it cannot read, a unit it cannot query, a command that fails all count
as different, so a false "converged" cannot hide a change from deploy or drift.
"""

from __future__ import annotations

import glob
import grp
import hashlib
import os
import pwd
import re
import subprocess

from ansible.module_utils.basic import AnsibleModule

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
    description: "{path, lines}: the file must contain these lines, in a row (a managed block)."
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
      "{name, argv}: read-only commands whose output the role decides on (ip -j addr show), returned
      under their names. One that fails fails the probe, as a command task would."
    type: list
    elements: dict
    default: []
"""

RETURN = r"""
differs: {description: what is not as wanted, one line each (empty when the host is converged), type: list}
read: {description: path -> content (null when missing), type: dict}
exists: {description: path -> whether it exists, type: dict}
outputs: {description: name -> the command's stdout, type: dict}
checked: {description: how many things were compared, type: int}
"""


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


def contains_differs(spec: dict) -> list[str]:
    have = read_bytes(spec["path"])
    block = "\n".join(spec["lines"]) + "\n"
    if have is None or block.encode() not in have:
        return [f"file {spec['path']} lacks its managed block"]
    return []


def absent_line_differs(spec: dict) -> list[str]:
    have = read_bytes(spec["path"])
    if have is None:
        return []
    pattern = re.compile(spec["regexp"])
    if any(pattern.search(line) for line in have.decode(errors="replace").splitlines()):
        return [f"file {spec['path']} has a line matching {spec['regexp']}"]
    return []


def run(argv: list[str]) -> tuple[int, str]:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, str(exc)
    return proc.returncode, proc.stdout


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


def command_differs(spec: dict) -> list[str]:
    rc, _out = run([str(arg) for arg in spec["argv"]])
    return [] if rc == 0 else [f"{spec.get('why') or ' '.join(spec['argv'])} (exit {rc})"]


def command_outputs(items: list[dict]) -> tuple[dict[str, str], str | None]:
    """Each ``{name, argv}`` command's stdout by name, or why one failed (the probe then fails:
    a role cannot decide on the output of a command that did not work)."""
    outputs = {}
    for item in items:
        argv = [str(arg) for arg in item["argv"]]
        rc, out = run(argv)
        if rc != 0:
            return outputs, f"{' '.join(argv)} failed (exit {rc}): {out.strip()[:300]}"
        outputs[item["name"]] = out
    return outputs, None


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
    has_capability = "lacks_capability" in only_if and bounding_capabilities() >> int(only_if["lacks_capability"]) & 1
    return not has_capability


def main() -> None:
    lists = ("files", "directories", "contains", "absent_lines", "units", "values", "commands", "outputs")
    spec = {name: {"type": "list", "elements": "dict", "default": []} for name in lists}
    spec.update({name: {"type": "list", "elements": "str", "default": []} for name in ("packages", "read", "exists")})
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = module.params
    outputs, error = command_outputs(params["outputs"])
    if error:
        module.fail_json(msg=error)
    checks = ((file_differs, params["files"]), (directory_differs, params["directories"]),
              (contains_differs, params["contains"]), (absent_line_differs, params["absent_lines"]),
              (values_differ, params["values"]), (command_differs, params["commands"]))
    differs: list[str] = []
    for check, items in checks:
        for item in items:
            if applies(item):
                differs += check(item)
    differs += packages_differ(params["packages"])
    differs += units_differ(params["units"])
    read = {}
    for path in params["read"]:
        data = read_bytes(path)
        read[path] = None if data is None else data.decode(errors="replace")
    checked = sum(len(items) for _check, items in checks) + len(params["packages"]) + len(params["units"])
    module.exit_json(changed=False, differs=differs, checked=checked, read=read, outputs=outputs,
                     exists={path: os.path.exists(path) for path in params["exists"]})


if __name__ == "__main__":
    main()
