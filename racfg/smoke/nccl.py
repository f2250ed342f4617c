"""smoke's ``nccl`` phase: NCCL all-reduce bus bandwidth per node, then over 2, 4 ... N nodes.

First every GPU server's GPUs are counted (``nvidia-smi -L``): with none, the phase is skipped with
that reason where the site does not require GPUs (a provider's site such as the lab) and fails where
it does, as validate's GPU checks do. Then each node runs all_reduce_perf over its own GPUs (all at
once: the runs share nothing), and each smoke step runs it over its nodes through the site's
launcher. Every run is judged against the mark derived from the declared hardware
(racfg.smoke.nccl_expect); a multi-node step below its mark is followed by pairwise runs over its
nodes that name the node or path at fault. Scaling: bus bandwidth should stay flat as nodes are
added, so E(N) = busbw(N) / busbw(smallest multi-node step), and the knee is the first step below
the scaling floor.
"""

from __future__ import annotations

import shlex
from typing import Any

from racfg.catalog import host_gpu
from racfg.hostfacts.nccl import NcclRun, parse_output
from racfg.hostfacts.parse_error import ParseError
from racfg.inventory.cluster import ClusterHost
from racfg.inventory.model import NcclTests
from racfg.results import Result, Status
from racfg.smoke.errors import MeasurementError
from racfg.smoke.judge import nccl as verdicts
from racfg.smoke.metrics import reference_bounds
from racfg.smoke.nccl_expect import REFERENCE, Expectation, expected_busbw, isolate
from racfg.smoke.tcp import stop_unfinished


def command_line(spec: NcclTests, hosts: list[str], gpus: int) -> str:
    """The shell command, run on the first host: one process over all GPUs on one node, else one rank
    per GPU through the launcher."""
    # every inventory value quoted: the program's path, its arguments word by word, the image, the hosts
    test = shlex.join([spec.command, *shlex.split(spec.args)])
    image = f"--container-image={shlex.quote(spec.image)} " if spec.image else ""
    if len(hosts) == 1 and not spec.image:
        return f"{test} -g {int(gpus)}"
    if spec.launcher == "srun":
        return (f"srun -N {len(hosts)} -w {shlex.quote(','.join(hosts))} --ntasks-per-node={int(gpus)} "
                f"--gpus-per-node={int(gpus)} --mpi=pmix {image}{test} -g 1")
    slots = ",".join(f"{h}:{gpus}" for h in hosts)
    return (f"mpirun -np {len(hosts) * gpus} -H {shlex.quote(slots)} --bind-to none -x NCCL_DEBUG=WARN -x PATH "
            f"-x LD_LIBRARY_PATH {test} -g 1")


def _run(run: Any, spec: NcclTests, hosts: list[str], gpus: int) -> NcclRun | str:
    """One all_reduce_perf run; its parsed output, or why there is none."""
    proc = None
    try:
        proc = run.fleet[hosts[0]].start(["sh", "-c", command_line(spec, hosts, gpus)], spec.timeout_s)
        proc.started()
        done = proc.wait()
    except MeasurementError as exc:
        return exc.message
    finally:
        stop_unfinished([proc] if proc is not None else [])
    try:
        return parse_output(done.stdout)
    except ParseError as exc:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        return f"exit {done.rc}: {exc.reason} ({tail[0][:160]})"


def _gpu_counts(run: Any, hosts: list[ClusterHost]) -> dict[str, int | str]:
    """GPUs each host's driver lists, or why it lists none."""
    counts: dict[str, int | str] = {}
    for host in hosts:
        try:
            done = run.fleet[host.name].run("nvidia-smi -L", timeout=30)
        except MeasurementError as exc:
            counts[host.name] = exc.message
            continue
        listed = sum(1 for line in done.stdout.splitlines() if line.startswith("GPU "))
        counts[host.name] = listed if done.rc == 0 and listed else (
            "nvidia-smi not found" if done.rc == 127 else f"nvidia-smi -L: exit {done.rc}, no GPU listed")
    return counts


def _mark(run: Any, hosts: list[ClusterHost], nodes: int) -> Expectation | None:
    ref = run.plan.references.get(REFERENCE, {}).get(nodes)
    reference = (reference_bounds(ref)[0] or ref.value) if ref is not None else None
    first = hosts[0]
    nics = min(([nic.speed_gbps for nic in h.nics] for h in hosts), key=sum)  # the slowest node bounds a ring
    return expected_busbw(nodes, host_gpu(first.model, first.gpu_model), first.gpus, nics, reference)


def measure(run: Any) -> None:
    """The phase: GPUs present, each node alone, each step, isolation of the first slow step, scaling."""
    cluster, plan = run.cluster, run.plan
    hosts = [h for h in cluster.hosts if h.name in plan.client_hosts]
    counts = _gpu_counts(run, hosts)
    missing = {name: why for name, why in counts.items() if isinstance(why, str)}
    gpus = verdicts.gpus_result(missing, [h.name for h in hosts if h.gpus > 0 and not plan.lab])
    if gpus is not None:
        run.results.append(gpus)
        return
    spec: NcclTests | None = cluster.inventory.acceptance.smoke.nccl
    if spec is None:
        run.results.append(verdicts.unconfigured())
        return
    _per_node(run, spec, hosts, counts)
    _steps(run, spec, hosts, counts)


def _per_node(run: Any, spec: NcclTests, hosts: list[ClusterHost], counts: dict[str, Any]) -> None:
    procs = []
    try:
        for h in hosts:
            procs.append((h, run.fleet[h.name].start(["sh", "-c", command_line(spec, [h.name], counts[h.name])],
                                                      spec.timeout_s)))
        for _, proc in procs:
            proc.started()
        outputs = {h.name: proc.wait() for h, proc in procs}
    finally:
        stop_unfinished([p for _, p in procs])
    for h in hosts:
        done = outputs[h.name]
        try:
            outcome: NcclRun | str = parse_output(done.stdout)
        except ParseError as exc:
            outcome = f"exit {done.rc}: {exc.reason}"
        run.results.append(verdicts.run_result(h.name, f"nccl/node/{h.name}", f"{h.name}'s {counts[h.name]} GPUs",
                                               outcome, _mark(run, [h], 1)))


def _steps(run: Any, spec: NcclTests, hosts: list[ClusterHost], counts: dict[str, Any]) -> None:
    by_name = {h.name: h for h in hosts}
    gpus = min(counts.values())
    values: dict[int, float] = {}
    isolated = False
    for n in [s for s in run.plan.steps if 2 <= s <= len(hosts)]:
        step = hosts[:n]
        mark = _mark(run, step, n)
        result = verdicts.run_result("cluster", f"nccl/n{n}", f"{n} nodes x {gpus} GPUs via {spec.launcher}",
                        _run(run, spec, [h.name for h in step], gpus), mark)
        run.results.append(result)
        if "busbw_gbytes_per_s" in result.data:
            values[n] = result.data["busbw_gbytes_per_s"]
        if result.status is Status.FAIL and mark is not None and not isolated:
            isolated = True
            pair_mark = _mark(run, [by_name[h.name] for h in step[:2]], 2)
            run.results += _isolate(run, spec, [h.name for h in step], gpus, pair_mark)
    if len(values) > 1:
        run.results.append(verdicts.scaling_result(values, run.plan.scaling_floor))


def _isolate(run: Any, spec: NcclTests, nodes: list[str], gpus: int, mark: Expectation | None) -> list[Result]:
    if mark is None:
        return []
    found = isolate(nodes, lambda pair: _busbw(_run(run, spec, list(pair), gpus)), mark.gbytes_per_s)
    return verdicts.isolation_results(found, mark)


def _busbw(outcome: NcclRun | str) -> float | None:
    return None if isinstance(outcome, str) else outcome.largest.busbw
