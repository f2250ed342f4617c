"""Check mode does not under-report: a static audit of every role's command and shell tasks.

Ansible skips ``command``/``shell``/``raw``/``script`` tasks under ``--check``: it cannot know
what they would do, and it reports them as *skipped*, not as changes. ``racfg deploy --check``
and ``racfg drift`` would then say "no changes" on a host where a real run acts. So every such
task in a role must be one of:

1. **A read-only probe**: ``changed_when: false`` (it never changes anything) and either
   ``check_mode: false`` (it runs under ``--check`` too, because the plan needs its answer) or a
   ``when`` (its own or its block's) with ``not ansible_check_mode`` (a read-back after an action,
   which a ``--check`` run did not take).
2. **Self-reporting**: ``check_mode: false``, its command text branches on ``ansible_check_mode``
   (under ``--check`` the script stops after its own probe), and its ``changed_when`` accepts a
   "would ..." answer (so the would-be change counts as a change).
3. **Announced**: preceded, in the same task file, by its own check-mode report, a
   ``ansible.builtin.debug`` task whose ``when`` names ``ansible_check_mode``, whose
   ``changed_when`` is ``true`` (so the report counts as a change), and whose ``msg`` starts with
   "would " ("would run: ...", "would install ...", "would reconfigure ...": the verb says
   what). Each report announces one task: the first acting command after it; a second command
   needs a second report.

Tasks inside ``block``/``rescue``/``always`` are read in file order, as Ansible runs them.
Handlers are not audited: a handler runs only when a task notified it, and that task already
counts as the change under ``--check``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ROLES = REPO / "roles"

# The modules Ansible cannot run in check mode, under the names a task may use.
COMMAND_MODULES = {f"{prefix}{name}" for prefix in ("", "ansible.builtin.", "ansible.legacy.")
                   for name in ("command", "shell", "raw", "script")}
DEBUG_MODULES = {"debug", "ansible.builtin.debug", "ansible.legacy.debug"}
REPORT_PREFIX = "would "


@dataclass
class Task:
    """One task of a role's task file, with where it is, for the failure message."""

    file: Path
    name: str
    body: dict[str, Any]

    @property
    def where(self) -> str:
        where = self.file.relative_to(REPO) if self.file.is_relative_to(REPO) else self.file
        return f"{where}: {self.name!r}"

    def module(self, names: set[str]) -> str | None:
        return next((key for key in self.body if key in names), None)


def as_list(when: object) -> list[str]:
    if when is None or when == "":
        return []
    return [str(w) for w in when] if isinstance(when, list) else [str(when)]


def flat_tasks(file: Path, tasks: list[dict[str, Any]] | None,
               inherited: dict[str, Any] | None = None) -> Iterator[Task]:
    """The tasks of a list in the order they run, blocks opened; a task inside a block gets the
    block's ``when`` and ``check_mode`` as Ansible applies them."""
    inherited = inherited or {}
    for body in tasks or []:
        body = {**body, "when": as_list(inherited.get("when")) + as_list(body.get("when"))}
        if "check_mode" not in body and "check_mode" in inherited:
            body["check_mode"] = inherited["check_mode"]
        nested = [body[k] for k in ("block", "rescue", "always") if k in body]
        if nested:
            for part in nested:
                yield from flat_tasks(file, part, {"when": body["when"], **({"check_mode": body["check_mode"]}
                                                                         if "check_mode" in body else {})})
        else:
            yield Task(file, str(body.get("name", "<unnamed>")), body)


def when_text(task: Task) -> str:
    return " and ".join(as_list(task.body.get("when")))


def is_false(value: object) -> bool:
    return value is False or str(value).strip().lower() in ("false", "no")


def is_probe(task: Task) -> bool:
    """Read-only: never reports a change, and either runs under --check too or is a read-back that
    does not run under --check at all (its ``when``, or its block's, says ``not ansible_check_mode``)."""
    return is_false(task.body.get("changed_when", True)) and (
        is_false(task.body.get("check_mode", True)) or "not ansible_check_mode" in when_text(task))


def is_self_reporting(task: Task, module: str) -> bool:
    text = yaml.safe_dump(task.body[module])
    return (is_false(task.body.get("check_mode", True)) and "ansible_check_mode" in text
            and "would" in str(task.body.get("changed_when", "")))


def is_report(task: Task) -> bool:
    module = task.module(DEBUG_MODULES)
    if module is None:
        return False
    msg = str((task.body[module] or {}).get("msg", "")).strip()
    return ("ansible_check_mode" in when_text(task) and task.body.get("changed_when") is True
            and msg.lower().startswith(REPORT_PREFIX))


def unreported_commands(file: Path) -> list[str]:
    """The acting command tasks of a task file that check mode would skip without a word."""
    problems = []
    pending_report = False
    for task in flat_tasks(file, yaml.safe_load(file.read_text())):
        if is_report(task):
            pending_report = True
            continue
        module = task.module(COMMAND_MODULES)
        if module is None or is_probe(task) or is_self_reporting(task, module):
            continue
        if pending_report:
            pending_report = False
        else:
            problems.append(task.where)
    return problems


def task_files(role: Path) -> list[Path]:
    return sorted((role / "tasks").glob("*.yml")) + sorted((role / "tasks").glob("*.yaml"))


ALL_ROLES = sorted(p.name for p in ROLES.iterdir() if (p / "tasks").is_dir())


@pytest.mark.parametrize("role", ALL_ROLES)
def test_no_command_is_silently_skipped_by_check_mode(role: str) -> None:
    problems = [p for f in task_files(ROLES / role) for p in unreported_commands(f)]
    assert problems == [], (
        "command/shell tasks that --check would skip without reporting a change (make each a read-only "
        "probe, self-reporting, or precede it with a 'would ...' debug report; see this module's docstring):\n  "
        + "\n  ".join(problems))


def test_the_audit_sees_every_kind_of_task(tmp_path: Path) -> None:
    """The rules on a made-up file: a probe, a self-reporting script, an announced command and a
    read-back in a block not run under --check pass; an unannounced one, one whose report was used
    by another, one inside a block and a "probe" that runs under --check no safer than any command fail."""
    f = tmp_path / "tasks.yml"
    f.write_text(yaml.safe_dump([
        {"name": "probe", "ansible.builtin.command": "ip -j addr", "changed_when": False, "check_mode": False},
        {"name": "self", "ansible.builtin.shell": "{% if ansible_check_mode %}echo would set{% endif %}",
         "check_mode": False, "changed_when": "r.stdout in ['set', 'would set']"},
        {"name": "report", "ansible.builtin.debug": {"msg": "would run: x"},
         "when": "ansible_check_mode and n > 0", "changed_when": True},
        {"name": "announced", "ansible.builtin.command": "x", "changed_when": True},
        {"name": "second", "ansible.builtin.command": "y", "changed_when": True},
        {"name": "info", "ansible.builtin.debug": {"msg": "would run: z"}, "changed_when": True},
        {"name": "blk", "block": [{"name": "inner", "shell": "z"}]},
        {"name": "not a probe", "ansible.builtin.command": "w", "changed_when": False},
        {"name": "after", "when": "x and not ansible_check_mode",
         "block": [{"name": "read-back", "ansible.builtin.command": "v", "changed_when": False}]},
    ]))
    names = [p.split(": ", 1)[1] for p in unreported_commands(f)]
    assert names == ["'second'", "'inner'", "'not a probe'"]
