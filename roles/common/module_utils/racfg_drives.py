"""The declared data drives read in one pass: identity, signatures, Weka ownership, and what the
nvme_storage role manages on the free ones (their scheduler, the udev rule, the drives' record).

Why module_utils: two modules read the drives. racfg_drive_probe is the storage play's own read
(and its read again after a wipe); racfg_probe reads them in the common role's run when the play
also has the nvme_storage role (playbooks/read.yml, a deploy's read pass and drift): a converged
storage host then costs one module run, not two. See racfg_drive_probe for what "owned by Weka" means.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from typing import Any

from ansible.module_utils.racfg_state import checks_differ, content_diffs

WEKA_PARTITION_TYPE = "993ec906-b4e2-11e7-a205-a0a8cd3ea1de"
# The spellings weka releases use in `weka cluster drive -J` (as roles/weka/filter_plugins reads them).
PATH_KEYS = ("device_path", "path", "disk_path", "device")
SERIAL_KEYS = ("serial", "serial_number")
HOST_KEYS = ("hostname", "host_name")


def _first(item: dict, keys: tuple[str, ...]) -> str:
    for key in keys:
        if item.get(key) not in (None, ""):
            return str(item[key])
    return ""


def weka_drives_of_host(listing: Any, host_name: str) -> tuple[set[str], set[str]]:
    """Paths and serials ``weka cluster drive -J`` lists for this host. An entry that names no
    host is counted as this host's: claiming a drive too many only leaves it alone."""
    items = listing.values() if isinstance(listing, dict) else (listing or [])
    paths: set[str] = set()
    serials: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        host = _first(item, HOST_KEYS)
        if host and host.split(".")[0] != host_name.split(".")[0]:
            continue
        if _first(item, PATH_KEYS):
            paths.add(_first(item, PATH_KEYS))
        if _first(item, SERIAL_KEYS):
            serials.add(_first(item, SERIAL_KEYS).strip())
    return paths, serials


def parse_blkid_export(text: str) -> list[str]:
    """``blkid --probe --output export``: the TYPE= / PTTYPE= lines (what would be wiped)."""
    return [line for line in text.splitlines() if line.startswith(("TYPE=", "PTTYPE="))]


def parse_partx_types(text: str) -> list[str]:
    """``partx -g -o TYPE DEV``: one partition type (GUID or MBR hex) per line, lower case."""
    return [line.strip().lower() for line in text.splitlines() if line.strip()]


def parse_lsblk(text: str) -> dict[str, Any]:
    """``lsblk --json --bytes -o NAME,KNAME,TYPE,SIZE,MODEL,SERIAL,MOUNTPOINT DEV``: the device."""
    dev = (json.loads(text or "{}").get("blockdevices") or [{}])[0]
    children = dev.get("children") or []
    return {
        "kname": dev.get("kname") or "",
        "size_bytes": int(dev.get("size") or 0),
        "model": (dev.get("model") or "").strip(),
        "serial": (dev.get("serial") or "").strip(),
        "mounts": [d["mountpoint"] for d in [dev, *children] if d.get("mountpoint")],
        "partitions": [c.get("name") for c in children if c.get("name")],
    }


def weka_owner(drive: dict[str, Any], paths: set[str], serials: set[str], list_state: str,
               weka_installed: bool, partition_type: str) -> str:
    """Why Weka owns this drive, or '' when it is free for the role to act on."""
    if drive["path"] in paths or (drive.get("serial") and drive["serial"] in serials):
        return "in the Weka cluster's drive list"
    if partition_type.lower() in drive.get("partition_types", []):
        return f"carries a Weka partition (GPT type {partition_type.lower()})"
    if not drive["present"] and weka_installed and list_state != "read":
        return f"not in the kernel while Weka is installed here and its drive list is unreadable ({list_state})"
    return ""


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def read_drive(path: str) -> dict[str, Any]:
    """What the kernel and the drive's own bytes say about one drive (nothing is written)."""
    try:
        present = stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        present = False
    facts: dict[str, Any] = {"path": path, "present": present, "kname": "", "size_bytes": 0, "model": "",
                             "serial": "", "mounts": [], "partitions": [], "signatures": [],
                             "partition_types": []}
    if not present:
        return facts
    lsblk = _run(["lsblk", "--json", "--bytes", "--output", "NAME,KNAME,TYPE,SIZE,MODEL,SERIAL,MOUNTPOINT", path])
    if lsblk.returncode != 0:
        raise RuntimeError(f"lsblk {path}: {lsblk.stderr.strip()}")
    facts.update(parse_lsblk(lsblk.stdout))
    blkid = _run(["blkid", "--probe", "--output", "export", path])  # 0 found, 2 nothing found
    if blkid.returncode not in (0, 2):
        raise RuntimeError(f"blkid {path}: {blkid.stderr.strip()}")
    facts["signatures"] = parse_blkid_export(blkid.stdout)
    # partx reads the partition table from the drive itself: it sees partitions that have no
    # device node (a container, a drive whose table the kernel was never told about).
    partx = _run(["partx", "--show", "--noheadings", "--output", "TYPE", path])
    facts["partition_types"] = parse_partx_types(partx.stdout) if partx.returncode == 0 else []
    return facts


def read_weka_drive_list(weka: str | None) -> tuple[Any, str]:
    """(parsed listing or None, 'read' | 'none' | why not)."""
    if weka is None:
        return None, "none"
    proc = _run([weka, "cluster", "drive", "-J"])
    if proc.returncode != 0:
        return None, f"weka cluster drive -J exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:200]}"
    try:
        return json.loads(proc.stdout or "[]"), "read"
    except ValueError as exc:
        return None, f"weka cluster drive -J printed no JSON: {exc}"


def drives_record(drives: list[dict[str, Any]]) -> str:
    """The drives' record: what was read of each declared drive and who owns it, in the form
    to_nice_json gives (indent 4, sorted keys), which a record written before this module made it
    has too."""
    rows = [{"path": d["path"], "model": d["model"], "serial": d["serial"], "size_bytes": d["size_bytes"],
             "owner": "weka" if d["weka"] else None} for d in drives]
    return json.dumps(rows, indent=4, sort_keys=True, separators=(",", ": "))


SYS_BLOCK = "/sys/block"


def scheduler_files(drives: list[dict[str, Any]]) -> list[str]:
    """The sysfs scheduler file of each free drive (one Weka owns is left alone)."""
    return [f"{SYS_BLOCK}/{d['kname']}/queue/scheduler" for d in drives if not d["weka"]]


def compare_state(spec: dict[str, Any], drives: list[dict[str, Any]]) -> dict[str, Any]:
    """What differs from ``spec`` (the module's ``state`` option) on the drives this run read."""
    files = [*(spec.get("files") or []), {**spec["record"], "content": drives_record(drives)}]
    wanted = re.escape(str(spec["scheduler"]))
    schedulers = scheduler_files(drives)
    differs = checks_differ({"files": files, "directories": spec.get("directories"),
                             "values": [{"glob": path, "regexp": rf"\[{wanted}\]"} for path in schedulers]})
    out: dict[str, Any] = {"state": {"differs": differs, "exists": {path: os.path.exists(path) for path in schedulers}}}
    if spec.get("diffs"):
        out["diff"] = content_diffs(files)
    return out


def read_drives(params: dict[str, Any]) -> dict[str, Any]:
    """What racfg_drive_probe returns for its options ``params`` (drives, host_name, and optionally
    weka_partition_type, weka_cli, state). Raises RuntimeError when a drive cannot be read."""
    weka = shutil.which(params.get("weka_cli") or "weka")
    listing, list_state = read_weka_drive_list(weka)
    paths, serials = weka_drives_of_host(listing, params["host_name"])
    partition_type = params.get("weka_partition_type") or WEKA_PARTITION_TYPE
    out = []
    try:
        for declared in params["drives"]:
            facts = read_drive(str(declared["path"]))
            facts["declared_model"] = declared.get("model")
            facts["weka"] = weka_owner(facts, paths, serials, list_state, weka is not None, partition_type)
            out.append(facts)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(str(exc)) from exc
    extra = compare_state(params["state"], out) if params.get("state") else {}
    return {"drives": out, "weka_installed": weka is not None, "weka_drive_list": list_state,
            "record": drives_record(out), **extra}
