"""Thin wrappers over ``ip``: namespaces, veths, bridges. The kernel objects the lab is made of."""

from __future__ import annotations

import contextlib
import json
import os
import signal

from racfg_lab.sh import ok, run


def list_netns() -> list[str]:
    proc = run(["ip", "-j", "netns", "list"], check=False, quiet=True)
    try:
        return [entry["name"] for entry in json.loads(proc.stdout or "[]")]
    except ValueError:
        return []


def create_netns(name: str) -> None:
    if name not in list_netns():
        run(["ip", "netns", "add", name])
    run(["ip", "-n", name, "link", "set", "lo", "up"])


def netns_pids(name: str) -> list[int]:
    proc = run(["ip", "netns", "pids", name], check=False, quiet=True)
    return [int(p) for p in proc.stdout.split() if p.isdigit()]


def kill_netns_processes(name: str) -> None:
    """SIGKILL everything still running inside a namespace (a container's init takes its pid ns along)."""
    for _ in range(5):
        pids = netns_pids(name)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        run(["sleep", "0.2"], quiet=True)


def delete_netns(name: str) -> None:
    """Delete a namespace; veths inside it die with it, taking their peers along."""
    if name in list_netns():
        kill_netns_processes(name)
        ok(["ip", "netns", "delete", name])


def link_exists(name: str, netns: str | None = None) -> bool:
    argv = ["ip"] + (["-n", netns] if netns else []) + ["link", "show", "dev", name]
    return ok(argv)


def root_links(prefix: str) -> list[str]:
    proc = run(["ip", "-j", "link", "show"], check=False, quiet=True)
    try:
        links = json.loads(proc.stdout or "[]")
    except ValueError:
        return []
    return [link["ifname"] for link in links if link.get("ifname", "").startswith(prefix)]


def link_info(netns: str | None, name: str) -> dict:
    argv = ["ip", "-j"] + (["-n", netns] if netns else []) + ["-d", "link", "show", "dev", name]
    proc = run(argv, check=False, quiet=True)
    try:
        data = json.loads(proc.stdout or "[]")
    except ValueError:
        return {}
    return data[0] if data else {}


def ip(netns: str | None, *args: str) -> None:
    run(["ip"] + (["-n", netns] if netns else []) + list(args))
