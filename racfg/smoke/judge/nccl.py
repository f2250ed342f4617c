"""NCCL verdicts: a run's bus bandwidth against the mark the declared hardware gives, the GPUs present,
the pairwise isolation of a slow step, and bus bandwidth's scaling over node counts."""

from __future__ import annotations

from racfg.hostfacts.nccl_tests import NcclRun
from racfg.results import Result, Status
from racfg.smoke.metrics import metric
from racfg.smoke.nccl_expect import REFERENCE, Expectation, Isolation

CATEGORY = "nccl"
FIX = "run validate's gpu checks on the hosts named (NVLink, PCIe, Xid), then the data NICs' link checks"


def gpus_result(missing: dict[str, str], required: list[str]) -> Result | None:
    """GPUs missing on some hosts (host -> why): a skip where no host requires them (a provider's site such
    as the lab), a failure where one does; None when every host has its GPUs."""
    if not missing:
        return None
    why = "; ".join(f"{name}: {reason}" for name, reason in missing.items())
    if not set(missing) & set(required):
        return Result("cluster", "nccl/run", CATEGORY, Status.SKIP, f"nccl: no GPU here ({why}); "
                      "this site does not require GPUs (a provider's site such as the lab)")
    return Result("cluster", "nccl/run", CATEGORY, Status.FAIL, f"nccl: GPUs missing ({why})",
                  "GPUs on every GPU server", why, fix="racfg validate --category gpu")


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
