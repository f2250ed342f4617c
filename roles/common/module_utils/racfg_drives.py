"""The declared data drives read in one pass: identity, signatures, Weka ownership, and what the
nvme_storage role manages on the free ones (their scheduler, the udev rule, the drives' record).

Why module_utils: two modules read the drives. racfg_drive_probe is the storage play's own read
(and its read again after a wipe); racfg_probe reads them in the common role's run when the play
also has the nvme_storage role (playbooks/read.yml, a deploy's read pass and drift): a converged
storage host then costs one module run, not two. See racfg_drive_probe for what "owned by Weka" means,
and racfg_drive_use for what "in use" means (a drive in use is never wiped). A read that fails never
makes a drive free: it is a reason the drive is in use, or, for Weka's drive list, that it may be Weka's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from typing import Any

from ansible.module_utils.racfg_drive_use import UseContext, in_use, kernel_name, read_use_context
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
    """Why Weka owns this drive, or '' when it is free for the role to act on. Where Weka is
    installed and its drive list cannot be read, every drive may be Weka's: owned, never free."""
    if drive["path"] in paths or (drive.get("serial") and drive["serial"] in serials):
        return "in the Weka cluster's drive list"
    if partition_type.lower() in drive.get("partition_types", []):
        return f"carries a Weka partition (GPT type {partition_type.lower()})"
    if weka_installed and list_state != "read":
        return f"Weka is installed here and its drive list is unreadable ({list_state}): it may be Weka's"
    return ""


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def _tool(argv: list[str], ok: tuple[int, ...] = (0,),
          name: str = "") -> tuple[subprocess.CompletedProcess[str] | None, str]:
    """(its result, '') or (None, why it gave no answer): a tool that fails is a read that failed."""
    name = name or argv[0]
    try:
        proc = _run(argv)
    except subprocess.TimeoutExpired:
        return None, f"{name} timed out after 60 s"
    except OSError as exc:
        return None, f"{name} could not run: {exc.strerror}"
    if proc.returncode not in ok:
        return None, f"{name} exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:200]}"
    return proc, ""


def is_block_device(path: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def read_drive(path: str, use: UseContext | None = None) -> dict[str, Any]:
    """What the kernel and the drive's own bytes say about one drive (nothing is written). Each
    read that fails is a reason in ``in_use`` (racfg_drive_use): a drive this module cannot read
    is never free."""
    present = is_block_device(path)
    facts: dict[str, Any] = {"path": path, "present": present, "kname": "", "size_bytes": 0, "model": "",
                             "serial": "", "mounts": [], "partitions": [], "signatures": [],
                             "partition_types": [], "in_use": []}
    if not present:
        return facts
    unread = facts["in_use"]
    lsblk, why = _tool(["lsblk", "--json", "--bytes", "--output", "NAME,KNAME,TYPE,SIZE,MODEL,SERIAL,MOUNTPOINT",
                        path])
    if lsblk is None:
        unread.append(f"its identity and partitions could not be read ({why})")
    else:
        facts.update(parse_lsblk(lsblk.stdout))
    # 0 found, 2 nothing found, 8 more than one signature (ambivalent): each a drive carrying data
    blkid, why = _tool(["blkid", "--probe", "--output", "export", path], ok=(0, 2, 8))
    if blkid is None:
        unread.append(f"its signatures could not be read ({why})")
    else:
        facts["signatures"] = parse_blkid_export(blkid.stdout) or (
            ["ambivalent signatures (blkid exit 8)"] if blkid.returncode == 8 else [])
    # partx reads the partition table from the drive itself: it sees partitions that have no
    # device node (a container, a drive whose table the kernel was never told about). Only where
    # blkid found a table: partx fails on a drive without one.
    if any(s.startswith("PTTYPE=") for s in facts["signatures"]):
        partx, why = _tool(["partx", "--show", "--noheadings", "--output", "TYPE", path])
        if partx is None:
            unread.append(f"its partition table could not be read ({why})")
        else:
            facts["partition_types"] = parse_partx_types(partx.stdout)
    try:
        facts["kname"] = facts["kname"] or kernel_name(path)
    except OSError as exc:
        unread.append(f"its kernel name could not be read ({exc.filename}: {exc.strerror})")
    if facts["kname"]:
        unread += in_use(path, facts["kname"], use or read_use_context())
    return facts


def read_weka_drive_list(weka: str | None) -> tuple[Any, str]:
    """(parsed listing or None, 'read' | 'none' | why not)."""
    if weka is None:
        return None, "none"
    proc, why = _tool([weka, "cluster", "drive", "-J"], name="weka cluster drive -J")
    if proc is None:
        return None, why
    try:
        listing = json.loads(proc.stdout or "[]")
    except ValueError as exc:
        return None, f"weka cluster drive -J printed no JSON: {exc}"
    if not isinstance(listing, (list, dict)):
        return None, f"weka cluster drive -J printed no drive list: {proc.stdout.strip()[:200]}"
    return listing, "read"


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
    weka_partition_type, weka_cli, state). A drive that cannot be read is in use (its ``in_use``
    says why), or Weka's where Weka's drive list cannot be read: never free."""
    weka = shutil.which(params.get("weka_cli") or "weka")
    listing, list_state = read_weka_drive_list(weka)
    paths, serials = weka_drives_of_host(listing, params["host_name"])
    partition_type = params.get("weka_partition_type") or WEKA_PARTITION_TYPE
    use = read_use_context()  # the mount tables and swaps, once for all drives
    out = []
    for declared in params["drives"]:
        facts = read_drive(str(declared["path"]), use)
        facts["declared_model"] = declared.get("model")
        facts["weka"] = weka_owner(facts, paths, serials, list_state, weka is not None, partition_type)
        out.append(facts)
    extra = compare_state(params["state"], out) if params.get("state") else {}
    return {"drives": out, "weka_installed": weka is not None, "weka_drive_list": list_state,
            "record": drives_record(out), **extra}
