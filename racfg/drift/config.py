"""drift's config layer: what a deploy would change now, per host and switch.

By default it asks the roles' own reads (playbooks/read.yml, as a deploy's read pass: the common
role's probe, which reads for every role, then the host's verdict that says per role what it found
different), which is what a deploy decides on: a host the reads find converged is one a deploy
leaves alone. That costs one module run per host, where a check-mode run of every role cost a
task round trip per task (issue 40: a converged site's re-check within 2x of validate). Each
difference is one result, with the rendered file beside the host's as its diff. The switches are
planned here from the run's one read of them.

What the reads do not compare (``NOT_READ``) is reported as skipped with its reason, and
``--full-check`` runs the check-mode deploy of every role instead: the tasks that would change
and their diffs, as ``racfg deploy --check --diff`` shows them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from racfg.connection import ConnectionOverrides
from racfg.deploy.passes import READ_PLAYBOOK, plan_switches
from racfg.deploy.switch_read import SwitchesRead
from racfg.inventory import Cluster
from racfg.results import Result, Status

# The config layer's result when Ansible stopped before running the play: the drift report is
# that error alone (exit 3, could not run); the other layers' findings would pass for drift.
ANSIBLE_STOPPED = "cluster/config/ansible"


@dataclass
class FactsRead:
    """The facts the config layer's run read on its way (the environment layer's "now")."""

    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)
    switches: dict[str, dict[str, Any]] = field(default_factory=dict)


# What each role manages that its read does not compare: the read says on which hosts that work is
# left to a run of the role (the host's verdict says not_read), drift skips it there with this.
NOT_READ: dict[str, str] = {
    "gpu": "the NVIDIA driver, nvidia-persistenced and nvidia-peermem",
    "nfs_client": "the array's client packages and mount",
    "weka": "the Weka installation, containers and cluster membership",
    "ofed": "the MLNX_OFED installation",
    "fabric": "the IPoIB mode",
}


def deploy_fix(cluster: Cluster, target: str, tags: str | None = None) -> str:
    return f"racfg deploy {cluster.display} --limit {target}" + (f" --tags {tags}" if tags else "")


def owning_role(task: str) -> str | None:
    """The role whose tag repairs ``task`` (``role : name``): the role a shared task ran for when its name
    says so (common's package tasks end ``(role ofed)`` when ofed included them), else its own role."""
    found = _FOR_ROLE.search(task)
    if found:
        return found.group(1)
    return task.split(" : ", 1)[0] if " : " in task else None


_FOR_ROLE = re.compile(r"\(role ([a-z_]+)\)$")


def config_layer(cluster: Cluster, limit: str | None, forks: int, overrides: ConnectionOverrides,
                 read_switches: Callable[[], SwitchesRead], rendered: Any, *, full_check: bool = False,
                 ) -> tuple[list[Result], FactsRead]:
    """What a deploy would change now (see the module's docstring) and the facts read on the way.
    ``read_switches``: the run's one read of them (waited for only when needed: the hosts' reads
    run beside it); ``rendered``: its one render of the inventory."""
    from racfg.deploy.deploy_run import DeployOptions, run_deploy, switches_in_scope

    deploy = DeployOptions(limit=limit, check=True, diff=True, forks=forks, baseline=False, quiet=True,
                           lock_holder="drift", read_facts=True, rendered=rendered,
                           switch_facts=read_switches().as_dicts() if full_check else None,
                           playbook="site.yml" if full_check else READ_PLAYBOOK, config_read=not full_check)
    title = "drift: check-mode deploy" if full_check else "drift: the roles' reads"
    outcome = run_deploy(cluster, deploy, title=title, overrides=overrides)
    if outcome.could_not_run:
        return [Result("cluster", ANSIBLE_STOPPED, "config", Status.ERROR, f"could not run: {outcome.could_not_run}",
                       fix="correct the file at the line Ansible names",
                       data={"ansible_errors": [e.as_dict() for e in outcome.ansible_errors],
                             "run": str(outcome.record.path)})], FactsRead()
    run = str(outcome.record.path)
    diffs: dict[str, list[tuple[str, str]]] = {}
    for d in outcome.diffs:
        diffs.setdefault(d["host"], []).append((d["task"], d["diff"]))
    results: list[Result] = []
    for host in outcome.hosts:
        name = host["host"]
        results += [Result(name, f"{name}/config/plan", "config", Status.ERROR, f"could not plan this host: {problem}")
                    for problem in host.get("problems", [])]
        if full_check:
            results += _task_results(cluster, name, host.get("changes", []), diffs.get(name, []), run)
        else:
            results += _read_results(cluster, name, outcome.would_change.get(name, {}), diffs.get(name, []), run)
    planned: set[str] = set()
    if not full_check:  # the switches in the deploy's scope, planned from the one read
        switches, in_scope = read_switches(), switches_in_scope(cluster, DeployOptions(limit=limit))
        results += switch_plans(cluster, switches, in_scope) + not_read(cluster, outcome.not_read)
        planned = set(switches.facts) & set(in_scope)
    for name in sorted({h["host"] for h in outcome.hosts} | planned):
        if not any(r.target == name and r.status in (Status.FAIL, Status.ERROR) for r in results):
            results.append(Result(name, f"{name}/config/plan", "config", Status.PASS, "nothing would change"))
    return results, FactsRead(outcome.host_facts, outcome.switch_facts)


def _task_results(cluster: Cluster, host: str, tasks: list[str], diffs: list[tuple[str, str]], run: str,
                  ) -> list[Result]:
    """--full-check: each task the check-mode run would change, with its diffs."""
    return [Result(host, f"{host}/config/{task}", "config", Status.FAIL, f"would change: {task}",
                   expected="as deployed", actual="would change", fix=deploy_fix(cluster, host, owning_role(task)),
                   data={"sign": "~", "diff": "\n".join(text for t, text in diffs if t == task), "run": run})
            for task in tasks]


def _read_results(cluster: Cluster, host: str, found: dict[str, list[str]], diffs: list[tuple[str, str]],
                  run: str) -> list[Result]:
    """Each difference a role's read found, with the rendered file beside the host's where it is a file."""
    out = []
    for role, items in found.items():
        for item in items:
            path = _file_of(item)
            diff = "\n".join(text for _, text in diffs if path and f"--- {path} (on the host)" in text)
            out.append(Result(host, f"{host}/config/{role}/{item}", "config", Status.FAIL,
                              f"would change: {role}: {item}", expected="as deployed", actual="would change",
                              fix=deploy_fix(cluster, host, role), data={"sign": "~", "diff": diff, "run": run}))
    return out


def _file_of(item: str) -> str | None:
    """The path a read's line names when it is about a file's content ("file /etc/x content")."""
    found = re.match(r"file (\S+) (content|missing)$", item)
    return found.group(1) if found else None


def switch_plans(cluster: Cluster, switches: SwitchesRead, names: list[str]) -> list[Result]:
    """Each switch's plan from the facts read once in this run (no login, as a deploy's read pass
    plans them): the changes the switch play would make, with the managed config as read beside
    the intended one."""
    from racfg.playbook.events import unified_diff

    out = [Result(name, f"{name}/config/plan", "config", Status.ERROR, f"could not read this switch: {error}")
           for name, error in switches.errors.items() if name in names]
    read = SwitchesRead({name: facts for name, facts in switches.facts.items() if name in names})
    for name, plan in plan_switches(cluster, read).items():
        diff = unified_diff({"before": plan.before, "after": plan.after, "before_header": f"{name} running",
                             "after_header": f"{name} intended"})
        out += [Result(name, f"{name}/config/switch/{change}", "config", Status.FAIL, f"would change: switch: {change}",
                       expected="as deployed", actual="would change", fix=deploy_fix(cluster, name, "switch"),
                       data={"sign": "~", "diff": diff}) for change in plan.changes]
    return out


def not_read(cluster: Cluster, left: dict[str, list[str]]) -> list[Result]:
    """What the reads left to a run of the role on each host (``left``: host -> roles), as skipped
    with the reason: --full-check plans it."""
    return [Result(host, f"{host}/config/{role}/not_read", "config", Status.SKIP,
                   f"{role}: {NOT_READ.get(role, 'its work here')} not compared by the roles' reads: "
                   f"racfg drift {cluster.display} --full-check plans them")
            for host, roles in sorted(left.items()) for role in roles]
