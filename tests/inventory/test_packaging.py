"""The wheel carries the Ansible content, and an installed racfg finds it outside a checkout."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_wheel_ships_playbooks_roles_validators(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path), str(REPO)], check=True, capture_output=True)
    [wheel] = tmp_path.glob("racfg-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("racfg/_ansible/playbooks/site.yml", "racfg/_ansible/playbooks/switches.yml",
                   "racfg/_ansible/roles/fabric/tasks/main.yml", "racfg/_ansible/roles/switch/library/racfg_switch.py",
                   "racfg/_ansible/ansible.cfg", "racfg/cli/app.py"):
        assert needed in names, needed
    assert any(n.startswith("racfg/_ansible/validators/") for n in names)
    unpacked = tmp_path / "site-packages"
    zipfile.ZipFile(wheel).extractall(unpacked)
    found = subprocess.run(
        [sys.executable, "-c", "import racfg.paths as p; print(p.playbooks_dir()); print(p.roles_dir())"],
        capture_output=True, text=True, check=True, cwd=tmp_path, env={"PYTHONPATH": str(unpacked)},
    ).stdout.split()
    assert found == [str(unpacked / "racfg/_ansible/playbooks"), str(unpacked / "racfg/_ansible/roles")]


# Keywords of a task, a block or a play (anything else a task carries is its module).
TASK_KEYWORDS = {
    "name", "when", "register", "vars", "loop", "loop_control", "tags", "become", "become_user", "notify",
    "changed_when", "failed_when", "no_log", "check_mode", "ignore_errors", "ignore_unreachable", "block", "rescue",
    "always", "delegate_to", "delegate_facts", "run_once", "environment", "until", "retries", "delay", "listen", "args",
    "diff", "timeout", "throttle", "any_errors_fatal", "module_defaults", "connection", "remote_user", "async", "poll",
    "hosts", "gather_facts", "gather_subset", "roles", "tasks", "pre_tasks", "post_tasks", "handlers", "serial",
    "strategy", "max_fail_percentage", "force_handlers", "order", "vars_files", "import_playbook",
} | {f"with_{kind}" for kind in ("items", "dict", "fileglob", "sequence", "subelements", "together", "nested")}
# A collection named in a lookup, a filter or a test: lookup('ns.coll.name'), | ns.coll.name, is ns.coll.name
COLLECTION_PLUGIN = re.compile(r"(?:lookup|query)\(\s*['\"]([a-z_]+\.[a-z_]+\.[a-z_]+)"
                               r"|(?:\||\bis)\s*([a-z_]+\.[a-z_]+\.[a-z_]+)")


def _modules(node: object) -> Iterator[str]:
    """The module of every task (and handler) in a parsed tasks file or playbook."""
    if isinstance(node, list):
        for item in node:
            yield from _modules(item)
    elif isinstance(node, dict):
        if "name" in node or "block" in node:
            yield from (key for key in node if key not in TASK_KEYWORDS)
        for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
            yield from _modules(node.get(key))


def test_every_module_and_plugin_a_role_uses_comes_with_ansible_core_or_with_racfg():
    """The wheel is the product: with only the declared dependencies (ansible-core, no collection
    bundle) every module a role or playbook names is ansible.builtin's or one racfg ships in a role's
    library/, and no lookup, filter or test comes from a collection (ansible.posix.mount was one)."""
    shipped = {p.stem for p in REPO.glob("roles/*/library/*.py")}
    files = [*REPO.glob("roles/*/tasks/*.yml"), *REPO.glob("roles/*/handlers/*.yml"), *REPO.glob("playbooks/*.yml")]
    assert len(files) > 10
    foreign = []
    for path in files:
        text = path.read_text()
        for module in _modules(yaml.safe_load(text)):
            if not (module.startswith("ansible.builtin.") or module in shipped):
                foreign.append(f"{path.relative_to(REPO)}: module {module}")
        foreign += [f"{path.relative_to(REPO)}: plugin {m[0] or m[1]}" for m in COLLECTION_PLUGIN.findall(text)
                    if not (m[0] or m[1]).startswith("ansible.builtin.")]
        assert "collections:" not in text, path
    assert not foreign, "needs a collection no declared dependency installs: " + "; ".join(foreign)
    assert "racfg_mount" in shipped  # nfs_client's mount, shipped in its role
