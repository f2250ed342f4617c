"""Test support: a handle on a running lab for integration tests (used by tests/conftest.py).

Tests reach lab hosts the way racfg does, over real SSH with the lab's key and known_hosts,
and inject faults through the lab API. Lives under tests/ (importable as ``labsupport``: pytest
puts tests/ on sys.path through tests/conftest.py) because it is test code, not product: the
product never leans on the lab. A plain ``ansible-playbook`` run on a lab gets the lab's
connection facts the way an operator passes them: ``--private-key``, ``--ssh-common-args``
and an extra-vars file of switch passwords (see ``run_playbook``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from racfg.connection import ConnectionOverrides
from racfg.inventory.cluster import Cluster, ClusterHost
from racfg.secret_vars import SWITCH_PASSWORDS_VAR, secret_extravars
from racfg.ssh.known_hosts import KnownHosts
from racfg_lab import api
from racfg_lab.state import LabState, load_state


def prerequisite_problem() -> str | None:
    """Why a lab cannot be built here, or None."""
    from racfg_lab import prereq

    root, tools = prereq.missing()
    if not root:
        return "the lab needs root"
    if tools:
        return f"the lab needs {', '.join(tools)} (apt-get install systemd-container debootstrap iproute2)"
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_lab_prerequisites() -> None:
    """Skip the calling test when no lab can be built here; in CI (CI=true) fail it instead."""
    import pytest

    problem = prerequisite_problem()
    if problem is None:
        return
    if in_ci():
        pytest.fail(f"lab tests must run in CI, but {problem}")
    pytest.skip(problem)


@dataclass
class LabHandle:
    """A lab that is up: its inventory, and ways to run commands on its nodes."""

    site: str
    inventory: Path
    cluster: Cluster

    @property
    def state(self) -> LabState:
        state = load_state(self.site)
        assert state is not None, f"lab {self.site} is not up"
        return state

    @property
    def ssh_key(self) -> Path:
        key = api.lab_ssh_key(self.site)
        assert key is not None
        return key

    @property
    def known_hosts(self) -> KnownHosts:
        """The host keys racfg checks the lab's hosts and switches against (the lab records them all)."""
        return KnownHosts(provider=api.lab_known_hosts(self.site))

    @property
    def overrides(self) -> ConnectionOverrides:
        """What the lab hands racfg's commands (key, known_hosts, switch passwords)."""
        return api.connection_overrides(self.site)

    def host(self, name: str) -> ClusterHost:
        return next(h for h in self.cluster.hosts if h.name == name)

    def hosts(self, role: str | None = None) -> list[ClusterHost]:
        return [h for h in self.cluster.hosts if role is None or h.role == role]

    def exec(self, node: str, argv: Sequence[str], check: bool = True,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run inside a node without SSH (as root); raises CalledProcessError if ``check`` and it fails."""
        return api.lab_exec(self.site, node, argv, check=check, timeout=timeout)

    def ssh_argv(self, host: str) -> list[str]:
        known = api.lab_known_hosts(self.site)
        return ["ssh", "-i", str(self.ssh_key), "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
                "-o", f"UserKnownHostsFile={known}", "-o", "StrictHostKeyChecking=yes",
                "-o", "ConnectTimeout=5", f"root@{self.host(host).mgmt}"]

    def ssh(self, host: str, command: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run a shell command on a lab host over real SSH (key and known_hosts of the lab)."""
        return subprocess.run([*self.ssh_argv(host), command], capture_output=True, text=True, check=check,
                              timeout=timeout)


# --- shared by the lab-backed suites (lab, deploy, roles, switches) -------------------------------

@contextmanager
def running_lab(inventory: Path) -> Iterator[LabHandle]:
    """A fresh lab of ``inventory`` for the duration of the block, always removed afterwards.

    Any lab of the same site is removed first: a run killed before its teardown (a timeout, a
    machine copied mid-run) leaves its hosts' overlays, and a lab rebuilt on them starts converged,
    so a test of a first deploy would see nothing to do.
    """
    require_lab_prerequisites()
    from racfg.inventory import load_cluster
    from racfg_lab import lifecycle

    cluster = load_cluster(inventory)
    try:
        lifecycle.down(inventory)
        lifecycle.up(inventory)
        yield LabHandle(cluster.name, inventory, cluster)
    finally:
        lifecycle.down(inventory)


RECAP = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


@dataclass
class PlaybookResult:
    """A plain ansible-playbook run: exit code, its PLAY RECAP per host, and all it printed."""

    rc: int
    seconds: float
    recap: dict[str, dict[str, int]]
    output: str


def render(inventory: Path, out: Path) -> Path:
    """``racfg render INVENTORY --out OUT`` as an operator runs it (a lab module's rendered tree); OUT."""
    subprocess.run([str(Path(sys.executable).parent / "racfg"), "render", str(inventory), "--out", str(out)],
                   check=True, capture_output=True, text=True)
    return out


def lab_connection_args(overrides: ConnectionOverrides) -> list[str]:
    """ansible-playbook options for a lab, as racfg passes them: its key and strict checking on its
    known_hosts (racfg.render.connection_options), and what deploy lifts for a lab run (no GPUs)
    as extra vars."""
    import json

    from racfg.deploy.deploy_run import provider_extravars
    from racfg.render import connection_options

    if not overrides.active:
        return []
    return [*connection_options(overrides), "-e", json.dumps(provider_extravars(overrides))]


@contextmanager
def operator_options(overrides: ConnectionOverrides | None) -> Iterator[list[str]]:
    """The ansible-playbook options an operator passes for a lab (``overrides``; None: none): its key
    and known_hosts, what deploy lifts for a lab run, and a private extra-vars file of the switch
    passwords, which lives while the block runs."""
    extra = lab_connection_args(overrides) if overrides is not None else []
    passwords = dict(overrides.switch_passwords) if overrides is not None else {}
    with secret_extravars({SWITCH_PASSWORDS_VAR: passwords} if passwords else {}) as secret_file:
        yield extra + (["-e", f"@{secret_file}"] if secret_file is not None else [])


def operator_env(**extra: str) -> dict[str, str]:
    """The environment of an operator's own ``ansible-playbook`` with racfg's playbooks: racfg's
    ansible.cfg, no colour, this venv's bin first on PATH; ``extra`` variables on top."""
    from racfg.paths import ansible_root

    bin_dir = Path(sys.executable).parent
    return {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ansible_root() / "ansible.cfg"),
            "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}", **extra}


def run_playbook(rendered: Path, playbook: str, *args: str, timeout: float = 900,
                 overrides: ConnectionOverrides | None = None) -> PlaybookResult:
    """``ansible-playbook -i RENDERED playbooks/PLAYBOOK ARGS`` as an operator would type it.

    With ``overrides`` (a lab's), the lab's key, host keys and switch passwords are passed as an
    operator would: connection options and a private extra-vars file (never the rendered tree).
    """
    from racfg.paths import ansible_root, playbooks_dir

    bin_dir = Path(sys.executable).parent
    env = operator_env()
    start = time.monotonic()
    with operator_options(overrides) as extra:
        proc = subprocess.run([str(bin_dir / "ansible-playbook"), "-i", str(rendered), str(playbooks_dir() / playbook),
                               *extra, *args], cwd=ansible_root(), env=env, capture_output=True, text=True,
                              timeout=timeout)
    recap = {m[0]: {"ok": int(m[1]), "changed": int(m[2]), "unreachable": int(m[3]), "failed": int(m[4])}
             for m in RECAP.findall(proc.stdout)}
    return PlaybookResult(proc.returncode, time.monotonic() - start, recap, proc.stdout + proc.stderr)
