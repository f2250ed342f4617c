"""Removing a lab, completely, whatever state it is in.

Used by ``lab down``, by a failed ``lab up`` (to undo what it made) and by the test fixture.
It is idempotent and does not trust the state file: every kind of resource is also found by
name (namespaces ``rf-<site>.*``, the site's management bridge, overlay mounts and loop
devices under the site directory), so a half-built lab or a lost state file leaves nothing.
Order matters: processes first (they pin mounts), then mounts, namespaces, links, loops.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from pathlib import Path

from racfg.paths import lab_root
from racfg_lab import drives, frr, httpserver, names, service, switches, timeserver
from racfg_lab.machines import is_running
from racfg_lab.netns import delete_netns, kill_netns_processes, list_netns, root_links
from racfg_lab.sh import log, ok, run
from racfg_lab.state import known_sites, load_state, site_dir

# The servers a lab runs for its hosts (racfg_lab.service): stopped first, found by name if lost.
LAB_SERVICES = (timeserver.SERVICE, httpserver.SERVICE)


def _mounts_under(prefix: str) -> list[str]:
    points = []
    with open("/proc/self/mounts") as f:
        for line in f:
            point = line.split()[1].replace("\\040", " ")
            if point.startswith(prefix):
                points.append(point)
    return sorted(points, key=len, reverse=True)


def _lab_overlay_mounts() -> list[str]:
    """Overlay mounts of any racfg lab (lower dir is a lab image), wherever its lab root is."""
    points = []
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[2] == "overlay" and "/images/bookworm-" in fields[3] and "/hosts/" in fields[1]:
                points.append(fields[1])
    return sorted(points, key=len, reverse=True)


def _umount(point: str) -> None:
    if not ok(["umount", point]):
        ok(["umount", "-l", point])


def _bridge_ports(bridge: str) -> list[str]:
    proc = run(["ip", "-j", "link", "show", "master", bridge], check=False, quiet=True)
    try:
        return [link["ifname"] for link in json.loads(proc.stdout or "[]")]
    except ValueError:
        return []


def _terminate(pids: list[int], expect: str, grace: float) -> None:
    """SIGTERM the processes (nspawn powers its machine off cleanly), give them ``grace`` seconds."""
    live = [p for p in pids if is_running(p, expect)]
    for pid in live:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while live and time.monotonic() < deadline:
        time.sleep(0.2)
        live = [p for p in live if is_running(p, expect)]


def teardown_site(site: str, grace: float = 4.0) -> list[str]:
    """Remove every trace of the site's lab. Returns a list of what was removed (for the log)."""
    removed: list[str] = []
    state = load_state(site)
    directory = site_dir(site)
    prefix = names.netns_prefix(site)
    if state is not None:
        _terminate([h.pid for h in state.machines() if h.pid], "systemd-nspawn", grace)
        _terminate([s.pid for s in state.switches.values() if s.pid], "racfg_lab.switchcli", 1.0)
    for lab_service in LAB_SERVICES:
        if lab_service.stop(directory):
            removed.append(lab_service.label)
        service.kill(lab_service.stray_pids(site))
    for switch in state.switches.values() if state is not None else ():
        if frr.stop(switches.switch_dir(directory, switch.name)):
            removed.append(f"FRR of {switch.name}")
    service.kill(frr.stray_pids(directory))
    namespaces = [ns for ns in list_netns() if ns.startswith(prefix)]
    for ns in namespaces:
        kill_netns_processes(ns)
    for point in _mounts_under(str(directory) + "/"):
        _umount(point)
        removed.append(f"mount {point}")
    bridge = names.mgmt_bridge(site)
    # Delete the management veths from the root side first: deleting a veth end is synchronous,
    # while a deleted namespace's devices vanish later, from a kernel work queue.
    for link in _bridge_ports(bridge):
        ok(["ip", "link", "delete", link])
        removed.append(f"veth {link}")
    for ns in namespaces:
        delete_netns(ns)
        removed.append(f"netns {ns}")
    if bridge in root_links(bridge):
        ok(["ip", "link", "delete", bridge])
        removed.append(f"bridge {bridge}")
    removed += [f"loop {d}" for d in drives.detach_lab_loops(directory)]
    if directory.exists():
        shutil.rmtree(directory, ignore_errors=True)
        removed.append(f"dir {directory}")
    log.info("lab %s down: removed %d resources", site, len(removed))
    return removed


def teardown_all() -> list[str]:
    """Remove every racfg lab on this machine, known or stray (``lab down --all``)."""
    removed: list[str] = []
    for site in known_sites():
        removed += teardown_site(site)
    for lab_service in LAB_SERVICES:
        service.kill(lab_service.stray_pids())
    service.kill(frr.stray_pids(lab_root()))
    stray_ns = [ns for ns in list_netns() if ns.startswith(names.NETNS_PREFIX)]
    for ns in stray_ns:
        kill_netns_processes(ns)
    for point in _lab_overlay_mounts():
        _umount(point)
        removed.append(f"mount {point}")
    for link in sorted(root_links(names.ROOT_LINK_PREFIX), key=len, reverse=True):  # veths, then bridges
        ok(["ip", "link", "delete", link])
        removed.append(f"link {link}")
    for ns in stray_ns:
        delete_netns(ns)
        removed.append(f"netns {ns}")
    for link in root_links(names.ROOT_LINK_PREFIX):
        ok(["ip", "link", "delete", link])
        removed.append(f"link {link}")
    removed += [f"loop {d}" for d in drives.detach_lab_loops(None)]
    root = lab_root()
    if root.is_dir():
        for entry in root.iterdir():
            if entry.is_dir() and entry.name not in ("images", "repo") and (entry / "hosts").exists():
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(f"dir {entry}")
    return removed


def leftovers(site: str | None = None) -> list[str]:
    """What of a lab (one site, or any) is still on the machine: empty after a clean down."""
    prefix = names.netns_prefix(site) if site else names.NETNS_PREFIX
    found = [f"netns {ns}" for ns in list_netns() if ns.startswith(prefix)]
    links = [names.mgmt_bridge(site)] if site else [names.ROOT_LINK_PREFIX]
    for link_prefix in links:
        found += [f"link {link}" for link in root_links(link_prefix)]
    if site:
        found += [f"mount {m}" for m in _mounts_under(str(site_dir(site)) + "/")]
        dir_prefix = str(site_dir(site)) + "/"
    else:
        found += [f"mount {m}" for m in _lab_overlay_mounts()]
        dir_prefix = ""
    found += [f"{s.label} pid {pid}" for s in LAB_SERVICES for pid in s.stray_pids(site)]
    found += [f"FRR daemon pid {pid}" for pid in frr.stray_pids(site_dir(site) if site else lab_root())]
    found += [f"loop {dev} ({back})" for back, dev in drives.loops_by_file().items()
              if back.endswith(names.DRIVE_SUFFIX) and back.startswith(dir_prefix)]
    return found


def site_exists(site: str) -> bool:
    return Path(site_dir(site) / "state.json").exists() or any(
        ns.startswith(names.netns_prefix(site)) for ns in list_netns())
