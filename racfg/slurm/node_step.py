"""One script per node, run on every node at once as one Slurm job step per partition, its output
handed back per node: how validate reads a site of hundreds or thousands of nodes without one SSH
session per host (issue 55).

Why a job step: past one controller, Slurm is the engine a large site already has for starting a
command on every node at once (slurmd on each node, a tree of forwarding daemons), where racfg's
SSH would pay a key exchange and a session per host. Each node's script is different (its NICs, its
drives, its pings), but a job step runs one command everywhere; so the command is a dispatcher that
every node receives on its input (``srun --input=all``), compressed, and that runs the arm of its own
node name (``SLURMD_NODENAME``). Each node prints a begin marker, its script's output gzip'd in
short base64 lines, and an end marker, so the output (lines prefixed by task number, ``srun
--label``) is split per node and a node whose output stopped short is told from one that said
everything.

A node Slurm cannot run a job on now (racfg.slurm.placement), a partition whose step Slurm refused,
and a node whose output did not come back whole are all left to the caller with the reason, to be
read over SSH: a read at scale never loses a node.
"""

from __future__ import annotations

import base64
import gzip
import re
import shlex
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.hostfacts.scontrol import SlurmNode
from racfg.inventory import Cluster
from racfg.slurm.client import Slurm, controller_slurm
from racfg.slurm.placement import allocations, hosts_by

NODE_MARK = "@@racfg-node@@"
DISPATCH = "gzip -dc | sh"  # what every node runs: the dispatcher from its input
WIDTH = 1000  # base64 characters a line: under srun --label's 1,024
_LABELLED = re.compile(r"^\s*(\d+): ?(.*)$")


@dataclass
class NodeOutputs:
    """What one read through Slurm gave: each node's output, and why any node is left to SSH."""

    outputs: dict[str, str] = field(default_factory=dict)  # node -> its script's output, whole
    ssh: dict[str, str] = field(default_factory=dict)  # node -> why it is not read through Slurm
    steps: dict[str, list[str]] = field(default_factory=dict)  # partition -> the nodes of its job step
    seconds: dict[str, float] = field(default_factory=dict)  # partition -> its job step's wall time

    def describe(self) -> str:
        """One line for the report: which nodes were read in which job step, and why any over SSH."""
        parts = [f"partition {p} ({len(n)} node{'s' if len(n) != 1 else ''}, {self.seconds.get(p, 0.0):.1f} s)"
                 for p, n in self.steps.items() if any(node in self.outputs for node in n)]
        said = ["Slurm job steps (srun), one per partition: " + ", ".join(parts)] if parts else []
        said += [f"SSH on {', '.join(hosts)}: {why}" for why, hosts in hosts_by(self.ssh).items()]
        return "host reads: " + ("; ".join(said) or "none")

    def as_dict(self) -> dict:
        return {"via": "slurm", "steps": {p: list(n) for p, n in self.steps.items()}, "seconds": dict(self.seconds),
                "ssh": dict(self.ssh)}


def dispatcher(scripts: Mapping[str, str]) -> str:
    """One POSIX shell script that runs, on each node, the arm of its own Slurm node name, between the
    begin and end markers (the end marker only after the node's script returned). What the script
    prints comes back gzip'd and in base64 lines of ``WIDTH`` characters: ``srun --label`` cuts a
    line longer than 1,024 characters into several, labelled each (``ip -j`` prints one long line),
    and a cut cannot be told from a line break afterwards."""
    lines = ['racfg_node="${SLURMD_NODENAME:-$(hostname -s)}"', f'echo "{NODE_MARK} begin $racfg_node"',
             'case "$racfg_node" in']
    for node, script in scripts.items():
        lines += [f"{shlex.quote(node)})", "{", script.rstrip("\n"), f"}} 2>&1 | gzip -c | base64 -w {WIDTH}", ";;"]
    lines += [f'*) echo "{NODE_MARK} unknown" ;;', "esac", f'echo "{NODE_MARK} end"']
    return "\n".join(lines) + "\n"


def decoded(payload: list[str]) -> str | None:
    """A node's output from its base64 lines (``dispatcher``); None when they do not decode whole."""
    try:
        return gzip.decompress(base64.b64decode("".join(payload), validate=True)).decode(errors="replace")
    except (ValueError, EOFError, OSError):  # binascii.Error is a ValueError; a cut gzip stream EOFError
        return None


def split_labelled(text: str) -> dict[str, str]:
    """``srun --label`` output -> node -> its script's output, for nodes whose end marker came and
    whose output decodes whole (the task number is mapped to its node by the node's begin line)."""
    by_task: dict[str, list[str]] = {}
    for line in text.splitlines():
        labelled = _LABELLED.match(line)
        if labelled:
            by_task.setdefault(labelled.group(1), []).append(labelled.group(2))
    out: dict[str, str] = {}
    for lines in by_task.values():
        begin = lines[0] if lines else ""
        if not begin.startswith(f"{NODE_MARK} begin ") or lines[-1] != f"{NODE_MARK} end":
            continue
        output = decoded(lines[1:-1])
        if output is not None:
            out[begin[len(NODE_MARK) + 7:].strip()] = output
    return out


def run_scripts(slurm: Slurm, nodes: Mapping[str, SlurmNode], scripts: Mapping[str, str],
                timeout: float) -> NodeOutputs:
    """``scripts`` (node -> script) run as one job step per partition, all partitions at once."""
    groups, ssh = allocations(list(scripts), nodes)
    result = NodeOutputs(ssh=ssh, steps=groups)

    def one(partition: str) -> tuple[str, dict[str, str], str, float]:
        members = groups[partition]
        data = gzip.compress(dispatcher({n: scripts[n] for n in members}).encode(), compresslevel=6)
        start = time.monotonic()
        try:
            done = slurm.step(members, partition, ["sh", "-c", DISPATCH], data, timeout)
        except CannotRunError as exc:
            return partition, {}, f"its job step in partition {partition} did not run ({exc.message})", 0.0
        said = [line for line in done.stderr.splitlines() if line.strip()]
        why = f"its output from the job step in partition {partition} did not come back whole" + (
            f" (srun exit {done.rc}: {said[-1] if said else 'nothing on stderr'})" if done.rc else "")
        return partition, split_labelled(done.stdout), why, time.monotonic() - start

    with ThreadPoolExecutor(max_workers=max(1, len(groups))) as pool:
        for partition, outputs, why, seconds in pool.map(one, list(groups)):
            result.seconds[partition] = round(seconds, 3)
            for node in groups[partition]:
                if node in outputs:
                    result.outputs[node] = outputs[node]
                else:
                    result.ssh[node] = why
    return result


def read_nodes(cluster: Cluster, overrides: ConnectionOverrides, scripts: Mapping[str, str],
               timeout: float) -> NodeOutputs:
    """``run_scripts`` on the site's Slurm (racfg.slurm.client: the controller over SSH, or where racfg
    runs); a site without a scheduler, or a Slurm that cannot be reached or read, leaves every node
    to SSH with the reason."""
    if cluster.inventory.scheduler is None:
        return NodeOutputs(ssh=dict.fromkeys(scripts, "the site declares no scheduler"))
    try:
        with controller_slurm(cluster, overrides) as slurm:
            return run_scripts(slurm, slurm.nodes(), scripts, timeout)
    except CannotRunError as exc:
        return NodeOutputs(ssh=dict.fromkeys(scripts, f"Slurm not reached ({exc.message})"))
