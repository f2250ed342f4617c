"""The weka role's command plans: pure functions from the weka CLI's JSON state to commands.

``weka_backend_plan`` reads what ``weka status -J``, ``weka cluster host -J``,
``weka cluster host net -J``, ``weka cluster drive -J``, ``weka fs group -J`` and ``weka fs -J``
report and returns the commands (argv lists) that bring the cluster to the inventory's intent:
form the cluster, add data NICs and drives, apply, name it, start IO, create the filesystem
group and filesystem. A fully formed cluster yields an empty plan, so re-runs are no-ops.

``weka_state`` turns the registered CLI reads into that state; a read that failed or printed
something other than JSON raises, so an unreadable cluster is never planned as an empty one.

Host ids are only known once a host is in the cluster. When a round creates the cluster the
plan stops after ``cluster create`` with ``complete: false``; the role reads the state again
and plans the next round (``weka_rounds`` in defaults).

The JSON field names differ slightly between weka releases; the readers below accept the
known spellings (``host_id`` as ``HostId<3>`` or ``3``; ``device_path``/``path``/``disk_path``;
``name``/``fs_name``/``filesystem_name`` ...).
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

CLUSTER_NOT_FORMED = {"", "STEM", "NOT_CLUSTERED", "NONE"}


def host_id(value: Any) -> int | None:
    """``HostId<3>`` / ``3`` / ``"3"`` -> 3."""
    if value is None:
        return None
    if isinstance(value, int):
        return value
    match = re.search(r"(\d+)", str(value))
    return int(match.group(1)) if match else None


def _first(item: dict, *keys: str, default: Any = None) -> Any:
    for key in keys:
        if item.get(key) not in (None, ""):
            return item[key]
    return default


def cluster_formed(status: dict | None) -> bool:
    """``weka status -J`` of a host in STEM mode (installed, no cluster) or no answer: False."""
    if not isinstance(status, dict) or not status:
        return False
    state = str(_first(status, "status", "cluster_status", default="")).upper()
    if state in CLUSTER_NOT_FORMED:
        return False
    return bool(_first(status, "name", "guid", "status"))


def _as_list(value: Any) -> list:
    if isinstance(value, dict):  # some releases key lists by id
        return list(value.values())
    return list(value or [])


def _ids_by_hostname(hosts: Any) -> dict[str, int]:
    out = {}
    for item in _as_list(hosts):
        if str(_first(item, "mode", default="backend")).lower() not in ("backend", "backends"):
            continue
        hid = host_id(_first(item, "host_id", "id"))
        name = _first(item, "hostname", "host_name", "name")
        if hid is not None and name:
            out[str(name)] = hid
    return out


def _values_by_host(items: Any, *value_keys: str) -> dict[int, set[str]]:
    """host id -> the values found under the first of ``value_keys`` (drive paths, net devices)."""
    out: dict[int, set[str]] = {}
    for item in _as_list(items):
        hid = host_id(_first(item, "host_id", "hostId"))
        value = _first(item, *value_keys)
        if hid is not None and value:
            out.setdefault(hid, set()).add(str(value))
    return out


def _names(items: Any, *keys: str) -> set[str]:
    return {str(_first(item, *keys)) for item in _as_list(items) if _first(item, *keys)}


def _step(argv: list[str], why: str) -> dict[str, Any]:
    return {"argv": ["weka"] + [str(a) for a in argv], "why": why}


def _capacity(spec: dict, status: dict | None) -> str:
    """The filesystem size: the inventory's, else all unprovisioned SSD capacity (whole GiB)."""
    if spec.get("fs_capacity"):
        return str(spec["fs_capacity"])
    capacity = (status or {}).get("capacity") or {}
    free = _first(capacity, "unprovisioned_bytes", "unprovisioned", default=0)
    gib = int(free) // 2**30
    if gib <= 0:
        raise ValueError("no unprovisioned capacity reported by weka status and no weka_fs_capacity given")
    return f"{gib}GiB"


def weka_backend_plan(state: dict, spec: dict) -> dict[str, Any]:
    """Plan one round. ``state`` keys: status, hosts, nets, drives, fs_groups, filesystems (parsed
    JSON or None). ``spec``: cluster_name, backends [{name, ip, nics [{name, address}],
    drives [paths]}], fs_group, filesystem, fs_capacity (None: all), net_add (bool).

    Returns {"steps": [{argv, why}], "complete": bool}: complete is false when the plan had to
    stop before host-level steps (host ids not known yet) and another round is needed.
    """
    status = state.get("status")
    backends = spec["backends"]
    steps: list[dict[str, Any]] = []

    if not cluster_formed(status):
        names = [b["name"] for b in backends]
        ips = ",".join(b["ip"] for b in backends)
        steps.append(_step(["cluster", "create", *names, "--host-ips", ips],
                           f"no cluster yet: form it from {len(names)} backends"))
        return {"steps": steps, "complete": False}

    ids = _ids_by_hostname(state.get("hosts"))
    missing = [b["name"] for b in backends if b["name"] not in ids]
    if missing:
        raise ValueError(
            f"cluster exists but backends {', '.join(missing)} are not in it; "
            "add them with weka cluster host add (racfg does not grow a running cluster)"
        )

    nets = _values_by_host(state.get("nets"), "name", "netdev", "device", "interface")
    drives = _values_by_host(state.get("drives"), "device_path", "path", "disk_path", "device")
    host_changes = False
    for backend in backends:
        hid = ids[backend["name"]]
        if spec.get("net_add", True):
            for nic in backend.get("nics", []):
                if nic["name"] in nets.get(hid, set()):
                    continue
                iface = ipaddress.ip_interface(nic["address"])
                steps.append(_step(
                    ["cluster", "host", "net", "add", hid, nic["name"], "--ips", iface.ip,
                     "--netmask", iface.network.prefixlen],
                    f"{backend['name']}: data NIC {nic['name']} not in weka"))
                host_changes = True
        todo = [p for p in backend.get("drives", []) if p not in drives.get(hid, set())]
        if todo:
            steps.append(_step(["cluster", "drive", "add", hid, *todo],
                               f"{backend['name']}: {len(todo)} drive(s) not in the cluster"))
            host_changes = True
    if host_changes:
        steps.append(_step(["cluster", "host", "apply", "--all", "--force"], "apply the host changes"))

    name = spec.get("cluster_name")
    if name and status.get("name") != name:
        steps.append(_step(["cluster", "update", "--cluster-name", name],
                           f"cluster name {status.get('name')!r} -> {name!r}"))

    if str(status.get("io_status", "")).upper() != "STARTED":
        steps.append(_step(["cluster", "start-io"], f"IO is {status.get('io_status') or 'not started'}"))

    group = spec.get("fs_group", "default")
    if group not in _names(state.get("fs_groups"), "name", "group_name"):
        steps.append(_step(["fs", "group", "create", group], f"filesystem group {group} missing"))
    filesystem = spec["filesystem"]
    if filesystem not in _names(state.get("filesystems"), "name", "fs_name", "filesystem_name"):
        steps.append(_step(["fs", "create", filesystem, group, _capacity(spec, status)],
                           f"filesystem {filesystem} missing"))
    return {"steps": steps, "complete": True}


def weka_client_plan(state: dict, spec: dict) -> list[dict[str, Any]]:
    """Client (dgx) steps. ``state``: installed_version ('' if weka is absent), mounts
    [{mount, device, fstype}] (ansible_mounts shape). ``spec``: version (the pin; None: any),
    backend (address of a backend), filesystem, mount_point, installer (where the install
    script is saved on the client).

    The install script is downloaded to a file first and run only once the download succeeded
    (``curl | sh`` would run whatever half of it arrived and hide curl's failure). A client of
    another version than the pin is installed again from the cluster; the role then checks
    ``weka version current`` against the pin, so a cluster serving another release fails.
    """
    steps = []
    installed = str(state.get("installed_version") or "")
    pin = str(spec.get("version") or "")
    if not installed or (pin and installed != pin):
        url = f"http://{spec['backend']}:14000/dist/v1/install"
        why = ("weka client not installed" if not installed
               else f"weka client {installed} installed, {pin} pinned") + ": install it from the cluster"
        steps.append({"argv": ["curl", "-fsS", "--retry", "3", "-o", spec["installer"], url],
                      "why": f"{why} (download)"})
        steps.append({"argv": ["sh", spec["installer"]], "why": f"{why} (run the downloaded installer)"})
    mounted = any(
        m.get("mount") == spec["mount_point"] and m.get("fstype") == "wekafs"
        for m in state.get("mounts") or []
    )
    if not mounted:
        steps.append({"argv": ["mount", "-t", "wekafs", f"{spec['backend']}/{spec['filesystem']}",
                               spec["mount_point"]],
                      "why": f"{spec['filesystem']} not mounted on {spec['mount_point']}"})
    return steps


def _parse(command: str, result: dict) -> Any:
    """One weka CLI read: its parsed JSON. A failed command or output that is not JSON raises:
    planning from a state that could not be read would plan the wrong thing (or nothing)."""
    output = str(result.get("stdout") or "").strip()
    if result.get("rc", 0) != 0:
        detail = str(result.get("stderr") or output or "no output").strip()
        raise ValueError(f"weka {command} failed (rc {result.get('rc')}): {detail[:300]}")
    try:
        return json.loads(output)
    except ValueError as exc:
        raise ValueError(f"weka {command} did not print JSON ({exc}): {output[:200]!r}") from exc


def weka_state(status_result: dict, read_results: dict | None, commands: dict[str, str]) -> dict[str, Any]:
    """The planner's state from the registered reads: ``status_result`` of ``weka status -J``
    and ``read_results`` of the loop over ``commands`` (key -> CLI arguments) on a formed
    cluster. Reads skipped because the cluster is not formed yet are absent, not empty."""
    state = {"status": _parse(commands["status"], status_result)}
    for result in (read_results or {}).get("results") or []:
        if result.get("skipped"):
            continue
        key = result["item"]["key"]
        state[key] = _parse(commands[key], result)
    return state


class FilterModule:
    """weka_backend_plan, weka_client_plan, weka_cluster_formed, weka_state."""

    def filters(self) -> dict[str, Any]:
        return {
            "weka_backend_plan": weka_backend_plan,
            "weka_client_plan": weka_client_plan,
            "weka_cluster_formed": cluster_formed,
            "weka_state": weka_state,
        }
