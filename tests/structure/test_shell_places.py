"""Every place a value reaches a shell, found by reading the code, and how each is made safe.

Inventory values are data: where one becomes part of a command line that a shell parses (an SSH
command on a host, a role's ``shell``/``command`` task, a line typed at a switch's CLI), it is quoted
(``shlex.quote``/``shlex.join``, Ansible's ``| quote``), a number, or constrained so it cannot break
the line. These tests find the places themselves, so a new one that is not quoted fails here:

- racfg's Python (``racfg/``, ``validators/``, the roles' modules): no local shell at all (every
  subprocess takes an argv list); every text that reaches a remote shell or a switch CLI is listed in
  ``PLACES`` with the values in it and how each is made safe, and every value formatted into such a
  text is quoted or a number unless ``PLACES`` says why it need not be;
- the validators' ``COMMANDS`` (the probe script every host runs): every value in them is quoted;
- the roles and playbooks: every ``{{ }}`` in a ``command``/``shell``/``raw`` task is ``| quote``d (or
  ``map('quote')``, or ``| int``); ``argv`` forms pass words to the program with no shell; the one
  template that holds a shell line (the CPU governor's boot unit) reads variables the role asserts.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]

# (file, function, the text as written) -> (what reaches the shell there, how it is made safe;
# each value formatted in without quoting, by its expression: why it need not be quoted)
PLACES: dict[tuple[str, str, str], tuple[str, dict[str, str]]] = {
    ("racfg/ssh/host_sessions.py", "HostSession._channel", "command"): (
        "every command run on a host over SSH (what run and start are given, rows below)", {}),
    ("racfg/ssh/channels.py", "_open", "command"): (
        "every command the site lock runs on its lock host (what HostSession.execute and stream are given: the "
        "lock rows below)", {}),
    ("racfg/ssh/host_sessions.py", "HostSession.run", "command"): (
        "the callers' command (smoke's reads below; validate's probe script)", {}),
    ("racfg/ssh/host_sessions.py", "HostSession.start", "command"): (
        "a tool's argv, joined with shlex.join, inside sh -c as one shlex.quote'd word", {}),
    ("racfg/ssh/host_sessions.py", "HostSession.kill", "script"): (
        "the process groups to stop", {"p": "a process group id: an integer read from the remote shell ($$)",
                                        "KILL_GRACE": "a constant number"}),
    ("racfg/slurm/client.py", "controller_slurm", "shlex.join(argv)"): (
        "scontrol's argv on the Slurm controller: node names (inventory host names) and racfg's drain reason "
        "(problem ids and fixes, cut to racfg.scheduler.drain_reason's character set), joined with shlex.join", {}),
    ("racfg/slurm/client.py", "over_ssh", "shlex.join(argv)"): (
        "the same argv, as the nested function that runs it names it", {}),
    ("racfg/slurm/node_step.py", "run_scripts", "DISPATCH"): (
        "a constant command (gzip -dc | sh) srun runs on each node; the script it runs comes on its input: "
        "validate's probe scripts (quoted where they are made, racfg.validate.probe) in a case on the node's "
        "name, each name shlex.quote'd (node_step.dispatcher)", {}),
    ("racfg/slurm/node_step.py", "one", "DISPATCH"): (
        "the same constant, as the nested function that runs it names it", {}),
    ("racfg/smoke/smoke_run.py", "_nic_rates", "f'cat {speed} 2>/dev/null'"): (
        "a data NIC's name (hosts[].nics[].name)", {}),
    ("racfg/smoke/phases/rdma_bandwidth.py", "rdma_device", "f'ls {devices} 2>/dev/null'"): (
        "a data NIC's name (hosts[].nics[].name)", {}),
    ("racfg/smoke/phases/storage_throughput.py", "mounted", "f'mountpoint -q {shlex.quote(mount_point)}'"): (
        "the Weka or array mount point (software.weka.mount_point, array.mount_point)", {}),
    ("racfg/smoke/window.py", "reader_argv", "f'sleep {window.opens:.2f}; {read}; sleep "
                                             "{window.closes - window.opens:.2f}; {read}'"): (
        "each NIC's rx_bytes path (shlex.quote'd), in sh -c", {"i": "an index from enumerate or range: an integer"}),
    ("racfg/smoke/phases/user_benchmark.py", "run_step", "command"): (
        "acceptance.smoke.benchmark.command, a shell command by design (the operator's benchmark, run as "
        "the SSH user on the GPU servers), in sh -c", {}),
    ("racfg/smoke/phases/nccl_allreduce.py", "_run", "command_line(spec, hosts, gpus)"): (
        "acceptance.smoke.nccl command, args and image, the host names, in sh -c", {}),
    ("racfg/smoke/phases/nccl_allreduce.py", "_per_node", "command_line(spec, [h.name], counts[h.name])"): (
        "acceptance.smoke.nccl command, args and image, the host name, in sh -c", {}),
    ("racfg/lock/site_lock.py", "_run", "_command(script, site, *args)"): (
        "the lock directory, the site's name and the lock script's arguments, shlex.join'd after bash -c", {}),
    ("racfg/lock/site_lock.py", "_acquire", "command"): (
        "the site's name and the holder's record, shlex.join'd after bash -c", {}),
    # a nested function: the scan meets it inside its parent as well as on its own
    **{("racfg/playbook/module_processes.py", function, "command"): (
        "racfg's own process search (marked.py, sent whole) and this run's marker, shlex.join'd after python3 -c",
        {}) for function in ("_on_host", "look")},
    ("racfg/validate/probe.py", "run_probe", "script(commands, pings)"): (
        "the probe script: the validators' COMMANDS (their values quoted: test below), section names and ping "
        "arguments shlex.quote'd, ping sizes integers", {}),
    ("racfg/validate/transport.py", "SharedSessionBackend.run", "command"): (
        "testinfra's host.run from the validators: only the probe script (row above)", {}),
    ("racfg/switches/session.py", "SwitchSession.show", "command"): (
        "show commands: the drivers' constants and canonical port names (racfg.switches.ports)", {}),
    ("racfg/switches/session.py", "SwitchSession.send_line", "line"): (
        "config lines typed at the switch CLI: Change lines (built from canonical ports, host:nic descriptions "
        "of constrained names, numbers and addresses; a control character is refused in Change), the drivers' "
        "mode and save commands, the config session's name racfg-PID-TIME", {}),
}

SINKS = {"run", "execute", "stream", "exec_command", "_channel", "send_command", "send_config_set", "write_channel"}
NOT_SHELL_RECEIVERS = {"subprocess", "sh", "asyncio"}  # argv lists (checked below) and coroutines
SAFE_CALLS = {"shlex.quote", "shlex.join", "quote", "int", "len", "str.join"}


def _python_files() -> list[Path]:
    return sorted([*(REPO / "racfg").rglob("*.py"), *(REPO / "validators").glob("*.py"),
                   *(REPO / "roles").glob("*/library/*.py"), *(REPO / "roles").glob("*/module_utils/*.py")])


def _functions(tree: ast.AST) -> list[tuple[str, ast.FunctionDef]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            out += [(f"{node.name}.{f.name}", f) for f in node.body if isinstance(f, ast.FunctionDef)]
    methods = {id(f) for _, f in out}
    out += [(f.name, f) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and id(f) not in methods]
    return out


def _assignments(function: ast.FunctionDef) -> dict[str, ast.expr]:
    return {target.id: node.value for node in ast.walk(function) if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Name)}


def _unquoted(node: ast.expr, assigned: dict[str, ast.expr], seen: frozenset[str] = frozenset()) -> list[str]:
    """The parts of a text expression that are neither constant, quoted nor a number."""
    if isinstance(node, ast.Constant):
        return []
    if isinstance(node, ast.JoinedStr):
        return [part for value in node.values for part in _unquoted(value, assigned, seen)]
    if isinstance(node, ast.FormattedValue):
        spec = ast.unparse(node.format_spec) if node.format_spec else ""
        return [] if re.fullmatch(r"f?['\"][.0-9]*[dfg]['\"]", spec) else _unquoted(node.value, assigned, seen)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _unquoted(node.left, assigned, seen) + _unquoted(node.right, assigned, seen)
    if isinstance(node, ast.IfExp):
        return _unquoted(node.body, assigned, seen) + _unquoted(node.orelse, assigned, seen)
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name in SAFE_CALLS:
            return []
        if isinstance(node.func, ast.Attribute) and node.func.attr == "join" and node.args and isinstance(
                node.args[0], ast.GeneratorExp | ast.ListComp):  # "sep".join(quoted(x) for x in ...)
            return _unquoted(node.args[0].elt, assigned, seen)
    if isinstance(node, ast.Name) and node.id in assigned and node.id not in seen:
        return _unquoted(assigned[node.id], assigned, seen | {node.id})
    return [ast.unparse(node)]


def _shell_texts(path: Path) -> list[tuple[str, str, ast.expr, dict[str, ast.expr]]]:
    """(function, text as written, its expression, the function's assignments) of every text that
    reaches a shell or a switch CLI in ``path``: a sink call's first argument, a ``["sh", "-c", TEXT]``."""
    out = []
    for name, function in _functions(ast.parse(path.read_text())):
        assigned = _assignments(function)
        for node in ast.walk(function):
            text = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SINKS \
                    and node.args and ast.unparse(node.func.value) not in NOT_SHELL_RECEIVERS:
                text = node.args[0]
                if isinstance(text, ast.Name) and text.id == "tracker":  # Playbook.run: ansible-runner, no text
                    continue
            elif isinstance(node, ast.List) and len(node.elts) == 3 and all(
                    isinstance(e, ast.Constant) for e in node.elts[:2]) and node.elts[1].value == "-c":
                text = node.elts[2]
            if text is not None and not isinstance(text, ast.Constant):
                out.append((name, ast.unparse(text), text, assigned))
    return out


def test_racfg_never_asks_a_local_shell():
    """Every local process racfg and the roles' modules start takes an argv list: no shell parses it."""
    found = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = ast.unparse(node.func)
            shell = [k for k in node.keywords if k.arg in ("shell", "use_unsafe_shell")
                     and not (isinstance(k.value, ast.Constant) and k.value.value is False)]
            if shell or name in ("os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput"):
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {name}")
    assert found == []


def test_every_text_that_reaches_a_shell_or_a_switch_cli_is_listed_with_how_it_is_made_safe():
    found: dict[tuple[str, str, str], list[str]] = {}
    for path in _python_files():
        for function, written, text, assigned in _shell_texts(path):
            built = assigned.get(text.id, text) if isinstance(text, ast.Name) else text
            # a text built here is checked value by value; one handed in whole (a parameter, another
            # function's result) is checked where PLACES says it is built
            formatted = isinstance(built, ast.JoinedStr | ast.BinOp | ast.IfExp)
            found[(str(path.relative_to(REPO)), function, written)] = _unquoted(built, assigned) if formatted else []
    assert set(found) - set(PLACES) == set(), "a new place where text reaches a shell: add it to PLACES"
    assert set(PLACES) - set(found) == set(), "a place PLACES lists is gone: remove it"
    for place, unquoted in found.items():
        why = PLACES[place][1]
        # a value formatted in without quoting is a number, a constant, or PLACES says why it is safe
        assert [part for part in unquoted if part not in why] == [], place


def test_the_validators_commands_quote_every_value():
    """The probe script runs every validators module's COMMANDS on each host: NIC names, drive paths
    and sysctl keys in them are quoted."""
    unquoted = {}
    for path in sorted((REPO / "validators").glob("test_*.py")):
        for name, function in _functions(ast.parse(path.read_text())):
            if name != "COMMANDS":
                continue
            assigned = _assignments(function)
            keys = {id(n.slice) for n in ast.walk(function) if isinstance(n, ast.Subscript)}  # section names
            for node in ast.walk(function):
                if isinstance(node, ast.JoinedStr) and id(node) not in keys and (parts := _unquoted(node, assigned)):
                    unquoted[f"{path.name}:{node.lineno}"] = parts
    assert unquoted == {}


# --- the roles ----------------------------------------------------------------------------------

class _AnsibleYaml(yaml.SafeLoader):
    """Ansible's own tags (!unsafe, !vault) read as None: only the tasks' shapes matter here."""


_AnsibleYaml.add_multi_constructor("!", lambda _loader, _suffix, _node: None)

SHELL_MODULES = {"command", "shell", "raw", "script"}
QUOTED = re.compile(r"\|\s*(quote|int)\s*$|map\(\s*'quote'\s*\)\s*\|\s*join\([^)]*\)\s*$")


def _tasks(node: Any) -> list[dict]:
    out = []
    if isinstance(node, list):
        for item in node:
            out += _tasks(item)
    elif isinstance(node, dict):
        for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
            out += _tasks(node.get(key))
        out.append(node)
    return out


def role_shell_texts() -> list[tuple[str, str, str]]:
    """(file, task name, text) of every command, shell, raw and script task of the roles and playbooks
    that a shell or the command module's splitter reads (``argv`` forms are words, never parsed)."""
    out = []
    for path in sorted([*(REPO / "roles").glob("*/tasks/*.yml"), *(REPO / "roles").glob("*/handlers/*.yml"),
                        *(REPO / "playbooks").glob("*.yml")]):
        for task in _tasks(yaml.load(path.read_text(), Loader=_AnsibleYaml)):
            for key, args in task.items():
                if key.removeprefix("ansible.builtin.") not in SHELL_MODULES:
                    continue
                text = args if isinstance(args, str) else (args or {}).get("cmd") if isinstance(args, dict) else None
                if text:
                    out.append((str(path.relative_to(REPO)), str(task.get("name")), text))
    return out


def test_the_roles_quote_every_value_in_a_command_or_shell_task():
    texts = role_shell_texts()
    assert len(texts) > 10  # the scan reads the roles' tasks (not an empty walk that passes anything)
    unquoted = [(file, name, expression.strip()) for file, name, text in texts
                for expression in re.findall(r"\{\{(.*?)\}\}", text, re.S) if not QUOTED.search(expression.strip())]
    assert unquoted == []


def test_the_one_shell_line_in_a_role_template_reads_only_asserted_variables():
    """A systemd unit's ``ExecStart=/bin/sh -c '...'`` cannot quote for systemd and the shell at once:
    the variables in it are checked by an assert of the role before the unit is written."""
    shell_lines = {(str(p.relative_to(REPO)), line.strip()) for p in (REPO / "roles").glob("*/templates/*")
                   for line in p.read_text().splitlines() if re.search(r"\bsh -c\b", line)}
    assert {file for file, _ in shell_lines} == {"roles/common/templates/cpu-governor.service.j2"}
    variables = {v.strip() for _, line in shell_lines for v in re.findall(r"\{\{(.*?)\}\}", line)}
    assert variables == {"common_cpufreq_glob", "common_governor"}
    asserted = yaml.load((REPO / "roles/common/tasks/cpu_governor.yml").read_text(), Loader=_AnsibleYaml)
    checks = [t["ansible.builtin.assert"]["that"] for t in _tasks(asserted) if "ansible.builtin.assert" in t]
    assert any(f"{v} is match(" in c for v in variables for c in checks[0]) and len(checks[0]) == 2
