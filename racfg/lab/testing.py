"""Test support: a handle on a running lab for integration tests (used by tests/conftest.py).

Tests reach lab hosts the way racfg does, over real SSH with the lab's key and known_hosts,
and inject faults through the lab API. Kept in the package (not in conftest) so that other
test suites (deploy, validate, smoke) can use the same helpers.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from racfg.inventory.cluster import Cluster, ClusterHost
from racfg.lab import api
from racfg.lab.state import LabState, load_state


def prerequisite_problem() -> str | None:
    """Why a lab cannot be built here, or None."""
    from racfg.lab import prereq

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
