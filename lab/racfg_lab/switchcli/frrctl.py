"""Talking to a lab switch's FRR: where its files are, asking it (vtysh) and reconfiguring it.

The daemons (zebra, bgpd) run in the switch's namespace with every file in one directory of the
switch's lab directory (racfg_lab.frr starts and stops them). The switch CLI, running in the same
namespace, reaches them through their vty sockets there: ``vtysh --vty_socket DIR``. A change of
BGP config is applied as FRR's own tooling applies one: the new bgpd config is written and
``frr-reload.py`` sends bgpd only the difference, so sessions that did not change stay up, as
they do on a real switch when a neighbour is added.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

FRR_BIN = "/usr/lib/frr"
VTYSH = "vtysh"
RELOAD = f"{FRR_BIN}/frr-reload.py"
DAEMONS = ("zebra", "bgpd")
TIMEOUT_S = 20


class FrrError(Exception):
    """FRR did not answer or refused a config; the message says what it printed."""


def conf_path(directory: Path, daemon: str) -> Path:
    return directory / f"{daemon}.conf"


def pid_path(directory: Path, daemon: str) -> Path:
    return directory / f"{daemon}.pid"


def vty_path(directory: Path, daemon: str) -> Path:
    return directory / f"{daemon}.vty"


def vtysh(directory: Path, *commands: str) -> str:
    argv = [VTYSH, "--vty_socket", str(directory)]
    for command in commands:
        argv += ["-c", command]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FrrError(f"vtysh: {exc}") from exc
    if proc.returncode:
        raise FrrError((proc.stderr or proc.stdout).strip() or f"vtysh exited {proc.returncode}")
    return proc.stdout


def vtysh_json(directory: Path, command: str) -> Any:
    text = vtysh(directory, f"{command} json")
    try:
        return json.loads(text or "{}")
    except ValueError as exc:
        raise FrrError(f"{command} json: not JSON: {text[:200]!r}") from exc


def apply_bgp(directory: Path, config_text: str) -> None:
    """Make bgpd's running config ``config_text``: written as its config file (what a restart
    reads) and sent to the running bgpd as a difference (frr-reload.py)."""
    path = conf_path(directory, "bgpd")
    if path.exists() and path.read_text() == config_text:
        return
    path.write_text(config_text)
    argv = ["python3", RELOAD, "--reload", "--daemon", "bgpd", "--vty_socket", str(directory),
            "--confdir", str(directory), "--rundir", str(directory), "--bindir", "/usr/bin", str(path)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S * 3, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FrrError(f"frr-reload: {exc}") from exc
    if proc.returncode:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise FrrError("frr-reload failed: " + " | ".join(tail))
