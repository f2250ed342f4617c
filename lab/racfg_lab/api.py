"""What the rest of racfg asks of a running lab: its SSH key, switch passwords, exec, faults.

deploy/validate/drift/smoke call these to reach lab targets; tests call them to inject faults.
All take the site name (``inventory.site.name``) and raise CannotRunError when that lab is not
up, so a caller's error reads "lab X is not up (hint: racfg lab up ...)" instead of a KeyError.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.errors import CannotRunError, UsageError
from racfg.inventory import Cluster, load_cluster
from racfg_lab import drives, fabric, lldpd, machines, switches
from racfg_lab.lifecycle import ssh_key_path
from racfg_lab.state import CableState, LabState, SwitchState, load_state, save_state, site_dir
from racfg_lab.substitutions import inventory_substitutions


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
    """known_hosts with every lab host's and switch's key by management address (for StrictHostKeyChecking)."""
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
    path = switches.password_path(switches.switch_dir(site_dir(site), switch))
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        raise CannotRunError(f"lab switch {switch} of site {site} has no password file {path}") from None


def switch_logins(site: str, switch: str) -> int:
    """How many SSH logins lab switch ``switch`` has accepted in the life of the lab (its cli.log)."""
    from racfg_lab.switchcli.config import LOGIN_MARK

    require_lab(site)
    log = switches.switch_dir(site_dir(site), switch) / "cli.log"
    text = log.read_text(errors="replace") if log.is_file() else ""
    return sum(line.startswith(LOGIN_MARK) for line in text.splitlines())


def connection_overrides(site: str, cluster: Cluster | None = None) -> ConnectionOverrides:
    """What a running lab of ``site`` tells the commands: its SSH key, known_hosts and switch passwords,
    and what it substitutes for the hardware and software the inventory names but the lab lacks
    (racfg_lab.substitutions), computed from ``cluster`` or else from the inventory the lab was built from.

    NO_OVERRIDES when no lab of ``site`` is up, so the same inventory reaches a real site unchanged.
    Only switches whose password file exists are listed (a switch that failed to start has none).
    """
    key = lab_ssh_key(site)
    if key is None:
        return NO_OVERRIDES
    state = require_lab(site)
    passwords: dict[str, str] = {}
    for name in sorted(state.switches):
        path = switches.password_path(switches.switch_dir(site_dir(site), name))
        if path.is_file():
            passwords[name] = path.read_text().strip()
    substitutions = [f"SSH key {key} for hosts without ssh_key"]
    known = lab_known_hosts(site)
    if known is not None:
        substitutions.append(f"host keys from {known}")
    if passwords:
        substitutions.append(f"generated passwords of lab switches ({', '.join(passwords)}) where credentials "
                             "say lab: true")
    substitutions.append("no GPUs: dgx hosts report 'no GPU' as a skip instead of failing")
    substitutions.append("lldpd announces every second (racfg_lldp_tx_interval: 1) so cabling shows at once")
    substitutions.append("line rate of each link = its lab shaped rate (tc tbf, both directions)")
    rates = {(c.host, c.nic): int(c.lab_rate_mbit) for c in state.cables}
    inventory = inventory_substitutions(cluster or load_cluster(state.inventory))
    substitutions += inventory.lines
    return ConnectionOverrides(provider="lab", ssh_key=key, known_hosts=known, switch_passwords=passwords,
                               substitutions=tuple(substitutions), link_rates_mbit=rates,
                               host_vars={"racfg_gpu_required": False, "racfg_lldp_tx_interval": 1,
                                          **inventory.host_vars})


def exec_argv(state: LabState, node: str, argv: Sequence[str]) -> list[str]:
    """The root-namespace command line that runs ``argv`` inside a lab host or switch."""
    if not argv:
        raise UsageError("give a command to run")
    if node in state.switches:
        return ["ip", "netns", "exec", state.switches[node].netns, *argv]
    machine = {m.name: m for m in state.machines()}.get(node)  # a host, or the Slurm controller
    if machine is None:
        raise UsageError(f"lab {state.site} has no node {node}",
                         hint="its nodes: " + ", ".join(sorted([*(m.name for m in state.machines()), *state.switches])))
    return machines.exec_argv(machine, argv)


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


def _ends(state: LabState, cable: CableState) -> fabric.CableEnds:
    return fabric.CableEnds(state.switches[cable.switch].netns, cable.switch_ifname, state.hosts[cable.host].netns,
                            cable.nic)


def set_link(site: str, node: str, end: str, *, up: bool | None = None, rate_mbit: int | None = None,
             mtu: int | None = None) -> CableState:
    """Act on a cable: switch port admin down/up (the host sees carrier loss), lab rate (both
    directions), switch port MTU.

    ``node``/``end`` is a host and NIC (``dgx01``, ``data0``) or a switch and port (``sw1``, ``1/1``).
    This works beside the switch CLI, on the data plane directly: a fault, not a configuration.
    """
    state = require_lab(site)
    cable = _cable(state, node, end)
    ns = state.switches[cable.switch].netns
    if mtu is not None:
        fabric.set_mtu(ns, cable.switch_ifname, mtu)
    if rate_mbit is not None:
        fabric.set_cable_rate(_ends(state, cable), rate_mbit)
        cable.lab_rate_mbit = rate_mbit
        save_state(state)
    if up is not None:
        fabric.set_admin(ns, cable.switch_ifname, up)
    return cable


def _host_cable(state: LabState, end: tuple[str, str]) -> CableState:
    host, nic = end
    for cable in state.cables:
        if cable.host == host and cable.nic == nic:
            return cable
    raise UsageError(f"lab {state.site} has no cable at {host}:{nic}",
                     hint="cables: " + ", ".join(c.key for c in state.cables))


def _exchange(site: str, state: LabState, a: CableState, b: CableState) -> None:
    """Replug ``a`` and ``b`` into each other's switch ports, in the kernel, the state and LLDP."""
    fabric.swap_switch_ends(_ends(state, a), _ends(state, b))
    for field in ("switch", "port", "switch_ifname", "lab_rate_mbit"):
        value = getattr(a, field)
        setattr(a, field, getattr(b, field))
        setattr(b, field, value)
    save_state(state)
    directory = site_dir(site)
    for name in sorted({a.switch, b.switch}):
        lldpd.restart(state.switches[name], switches.switch_dir(directory, name))
    save_state(state)


def swap_cables(site: str, a: tuple[str, str], b: tuple[str, str]) -> tuple[CableState, CableState]:
    """A cabling fault: the cables of host NICs ``a`` and ``b`` (``("dgx01", "data0")``) swap
    their switch ports. Swapping the same two again puts them back (see unswap_cables).

    The hosts keep their NICs and addresses; the switch ports keep MTU, admin state and rate;
    within a few seconds both ends' LLDP report the new wiring. Returns the two cables as wired now.
    """
    state = require_lab(site)
    ca, cb = _host_cable(state, a), _host_cable(state, b)
    if ca is cb:
        raise UsageError(f"cannot swap {ca.key} with itself", hint="name two different host NICs")
    if ca.swapped_with or cb.swapped_with:
        if ca.swapped_with == cb.key and cb.swapped_with == ca.key:
            return unswap_cables(site, a, b)
        busy = ca if ca.swapped_with else cb
        raise UsageError(f"{busy.key} is already swapped with {busy.swapped_with}",
                         hint=f"undo that first: racfg lab swap {busy.key} {busy.swapped_with} --undo")
    _exchange(site, state, ca, cb)
    ca.swapped_with, cb.swapped_with = cb.key, ca.key
    save_state(state)
    return ca, cb


def unswap_cables(site: str, a: tuple[str, str], b: tuple[str, str]) -> tuple[CableState, CableState]:
    """Put two swapped cables back into their inventory ports (nothing to do if they are there)."""
    state = require_lab(site)
    ca, cb = _host_cable(state, a), _host_cable(state, b)
    if not ca.swapped_with and not cb.swapped_with:
        return ca, cb
    if ca.swapped_with != cb.key or cb.swapped_with != ca.key:
        busy = ca if ca.swapped_with else cb
        raise UsageError(f"{ca.key} and {cb.key} are not swapped with each other "
                         f"({busy.key} is swapped with {busy.swapped_with})",
                         hint=f"racfg lab swap {busy.key} {busy.swapped_with} --undo")
    _exchange(site, state, ca, cb)
    ca.swapped_with = cb.swapped_with = ""
    save_state(state)
    return ca, cb


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
    sws.pid = switches.start_cli(sws)
    save_state(state)
    if wait and sws.pid:
        switches.wait_cli([sws], 30, directory)


def restart_switch(site: str, switch: str, *, kill: bool = True) -> None:
    """Reboot a lab switch: kill its CLI and start it again; saved config stays, unsaved is lost."""
    stop_switch(site, switch, kill=kill)
    start_switch(site, switch)


def rekey_switch(site: str, switch: str, private_key: bytes | None = None) -> bytes:
    """Give a lab switch another SSH host key (``private_key``, else a new one) and restart its CLI,
    as a replaced switch, or one posing as it, would present; the lab's known_hosts keeps the key
    it recorded. Returns the private key it had (to give it back)."""
    _lab_switch(require_lab(site), switch)
    old = switches.replace_host_key(switches.switch_dir(site_dir(site), switch), private_key)
    restart_switch(site, switch, kill=False)
    return old


def cut_switch_session(site: str, switch: str, after: int, *, hang: bool = False) -> None:
    """Fault injection: the next SSH session of lab switch ``switch`` that types ``after`` lines in
    config mode gets the last of them executed but never answered; the switch then drops the
    connection, or (``hang``) keeps it open and answers nothing more. Fires once
    (racfg_lab.switchcli.faults)."""
    from racfg_lab.switchcli import faults

    state = require_lab(site)
    _lab_switch(state, switch)
    try:
        faults.arm(switches.switch_dir(site_dir(site), switch), after, hang=hang)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# --- slow-downs: faults that pass the absolute marks, for performance drift ------------------------

def slow_link(site: str, host: str, nic: str, fraction: float) -> CableState:
    """A cable that carries ``fraction`` of its lab rate, both ways, while the lab still declares the
    rate (a worn cable, a port that lost lanes but kept its speed): a fault, not a configuration, so
    smoke keeps judging the link against its rate. ``fraction`` 1 puts it back."""
    if not 0 < fraction <= 1:
        raise UsageError(f"slow_link: fraction {fraction} is not in (0, 1]")
    state = require_lab(site)
    cable = _host_cable(state, (host, nic))
    fabric.set_cable_rate(_ends(state, cable), cable.lab_rate_mbit * fraction)
    return cable


def throttle_drive(site: str, host: str, path: str, read_bytes_per_s: int | None) -> str:
    """Reads of one lab drive held to ``read_bytes_per_s`` (None: back to the lab's drive rate), as a
    drive that slowed (worn flash, a thermal throttle). The kernel's block throttle on the drive's loop
    device: it is the host's alone, so the rule touches nothing else. Returns the device."""
    state = require_lab(site)
    device = state.hosts[host].drives.get(path) if host in state.hosts else None
    if device is None:
        raise UsageError(f"lab {site} has no drive {path} on {host}")
    if not drives.can_shape():
        raise CannotRunError(f"cannot throttle {device}: this kernel has no cgroup v1 block throttle "
                             f"({drives.BLKIO})")
    rate, iops = drives.shaping(sum(len(hs.drives) for hs in state.hosts.values()))
    drives.shape(device, read_bytes_per_s or rate, iops)
    return device
