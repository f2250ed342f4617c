"""smoke's ``nccl`` phase: NCCL all-reduce bus bandwidth per node, then over 2, 4 ... N nodes.

First every GPU server's GPUs are counted (``nvidia-smi -L``): with none, the phase is skipped with
that reason where the site does not require GPUs (a provider's site such as the lab) and fails where
it does, as validate's GPU checks do. Then each node runs all_reduce_perf over its own GPUs (all at
once: the runs share nothing), and each smoke step runs it over its nodes through the site's
launcher. Every run is judged against the mark derived from the declared hardware
(racfg.smoke.nccl_marks); a multi-node step below its mark is followed by pairwise runs over its
nodes that name the node or path at fault. Scaling: bus bandwidth should stay flat as nodes are
added, so E(N) = busbw(N) / busbw(smallest multi-node step), and the knee is the first step below
the scaling floor.

Verdicts (``VERDICTS``, pure): a run's bus bandwidth against the mark the declared hardware gives
(parsed by racfg.hostfacts.nccl_tests), the GPUs present, the pairwise isolation of a slow step, and
bus bandwidth's scaling over node counts.
"""

from __future__ import annotations

import shlex
from typing import Any

from racfg.catalog import host_gpu
from racfg.hostfacts.nccl_tests import NcclRun, parse_output
from racfg.hostfacts.parse_error import ParseError
from racfg.inventory.cluster import ClusterHost
from racfg.inventory.model import NcclTests
from racfg.results import Result, Status
from racfg.smoke.gpu_presence import gpus_missing, gpus_of
from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.metrics import metric, reference_bounds
from racfg.smoke.nccl_marks import REFERENCE, Expectation, Isolation, expected_busbw, isolate
from racfg.smoke.run_state import SmokeRun
from racfg.smoke.smoke_plan import SmokePlan
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


def _run(run: SmokeRun, spec: NcclTests, hosts: list[str], gpus: int) -> NcclRun | str:
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


def _mark(run: SmokeRun, hosts: list[ClusterHost], nodes: int) -> Expectation | None:
    ref = run.plan.references.get(REFERENCE, {}).get(nodes)
    reference = (reference_bounds(ref)[0] or ref.value) if ref is not None else None
    first = hosts[0]
    nics = min(([nic.speed_gbps for nic in h.nics] for h in hosts), key=sum)  # the slowest node bounds a ring
    return expected_busbw(nodes, host_gpu(first.model, first.gpu_model), first.gpus, nics, reference)


def steps(plan: SmokePlan) -> int:
    """The progress steps the phase counts for ``plan``: none (it counted none before the move either)."""
    return 0


def measure(run: SmokeRun) -> None:
    """The phase: GPUs present, each node alone, each step, isolation of the first slow step, scaling."""
    cluster, plan = run.cluster, run.plan
    hosts = [h for h in cluster.hosts if h.name in plan.client_hosts]
    counts, missing, required = gpus_of(run, hosts)
    gpus = gpus_result(missing, required)
    if gpus is not None:
        run.results.append(gpus)
        return
    spec: NcclTests | None = cluster.inventory.acceptance.smoke.nccl
    if spec is None:
        run.results.append(unconfigured())
        return
    _per_node(run, spec, hosts, counts)
    _steps(run, spec, hosts, counts)


def _per_node(run: SmokeRun, spec: NcclTests, hosts: list[ClusterHost], counts: dict[str, Any]) -> None:
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
        run.results.append(run_result(h.name, f"nccl/node/{h.name}", f"{h.name}'s {counts[h.name]} GPUs",
                                               outcome, _mark(run, [h], 1)))


def _steps(run: SmokeRun, spec: NcclTests, hosts: list[ClusterHost], counts: dict[str, Any]) -> None:
    by_name = {h.name: h for h in hosts}
    gpus = min(counts.values())
    values: dict[int, float] = {}
    isolated = False
    for n in [s for s in run.plan.steps if 2 <= s <= len(hosts)]:
        step = hosts[:n]
        mark = _mark(run, step, n)
        result = run_result("cluster", f"nccl/n{n}", f"{n} nodes x {gpus} GPUs via {spec.launcher}",
                        _run(run, spec, [h.name for h in step], gpus), mark)
        run.results.append(result)
        if "busbw_gbytes_per_s" in result.data:
            values[n] = result.data["busbw_gbytes_per_s"]
        if result.status is Status.FAIL and mark is not None and not isolated:
            isolated = True
            pair_mark = _mark(run, [by_name[h.name] for h in step[:2]], 2)
            run.results += _isolate(run, spec, [h.name for h in step], gpus, pair_mark)
    if len(values) > 1:
        run.results.append(scaling_result(values, run.plan.scaling_floor))


def _isolate(run: SmokeRun, spec: NcclTests, nodes: list[str], gpus: int, mark: Expectation | None) -> list[Result]:
    if mark is None:
        return []
    found = isolate(nodes, lambda pair: _busbw(_run(run, spec, list(pair), gpus)), mark.gbytes_per_s)
    return isolation_results(found, mark)


def _busbw(outcome: NcclRun | str) -> float | None:
    return None if isinstance(outcome, str) else outcome.largest.busbw


CATEGORY = "nccl"
FIX = "run validate's gpu checks on the hosts named (NVLink, PCIe, Xid), then the data NICs' link checks"


def gpus_result(missing: dict[str, str], required: list[str]) -> Result | None:
    """GPUs missing on some hosts (host -> why): racfg.smoke.gpu_presence's verdict, as ``nccl/run``."""
    return gpus_missing(missing, required, "nccl/run", CATEGORY, "nccl")


def unconfigured() -> Result:
    return Result("cluster", "nccl/run", CATEGORY, Status.SKIP, "nccl: no acceptance.smoke.nccl in the inventory: "
                  "racfg runs the site's nccl-tests, it does not build them")


# nccl-tests' busbw is algbw x 2(n-1)/n: 0 for n = 1 (tests/recordings/h100-device, one H100).
ONE_RANK = "one rank ran: all-reduce moves nothing between GPUs, so its bus bandwidth is 0 by definition"


def _why_no_mark(outcome: NcclRun) -> str:
    """Why a run has no mark: a lone rank has no bus to measure (the catalog is not at fault), else the
    GPU model is unknown. The rank count is read from the run's own ``# Rank`` lines."""
    if len(outcome.ranks) == 1:
        return ONE_RANK
    return f"the GPU model is not in racfg's catalog; give acceptance.references.{REFERENCE}"


def run_result(target: str, check: str, what: str, outcome: NcclRun | str, mark: Expectation | None) -> Result:
    """One all_reduce_perf run (its parsed output, or why there is none) against its mark. A single
    rank's bus bandwidth of 0 is never a pass: a skip with that reason without a mark, a failure that
    says one rank ran against a mark (the mark counts the GPUs the inventory declares)."""
    if isinstance(outcome, str):
        return Result(target, check, CATEGORY, Status.ERROR, f"all_reduce_perf on {what}: {outcome}")
    row = outcome.largest
    data = {"busbw_gbytes_per_s": row.busbw, "busbw_out": row.busbw_out, "busbw_in": row.busbw_in,
            "size_bytes": row.size, "avg_busbw": outcome.avg_busbw, "hosts": outcome.hosts,
            "metrics": [metric(f"nccl.{check.split('/', 1)[1]}", row.busbw, "GB/s")]}
    message = (f"all_reduce_perf on {what}: bus bandwidth {row.busbw:.3g} GB/s at {row.size:,} B "
               f"(out-of-place {row.busbw_out:g}, in-place {row.busbw_in:g}; avg over sizes {outcome.avg_busbw})")
    if mark is None:
        return Result(target, check, CATEGORY, Status.SKIP,
                      f"{message}; nothing to judge it by: {_why_no_mark(outcome)}", data=data)
    if len(outcome.ranks) == 1:
        message += f"; {ONE_RANK}"
    ok = row.busbw >= mark.gbytes_per_s
    return Result(target, check, CATEGORY, Status.PASS if ok else Status.FAIL, message,
                  f">= {mark.gbytes_per_s:.3g} GB/s ({mark.basis})", f"{row.busbw:.3g} GB/s",
                  fix=None if ok else FIX, data={**data, "mark": mark.gbytes_per_s, "basis": mark.basis})


def isolation_results(found: Isolation, mark: Expectation) -> list[Result]:
    """What the pairwise runs of a slow step found: the nodes at fault, else the pairs or a shared fault."""
    data = {"runs": [{"pair": list(r.pair), "busbw": r.busbw, "round": r.round} for r in found.runs],
            "mark": mark.gbytes_per_s}
    summary = found.summary(mark.gbytes_per_s)
    if found.bad_nodes:
        return [Result(node, f"nccl/isolate/{node}", CATEGORY, Status.FAIL, f"pairwise all-reduce: {summary}",
                       f">= {mark.gbytes_per_s:.3g} GB/s with any partner", "below with every partner",
                       fix=f"racfg validate --limit {node} (GPU, NVLink, NIC checks); reseat or replace what fails",
                       data=data) for node in found.bad_nodes]
    status = Status.FAIL if found.bad_pairs or found.shared or found.undecided else Status.PASS
    return [Result("cluster", "nccl/isolate", CATEGORY, status, f"pairwise all-reduce: {summary}",
                   fix=None if status is Status.PASS else "racfg validate (switch ports, cabling, fabric settings)",
                   data=data)]


def scaling_result(values: dict[int, float], floor: float) -> Result:
    """Bus bandwidth should stay flat as nodes are added: E(N) = busbw(N) / busbw(smallest step)."""
    base_n = min(values)
    eff = {n: v / values[base_n] for n, v in sorted(values.items())}
    knee = next((n for n, e in eff.items() if e < floor), None)
    text = ", ".join(f"E({n}) = {e:.3f}" for n, e in eff.items())
    return Result("cluster", "nccl/scaling", CATEGORY, Status.PASS if knee is None else Status.FAIL,
                  f"bus bandwidth against {base_n} nodes: {text}" + (f"; knee at {knee} nodes" if knee else ""),
                  f"E(N) >= {floor:g}", text, fix=None if knee is None else FIX,
                  data={"efficiency": eff, "knee": knee})


# The phase's pure verdicts: plain data in (racfg.smoke.measured, the plan), results out.
VERDICTS = (gpus_result, unconfigured, run_result, isolation_results, scaling_result)
