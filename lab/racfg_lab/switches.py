"""Lab switches: a namespace with a bridge (see fabric.py) plus the switch engineer's SSH CLI.

The lab owns the switch's credentials and wiring; ``racfg_lab.switchcli`` owns the CLI. The
contract between them is one JSON file per switch (``cli.json``: platform, listen address,
password file (``password_path``), netns and the port -> veth map) and one command line, which
forks a CLI per switch into the switch's namespace (so that port MTU and shutdown issued on the
CLI act on the real data plane) from one process that loaded the CLI once, so that the switches
share its memory:

    <python> -m racfg_lab.switchcli --fork --config <lab_root()/<site>/switches/<name>/cli.json> ...
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from racfg.errors import CannotRunError
from racfg.inventory.cluster import Cluster
from racfg.paths import private_dir
from racfg.ssh.known_hosts import host_label
from racfg_lab.machines import _tail, is_running, ssh_banner, terminate
from racfg_lab.sh import log
from racfg_lab.state import LabState, SwitchState
from racfg_lab.state import site_dir as lab_dir

CLI_MODULE = "racfg_lab.switchcli"


def switch_dir(site_dir: Path, switch: str) -> Path:
    return site_dir / "switches" / switch


def password_path(switch_dir: Path) -> Path:
    """Where a lab switch's password lives: a directory of its own (0700), because the switch's
    directory is not private: the FRR daemons in it drop privileges to the ``frr`` user."""
    return switch_dir / "secret" / "password"


def ensure_password(switch_dir: Path, same_as: Path | None = None) -> Path:
    """One random password per lab switch (``password_path``), mode 0600 in a 0700 directory, kept for
    the life of the lab; with ``same_as`` (another switch's password file) that switch's password
    instead, see password_sources."""
    path = password_path(switch_dir)
    private_dir(path.parent)
    if not path.exists():
        text = same_as.read_text() if same_as is not None else secrets.token_urlsafe(18) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
    return path


def password_sources(cluster: Cluster) -> dict[str, str]:
    """Switch -> the earlier switch whose lab password it shares: those whose credentials name the same
    ``password_env``. An operator's site has one password behind one variable; in the lab each switch
    draws its own, so without this one variable could open only one switch of such an inventory."""
    first: dict[str, str] = {}
    shared: dict[str, str] = {}
    for name, switch in cluster.switches.items():
        var = switch.spec.credentials.password_env
        if var and var in first:
            shared[name] = first[var]
        elif var:
            first[var] = name
    return shared


HOST_KEY = "ssh_host_ed25519_key"  # in the switch's directory (its CLI's state_dir), as sshd keeps its own


def ensure_host_key(directory: Path) -> str:
    """The switch's SSH host key, made once by the lab (the CLI reads it, switchcli.server.host_key)
    so that the lab records it in its known_hosts before the switch first answers, as it does a
    host's: racfg checks a switch's key as strictly as a host's. Returns its public key line."""
    directory.mkdir(parents=True, exist_ok=True)
    key = directory / HOST_KEY
    if not key.exists():
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"switch@{directory.name}",
                        "-f", str(key)], check=True, capture_output=True, stdin=subprocess.DEVNULL)
    return " ".join(Path(f"{key}.pub").read_text().split()[:2])


def known_hosts_lines(state: LabState) -> list[str]:
    """The lab's known_hosts lines of its switches, by management address (their CLIs listen on
    port 22), as it records its hosts': each key is made here if the switch has none yet."""
    return [f"{host_label(sw.mgmt, 22)} {ensure_host_key(switch_dir(lab_dir(state.site), name))}\n"
            for name, sw in sorted(state.switches.items())]


def replace_host_key(directory: Path, private: bytes | None = None) -> bytes:
    """Give the switch another host key (``private``, or a new one), as a replaced or re-keyed switch
    has; returns the key it had. Its CLI presents the new one once restarted."""
    key = directory / HOST_KEY
    old = key.read_bytes()
    key.unlink()
    Path(f"{key}.pub").unlink(missing_ok=True)
    if private is None:
        ensure_host_key(directory)
    else:
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(private)
    return old


EAPI_PORT = 443  # EOS switches also serve eAPI (HTTPS) on their management address, as real ones do


def write_cli_config(directory: Path, config: dict[str, Any]) -> Path:
    if config.get("platform") == "eos":
        config = {"eapi_port": EAPI_PORT, **config}
    path = directory / "cli.json"
    path.write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")
    return path


def cli_available() -> bool:
    """The switch CLI is built by another engineer; until it exists the lab runs switches without it."""
    try:
        return importlib.util.find_spec(f"{CLI_MODULE}.__main__") is not None
    except ModuleNotFoundError:
        return False


def start_clis(started: list[SwitchState]) -> dict[str, int]:
    """Start the CLIs of ``started`` (their cli.json written), each in its switch's namespace, from one
    process; switch name -> pid. A switch whose CLI runs keeps it."""
    todo = [sw for sw in started if not (sw.pid and is_running(sw.pid, CLI_MODULE))]
    pids = {sw.name: sw.pid for sw in started if sw not in todo and sw.pid}
    if not todo:
        return pids
    if not cli_available():
        log.info("switch CLI (%s) not installed yet: switches have no management CLI", CLI_MODULE)
        return pids
    argv = [sys.executable, "-m", CLI_MODULE, "--fork"]
    for sw in todo:
        argv += ["--config", sw.config]
    proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60, check=False)
    if proc.returncode:
        raise CannotRunError(f"the switch CLIs of {', '.join(sw.name for sw in todo)} did not start: "
                             f"{(proc.stderr or proc.stdout).strip()}")
    return {**pids, **{name: int(pid) for name, pid in json.loads(proc.stdout).items()}}


def start_cli(switch: SwitchState) -> int | None:
    """Start one switch's CLI inside its namespace (or keep the one running); None if the CLI is not
    installed."""
    return start_clis([switch]).get(switch.name)


def cli_exited(pid: int | None, tries: int = 4) -> bool:
    """The CLI process is gone. Asked a few times: while ``ip netns exec`` execs Python,
    /proc/PID/cmdline reads empty for a moment, and is_running() would call a starting CLI dead."""
    for attempt in range(tries):
        if is_running(pid, CLI_MODULE):
            return False
        if attempt < tries - 1:
            time.sleep(0.05)
    return True


def wait_cli(switches: list[SwitchState], timeout: float, site_dir: Path) -> None:
    pending = {s.name: s for s in switches if s.pid}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for name, sw in list(pending.items()):
            if cli_exited(sw.pid):
                log_file = switch_dir(site_dir, name) / "cli.log"
                raise CannotRunError(f"switch CLI of {name} exited: {_tail(log_file)}", hint=f"see {log_file}")
            if ssh_banner(sw.mgmt, timeout=0.5):
                del pending[name]
        if pending:
            time.sleep(0.2)
    if pending:
        raise CannotRunError(f"switch CLI not answering on SSH after {timeout:.0f} s: {', '.join(sorted(pending))}")


def stop_cli(switch: SwitchState, *, kill: bool = False, timeout: float = 10.0) -> None:
    """Stop the switch CLI (SIGTERM, or SIGKILL as a power cut when ``kill``) and wait until it is gone."""
    terminate(switch.pid, CLI_MODULE, kill=kill, timeout=timeout)
    switch.pid = None
