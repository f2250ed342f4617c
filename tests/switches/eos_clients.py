"""The EOS clients operators already use, run unmodified against an emulated EOS switch: Arista's
Ansible collection (arista.eos over network_cli), pyeapi and ANTA over eAPI, scrapli over SSH.

Shared by the lab test (tests/switches/test_eos_clients_lab.py) and the bench (bench/eos_clients.py).
The switch password reaches Ansible and ANTA through the environment, never a file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

BIN = Path(sys.executable).parent
PASSWORD_ENV = "RACFG_EOS_TEST_PASSWORD"


@dataclass(frozen=True)
class EosSwitch:
    """How the clients reach one EOS switch."""

    name: str
    host: str
    password: str
    ssh_port: int = 22
    eapi_port: int = 443
    username: str = "admin"


def ansible_inventory(tmp: Path, sw: EosSwitch) -> Path:
    path = tmp / "eos-hosts.yml"
    host = {"ansible_host": sw.host, "ansible_port": sw.ssh_port, "ansible_user": sw.username,
            "ansible_password": "{{ lookup('env', '" + PASSWORD_ENV + "') }}",
            "ansible_connection": "ansible.netcommon.network_cli", "ansible_network_os": "arista.eos.eos",
            "ansible_become": True, "ansible_become_method": "enable",
            "ansible_python_interpreter": sys.executable}
    path.write_text(yaml.safe_dump({"all": {"hosts": {sw.name: host}}}))
    return path


def run_ansible(tmp: Path, sw: EosSwitch, tasks: list[dict[str, Any]], *, check: bool = False,
                timeout: float = 300) -> list[dict[str, Any]]:
    """Run ``tasks`` on the switch with ansible-playbook; each task's result (ansible.posix.json callback)."""
    playbook = tmp / "eos-play.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": sw.name, "gather_facts": False, "tasks": tasks}], sort_keys=False))
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_HOST_KEY_CHECKING="False",
               ANSIBLE_NOCOLOR="1", ANSIBLE_PERSISTENT_COMMAND_TIMEOUT="60", ANSIBLE_RETRY_FILES_ENABLED="False",
               PATH=f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}", **{PASSWORD_ENV: sw.password})
    args = [str(BIN / "ansible-playbook"), "-i", str(ansible_inventory(tmp, sw)), str(playbook)]
    proc = subprocess.run([*args, "--check", "--diff"] if check else args, cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=timeout)
    try:
        report = json.loads(proc.stdout[proc.stdout.index("{"):])
    except ValueError:
        raise AssertionError(
            f"ansible-playbook printed no JSON (rc {proc.returncode}):\n{proc.stdout}\n{proc.stderr}") from None
    results = [task["hosts"][sw.name] for play in report["plays"] for task in play["tasks"]]
    failed = [r for r in results if r.get("failed")]
    assert not failed and proc.returncode == 0, f"ansible-playbook failed (rc {proc.returncode}): {failed}"
    return results


def anta_argv(tmp: Path, sw: EosSwitch, catalog: Path, report: Path) -> list[str]:
    """The ``anta nrfu`` command line for one switch and a catalog, its JSON report into ``report``."""
    inventory = tmp / "anta-inventory.yml"
    inventory.write_text(yaml.safe_dump({"anta_inventory": {"hosts": [
        {"host": sw.host, "port": sw.eapi_port, "name": sw.name}]}}))
    return [str(BIN / "anta"), "nrfu", "--username", sw.username, "--inventory", str(inventory),
            "--catalog", str(catalog), "--insecure", "--disable-cache", "json", "--output", str(report)]


def run_anta(tmp: Path, sw: EosSwitch, catalog: Path, timeout: float = 120) -> dict[str, str]:
    """``anta nrfu`` as an operator runs it: {test name: result} (success, failure, error, skipped).
    The password goes through ANTA's own environment variable."""
    report = tmp / "anta-report.json"
    report.unlink(missing_ok=True)
    env = dict(os.environ, ANTA_PASSWORD=sw.password, NO_COLOR="1")
    proc = subprocess.run(anta_argv(tmp, sw, catalog, report), env=env, capture_output=True, text=True,
                          timeout=timeout)
    if not report.exists():
        raise AssertionError(f"anta nrfu wrote no report (rc {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return {r["test"]: r["result"] for r in json.loads(report.read_text())}
