"""One lldpd per lab Ethernet switch, in the switch's namespace, living as long as its data plane.

LLDP belongs to the switch's data plane in the lab (it keeps running when the switch CLI is
stopped or restarted, as the bridge does) and must report the wiring that exists. Each lldpd has
its own control socket, pid file, config and log in the switch's lab directory, listens on the
switch's ``swpN`` ports only, runs no SNMP agent, and transmits every second so that a neighbour
appears, or changes after a cable swap, within a few seconds (production lldpd keeps its 30 s).
What the switch CLI shows from it: racfg_lab.switchcli.lldp.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from racfg.errors import CannotRunError
from racfg.switches.ports import device_port
from racfg_lab.machines import _children, _tail, is_running, terminate
from racfg_lab.state import SwitchState
from racfg_lab.switchcli import lldp

TX_INTERVAL_S = 1
PROCESS = "lldpd"
# What a real switch of each platform announces as its system description.
SYSTEM_DESCRIPTION = {"onyx": "Mellanox Onyx", "eos": "Arista Networks EOS"}


def write_config(switch: SwitchState, directory: Path, ports: dict[str, str]) -> Path:
    """The lldpcli commands the switch's lldpd runs at start; ``ports``: canonical port -> swpN."""
    path = directory / lldp.CONFIG_NAME
    named = {ifname: device_port(switch.platform, port) for port, ifname in ports.items()}
    path.write_text(lldp.daemon_config(switch.name, named, TX_INTERVAL_S))
    return path


def start(switch: SwitchState, directory: Path, timeout: float = 10.0) -> int | None:
    """Start the switch's lldpd (unless it runs, or the platform has no LLDP) and wait for its socket."""
    if not lldp.runs_lldp(switch.platform):
        return None
    if switch.lldpd_pid and is_running(switch.lldpd_pid, PROCESS):
        return switch.lldpd_pid
    socket = lldp.socket_path(directory)
    socket.unlink(missing_ok=True)  # a stale socket of a killed lldpd would read as "up"
    argv = ["ip", "netns", "exec", switch.netns, "lldpd", "-d", "-u", str(socket),
            "-p", str(directory / lldp.PIDFILE_NAME), "-I", lldp.PORT_PATTERN,
            "-O", str(directory / lldp.CONFIG_NAME), "-m", switch.mgmt,
            "-S", SYSTEM_DESCRIPTION.get(switch.platform, switch.platform)]
    log_file = directory / lldp.LOG_NAME
    with open(log_file, "ab") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    _children.append(proc)
    deadline = time.monotonic() + timeout
    while not socket.exists():
        if not is_running(proc.pid, PROCESS):  # `ip netns exec ... lldpd` or lldpd itself
            raise CannotRunError(f"lldpd of switch {switch.name} exited: {_tail(log_file)}", hint=f"see {log_file}")
        if time.monotonic() > deadline:
            raise CannotRunError(f"lldpd of switch {switch.name} made no control socket in {timeout:.0f} s",
                                 hint=f"see {log_file}")
        time.sleep(0.05)
    switch.lldpd_pid = proc.pid
    return proc.pid


def stop(switch: SwitchState, timeout: float = 5.0) -> None:
    """Stop the switch's lldpd (SIGTERM: it sends its shutdown LLDPDUs), SIGKILL if it lingers."""
    terminate(switch.lldpd_pid, PROCESS, timeout=timeout)
    switch.lldpd_pid = None


def restart(switch: SwitchState, directory: Path) -> None:
    """A fresh lldpd with the same config: after a cable swap its table starts from the new wiring
    (a running lldpd keeps a renamed port's old neighbours until their TTL runs out)."""
    stop(switch)
    start(switch, directory)


def is_up(switch: SwitchState) -> bool:
    return bool(switch.lldpd_pid) and is_running(switch.lldpd_pid, PROCESS)
