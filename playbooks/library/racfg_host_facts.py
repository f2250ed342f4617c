#!/usr/bin/python
"""Ansible module: the facts racfg keeps as a baseline and drift compares against, in one pass.

Read-only (supports check mode). Collected on the host with the tools it has: dpkg-query (or
rpm), ofed_info, ip, ethtool, lsblk, nvidia-smi; a tool that is missing leaves its fact empty.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: racfg_host_facts
short_description: Read the facts racfg baselines (packages, OFED, NICs, drives, GPU driver)
description: Read-only; every fact comes from the host's own tools. Missing tools leave facts empty.
options:
  nics:
    description: Data NIC names to describe (MTU, IPv4 addresses, driver, firmware).
    type: list
    elements: str
    default: []
  drives:
    description: Declared drive paths; each is described by the device it resolves to.
    type: list
    elements: str
    default: []
"""


def run(argv: list[str]) -> tuple[int, str]:
    if shutil.which(argv[0]) is None:
        return 127, ""
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout


def packages() -> dict[str, str]:
    rc, out = run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev}\t${Package}\t${Version}\n"])
    if rc == 0:
        rows = [line.split("\t") for line in out.splitlines()]
        return {r[1].split(":")[0]: r[2] for r in rows if len(r) == 3 and r[0].startswith("ii")}
    rc, out = run(["rpm", "-qa", "--qf", "%{NAME}\t%{VERSION}-%{RELEASE}\n"])
    return dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line) if rc == 0 else {}


def nic(name: str, links: dict[str, dict]) -> dict | None:
    link = links.get(name)
    if link is None:
        return None
    addresses = [f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", []) if a.get("family") == "inet"]
    info: dict[str, str] = {}
    rc, out = run(["ethtool", "-i", name])
    for line in out.splitlines() if rc == 0 else []:
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    return {"mtu": link.get("mtu"), "addresses": sorted(addresses), "driver": info.get("driver") or None,
            "firmware": info.get("firmware-version") or None}


def drives(paths: list[str]) -> list[dict]:
    out = []
    for path in paths:
        if not os.path.exists(path):
            continue
        rc, text = run(["lsblk", "-J", "-b", "-d", "-o", "NAME,TYPE,SIZE,MODEL,SERIAL", path])
        if rc != 0:
            continue
        for dev in json.loads(text).get("blockdevices", [])[:1]:
            out.append({"path": path, **{k: dev.get(k) for k in ("name", "size", "model", "serial")}})
    rc, text = run(["lsblk", "-J", "-b", "-d", "-e", "7", "-o", "NAME,PATH,TYPE,SIZE,MODEL,SERIAL"])
    known = {d["path"] for d in out}
    for dev in json.loads(text).get("blockdevices", []) if rc == 0 else []:
        if dev.get("type") == "disk" and dev.get("path") not in known and "nvme" in str(dev.get("name")):
            out.append({k: dev.get(k) for k in ("path", "name", "size", "model", "serial")})
    return out


def gpu() -> dict | None:
    rc, out = run(["nvidia-smi", "--query-gpu=driver_version,vbios_version", "--format=csv,noheader"])
    if rc != 0 or not out.strip():
        return None
    rows = [[c.strip() for c in line.split(",")] for line in out.strip().splitlines()]
    return {"driver": rows[0][0], "vbios": ", ".join(sorted({r[1] for r in rows if len(r) > 1}))}


def main() -> None:
    module = AnsibleModule(argument_spec={"nics": {"type": "list", "elements": "str", "default": []},
                                          "drives": {"type": "list", "elements": "str", "default": []},
                                          "identity": {"type": "dict", "default": {}}},
                           supports_check_mode=True)
    rc, text = run(["ip", "-j", "addr", "show"])
    links = {link["ifname"]: link for link in json.loads(text)} if rc == 0 and text.strip() else {}
    rc, ofed = run(["ofed_info", "-s"])
    # identity: what Ansible's own facts already know (host, kernel, OS), returned with the rest so
    # that racfg takes one document per host from this result (no write-out task per host)
    module.exit_json(changed=False, racfg_host_facts={
        **module.params["identity"],
        "packages": packages(),
        "ofed": ofed.strip().rstrip(":") if rc == 0 and ofed.strip() else None,
        "nics": {n: nic(n, links) for n in module.params["nics"]},
        "drives": drives(module.params["drives"]),
        "gpu": gpu(),
    })


if __name__ == "__main__":
    main()
