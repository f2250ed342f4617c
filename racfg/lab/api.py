"""What the rest of racfg asks of a running lab: its SSH key, switch passwords, exec, faults.

deploy/validate/drift/smoke call these to reach lab targets; tests call them to inject faults.
All take the site name (``inventory.site.name``) and raise CannotRunError when that lab is not
up, so a caller's error reads "lab X is not up (hint: racfg lab up ...)" instead of a KeyError.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from racfg.errors import CannotRunError, UsageError
from racfg.lab import fabric, machines, switches
from racfg.lab.lifecycle import ssh_key_path
from racfg.lab.state import CableState, LabState, SwitchState, load_state, save_state, site_dir

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def is_lab_up(site: str) -> bool:
    """True when a complete lab of ``site`` exists (its machines may have been stopped by a fault)."""
    state = load_state(site)
    return state is not None and state.complete


def require_lab(site: str) -> LabState:
    state = load_state(site)
    if state is None or not state.complete:
        raise CannotRunError(f"no lab of site {site} is up", hint="run `racfg lab up INVENTORY` first")
    return state


def lab_ssh_key(site: str) -> Path | None:
    """The lab's SSH private key (root on every lab host), or None when no lab of ``site`` is up."""
    key = ssh_key_path(site)
    return key if is_lab_up(site) and key.exists() else None


def lab_known_hosts(site: str) -> Path | None:
    """known_hosts with every lab host's key by management address (for StrictHostKeyChecking)."""
    path = ssh_key_path(site).parent / "known_hosts"
    return path if is_lab_up(site) and path.exists() else None


def lab_ssh_config(site: str) -> Path | None:
    """An ssh_config with a Host block per lab host: ``ssh -F $(...) dgx01``."""
    path = ssh_key_path(site).parent / "config"
    return path if is_lab_up(site) and path.exists() else None


def switch_password(site: str, switch: str) -> str:
    """The password the lab generated for ``switch`` (user: the inventory's credentials.username)."""
    state = require_lab(site)
    if switch not in state.switches:
        raise CannotRunError(f"lab {site} has no switch {switch}",
                             hint=f"its switches: {', '.join(sorted(state.switches)) or 'none'}")
    path = switches.switch_dir(site_dir(site), switch) / "password"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        raise CannotRunError(f"lab switch {switch} of site {site} has no password file {path}") from None


def exec_argv(state: LabState, node: str, argv: Sequence[str]) -> list[str]:
    """The root-namespace command line that runs ``argv`` inside a lab host or switch."""
    if not argv:
        raise UsageError("give a command to run")
    if node in state.switches:
        return ["ip", "netns", "exec", state.switches[node].netns, *argv]
    if node not in state.hosts:
        raise UsageError(f"lab {state.site} has no node {node}",
                         hint="its nodes: " + ", ".join(sorted([*state.hosts, *state.switches])))
    host = state.hosts[node]
    pid = machines.init_pid(host.netns) if machines.is_running(host.pid) else None
    if pid is None:
        raise CannotRunError(f"lab host {node} is not running", hint=f"`racfg lab start {node}`")
    return ["nsenter", "-t", str(pid), "-m", "-u", "-i", "-n", "-p", "--",
            "env", "-i", f"PATH={PATH}", "HOME=/root", "TERM=dumb", "LANG=C.UTF-8", *argv]


def lab_exec(site: str, node: str, argv: Sequence[str], *, check: bool = False, capture: bool = True,
             timeout: float | None = 300, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` inside lab host or switch ``node`` (as root, no SSH needed) and return the result."""
    full = exec_argv(require_lab(site), node, argv)
    return subprocess.run(full, check=check, capture_output=capture, text=True, timeout=timeout, input=input)


# --- faults ---------------------------------------------------------------------------------------

def _cable(state: LabState, node: str, end: str) -> CableState:
    """A cable by host+NIC or by switch+port (either end names it)."""
    for cable in state.cables:
        if (cable.host == node and cable.nic == end) or (cable.switch == node and end in (cable.port,
                                                                                            cable.switch_ifname)):
            return cable
    raise UsageError(f"lab {state.site} has no cable at {node} {end}",
                     hint="cables: " + ", ".join(f"{c.host}:{c.nic}-{c.switch}:{c.port}" for c in state.cables))


def set_link(site: str, node: str, end: str, *, up: bool | None = None, rate_mbit: int | None = None,
             mtu: int | None = None) -> CableState:
    """Act on a cable's switch port: admin down/up (the host sees carrier loss), lab rate, port MTU.

    ``node``/``end`` is a host and NIC (``dgx01``, ``data0``) or a switch and port (``sw1``, ``1/1``).
    This works beside the switch CLI, on the data plane directly: a fault, not a configuration.
    """
    state = require_lab(site)
    cable = _cable(state, node, end)
    ns = state.switches[cable.switch].netns
    if mtu is not None:
        fabric.set_mtu(ns, cable.switch_ifname, mtu)
    if rate_mbit is not None:
        fabric.set_rate(ns, cable.switch_ifname, rate_mbit)
        cable.lab_rate_mbit = rate_mbit
        save_state(state)
    if up is not None:
        fabric.set_admin(ns, cable.switch_ifname, up)
    return cable


def stop_host(site: str, host: str) -> None:
    """Power a lab host off (its network namespace, NICs and drives stay, like a powered-off server)."""
    state = require_lab(site)
    if host not in state.hosts:
        raise UsageError(f"lab {site} has no host {host}", hint="hosts: " + ", ".join(sorted(state.hosts)))
    machines.stop(state.hosts[host])
    save_state(state)


def start_host(site: str, host: str, wait: bool = True) -> None:
    """Boot a stopped lab host again and (by default) wait for its SSH."""
    state = require_lab(site)
    if host not in state.hosts:
        raise UsageError(f"lab {site} has no host {host}", hint="hosts: " + ", ".join(sorted(state.hosts)))
    hs = state.hosts[host]
    logs = site_dir(site) / "logs"
    hs.pid = machines.start(hs, Path(state.repo), logs / f"{host}.log")
    save_state(state)
    if wait:
        machines.wait_ssh([hs], 60, logs)


def _lab_switch(state: LabState, switch: str) -> SwitchState:
    if switch not in state.switches:
        raise UsageError(f"lab {state.site} has no switch {switch}",
                         hint="switches: " + ", ".join(sorted(state.switches)))
    return state.switches[switch]


def stop_switch(site: str, switch: str, *, kill: bool = False) -> None:
    """Stop a lab switch's CLI process (SSH refused; its data plane keeps forwarding, as it was).

    ``kill=True`` sends SIGKILL: a power cut, nothing saved on the way out.
    """
    state = require_lab(site)
    switches.stop_cli(_lab_switch(state, switch), kill=kill)
    save_state(state)


def start_switch(site: str, switch: str, wait: bool = True) -> None:
    """Start a lab switch's CLI as ``lab up`` does (it boots from its saved startup config)."""
    state = require_lab(site)
    sws = _lab_switch(state, switch)
    directory = site_dir(site)
    sws.pid = switches.start_cli(sws, switches.switch_dir(directory, switch))
    save_state(state)
    if wait and sws.pid:
        switches.wait_cli([sws], 30, directory)


def restart_switch(site: str, switch: str, *, kill: bool = True) -> None:
    """Reboot a lab switch: kill its CLI and start it again; saved config stays, unsaved is lost."""
    stop_switch(site, switch, kill=kill)
    start_switch(site, switch)
