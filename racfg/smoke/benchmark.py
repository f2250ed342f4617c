"""The user's own benchmark, on each node-count step, through the launcher the user names.

``ssh``: the command runs on every node of the step at once (over the run's SSH sessions) and
their figures are added. ``torchrun``: it runs on every node with a rendezvous on the first,
and the first node's figure counts. ``mpirun`` / ``horovodrun`` / ``srun``: launched once, on
the first node, which starts the rest. Placeholders: {host} (this node), {hosts} (the step's
nodes, comma separated), {nodes} (their count), {address} (this node's first data address),
{gpus} (GPUs per node: a NODESxGPUS step's, else the node's), {total_gpus}, {storage} (the storage
hosts' data addresses), {duration} (seconds, the run's TCP duration).
"""

from __future__ import annotations

import re
import shlex

from racfg.errors import UsageError
from racfg.inventory.model import UserBenchmark
from racfg.smoke.errors import MeasurementError
from racfg.smoke.measured import BenchmarkStep
from racfg.smoke.plan import SmokePlan
from racfg.smoke.remote import Completed, Fleet
from racfg.smoke.tcp import stop_unfinished

LAUNCHERS = {
    "mpirun": "mpirun -np {nodes} -H {hosts} ",
    "horovodrun": "horovodrun -np {nodes} -H {hosts_slots} ",
    "srun": "srun -N {nodes} ",
    "torchrun": "torchrun --nnodes={nodes} --rdzv_backend=c10d --rdzv_endpoint={first}:29400 ",
}


def _fields(plan: SmokePlan, hosts: list[str], host: str, gpus: int = 0) -> dict[str, str]:
    links = plan.links_of(host)
    return {"host": host, "hosts": ",".join(hosts), "nodes": str(len(hosts)), "gpus": str(gpus),
            "total_gpus": str(gpus * len(hosts)),
            "hosts_slots": ",".join(f"{h}:1" for h in hosts), "first": hosts[0],
            "address": links[0].ip if links else "", "storage": ",".join(s.ip for s in plan.storage),
            "duration": str(plan.duration_s)}


def render(spec: UserBenchmark, fields: dict[str, str]) -> str:
    """The benchmark's shell command: the inventory's command (a command by design, see
    UserBenchmark.command) with each placeholder's value quoted, so a value is one word."""
    quoted = {key: shlex.quote(value) for key, value in fields.items()}
    try:
        command = spec.command.format(**quoted)
        prefix = LAUNCHERS.get(spec.launcher, "").format(**quoted)
    except (KeyError, IndexError, ValueError) as exc:
        raise UsageError(f"acceptance.smoke.benchmark.command: unknown placeholder {exc}",
                         hint="placeholders: " + ", ".join(f"{{{k}}}" for k in sorted(fields))) from None
    return prefix + command


def figure(spec: UserBenchmark, output: str) -> float | None:
    match = re.search(spec.regex, output, re.M)
    if match is None:
        return None
    try:
        return float(match.group(1))
    except ValueError:
        return None


def run_step(fleet: Fleet, plan: SmokePlan, spec: UserBenchmark, hosts: list[str], gpus: int = 0,
             shape: str | None = None) -> BenchmarkStep:
    """One step: launch, collect, cut out the figure(s). Processes end by the step's timeout or the finally.
    ``gpus`` is the step's GPUs per node ({gpus}); ``shape`` names a NODESxGPUS step."""
    runners = hosts if spec.launcher in ("ssh", "torchrun") else hosts[:1]
    procs = []
    try:
        for host in runners:
            command = render(spec, _fields(plan, hosts, host, gpus))
            procs.append((host, fleet[host].start(["sh", "-c", command], spec.timeout_s)))
        for _, proc in procs:
            proc.started()
        outputs: dict[str, Completed] = {host: proc.wait() for host, proc in procs}
    except MeasurementError as exc:
        return BenchmarkStep(len(hosts), hosts, None, {}, exc.message, shape=shape)
    finally:
        stop_unfinished([p for _, p in procs])
    per_node: dict[str, float] = {}
    problems = []
    for host, done in outputs.items():
        value = figure(spec, done.stdout)
        if value is None:
            tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
            problems.append(f"{host}: exit {done.rc}, no match for {spec.regex!r} ({shlex.quote(tail[0])[:160]})")
        else:
            per_node[host] = value
    if problems:
        return BenchmarkStep(len(hosts), hosts, None, per_node, "; ".join(problems), shape=shape)
    value = sum(per_node.values()) if spec.launcher == "ssh" else per_node[hosts[0]]
    return BenchmarkStep(len(hosts), hosts, value, per_node, shape=shape)
