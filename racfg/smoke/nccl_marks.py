"""What NCCL's all-reduce should reach on the declared hardware, and which node to blame when it does not.

Pure functions, so the marks and the isolation are tested on tables (tests/smoke/test_nccl.py).

Bus bandwidth (nccl-tests' ``busbw``) is algorithm bandwidth x 2(n-1)/n for all-reduce: the rate at
which the slowest link of the ring carries data, comparable to that link's hardware rate whatever
the rank count (nccl-tests doc/PERFORMANCE.md). So:

- **inside one node** the bound is one GPU's NVLink bandwidth in one direction (links x per-link
  rate from racfg.catalog), or its PCIe link for a card without NVLink;
- **across nodes** the bound is the node's share of the network: the data NICs' line rates added
  (one NCCL ring per NIC), in bytes.

The mark is that bound times a factor for what a healthy system reaches of it:

- ``NET_FACTOR`` 0.9: all-reduce over InfiniBand or RoCE reaches about 0.90-0.96 of a node's
  line rate (the transport's headers and NCCL's protocol framing take the rest); the low end of
  that range is the mark so a healthy fabric passes. Source: GPU acceptance issue 39's figure,
  and nccl-tests PERFORMANCE.md for why busbw is judged against line rate.
- ``GPU_LINK_FACTOR`` 0.75: of the NVLink (or PCIe) bandwidth; the recorded healthy runs reach
  0.78 (8x A100-SXM4: 235 of 300 GB/s at 8 GiB) and 0.86 (DGX-1 8x V100-SXM2: 129 of 150 GB/s at
  128 MiB), tests/hostfacts/fixtures/all_reduce_perf_*.

Either is overridden per node count by ``acceptance.references.nccl_busbw``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from racfg.catalog import GpuModel

NET_FACTOR = 0.9
GPU_LINK_FACTOR = 0.75
# PCIe payload rate per lane and direction (GB/s): Gen3 8 GT/s, Gen4 16, Gen5 32, 128b/130b encoding.
PCIE_LANE_GBYTES = {3: 0.985, 4: 1.969, 5: 3.938}
REFERENCE = "nccl_busbw"


@dataclass(frozen=True)
class Expectation:
    """A mark in GB/s of bus bandwidth and where it comes from (printed with the verdict)."""

    gbytes_per_s: float
    basis: str


def intra_node(gpu: GpuModel | None, gpus: int) -> Expectation | None:
    """The mark inside one node; None when nothing can be derived (unknown GPU, a single GPU)."""
    if gpu is None or gpus < 2:
        return None
    if gpu.nvlink_links:
        raw = gpu.nvlink_total_gbytes_per_s
        what = f"NVLink {gpu.nvlink_gen}: {gpu.nvlink_links} links x {gpu.nvlink_gbytes_per_s:g} GB/s"
    else:
        raw = PCIE_LANE_GBYTES.get(gpu.pcie_gen, 0.0) * gpu.pcie_width
        what = f"PCIe Gen{gpu.pcie_gen} x{gpu.pcie_width} = {raw:.3g} GB/s"
    return Expectation(raw * GPU_LINK_FACTOR, f"{what} x {GPU_LINK_FACTOR:g} ({gpu.name})")


def inter_node(nic_gbps: Sequence[float]) -> Expectation | None:
    """The mark across nodes from one node's data NICs (Gb/s each)."""
    if not nic_gbps:
        return None
    total = sum(nic_gbps) / 8
    speeds = sorted(set(nic_gbps))
    nics = f"{len(nic_gbps)} x {'/'.join(f'{s:g}G' for s in speeds)} data NIC(s) = {total:g} GB/s"
    return Expectation(total * NET_FACTOR, f"{nics} x {NET_FACTOR:g}")


def expected_busbw(nodes: int, gpu: GpuModel | None, gpus: int, nic_gbps: Sequence[float],
                   reference: float | None = None) -> Expectation | None:
    """The mark of an ``nodes``-node step: the reference where the inventory gives one, else the
    tighter of the NVLink and network bounds (a single node: NVLink only)."""
    if reference is not None:
        return Expectation(reference, f"acceptance.references.{REFERENCE}[{nodes}]")
    inside = intra_node(gpu, gpus)
    if nodes == 1:
        return inside
    across = inter_node(nic_gbps)
    bounds = [b for b in (inside, across) if b is not None]
    return min(bounds, key=lambda b: b.gbytes_per_s) if bounds else None


@dataclass(frozen=True)
class PairRun:
    pair: tuple[str, str]
    busbw: float | None  # None: the run failed
    round: int


@dataclass
class Isolation:
    """What pairwise runs found: the nodes at fault, pairs slow only together, or a shared fault."""

    runs: list[PairRun] = field(default_factory=list)
    bad_nodes: list[str] = field(default_factory=list)
    bad_pairs: list[tuple[str, str]] = field(default_factory=list)
    shared: bool = False  # every pair slow: the fabric or a common setting, not one node
    undecided: list[str] = field(default_factory=list)  # slow, with no good node to tell them apart

    def summary(self, mark: float) -> str:
        if self.shared:
            return (f"every pair below {mark:.3g} GB/s: the fault is shared (fabric, switch or a common "
                    "setting), not one node")
        if self.undecided:
            return f"{' and '.join(self.undecided)} slow together, and no third node to tell which one is at fault"
        parts = [f"{node} slow with every partner" for node in self.bad_nodes]
        parts += [f"{a} and {b} slow only together (the path between them)" for a, b in self.bad_pairs]
        return "; ".join(parts) or "every pair reached the mark (the step is slow only with all nodes at once)"


Measure = Callable[[tuple[str, str]], "float | None"]


def _disjoint(nodes: Sequence[str]) -> list[tuple[str, str]]:
    return [(nodes[i], nodes[i + 1]) for i in range(0, len(nodes) - 1, 2)]


def isolate(nodes: Sequence[str], measure: Measure, mark: float) -> Isolation:
    """Pairwise runs naming the node (or pair) at fault.

    Round 1: N/2 disjoint pairs. With no pair at the mark, round 2 re-pairs the slow pairs' first
    nodes among themselves and their second nodes likewise, to find good nodes; none found means a
    shared fault. Then every suspect (a node of a slow pair, or the odd one out) runs with a good
    node: slow there too, it is at fault; a slow pair whose nodes are both fine apart is a path fault.
    """
    result = Isolation()

    def fast(pair: tuple[str, str], rnd: int) -> bool:
        value = measure(pair)
        result.runs.append(PairRun(pair, value, rnd))
        return value is not None and value >= mark

    outcome = {pair: fast(pair, 1) for pair in _disjoint(nodes)}
    good = [n for pair, ok in outcome.items() if ok for n in pair]
    slow_pairs = [pair for pair, ok in outcome.items() if not ok]
    suspects = [n for pair in slow_pairs for n in pair] + ([nodes[-1]] if len(nodes) % 2 else [])
    if not suspects:
        return result
    if not good and len(slow_pairs) >= 2:
        regroup = _disjoint([a for a, _ in slow_pairs]) + _disjoint([b for _, b in slow_pairs])
        good = [n for pair in regroup if fast(pair, 2) for n in pair]
    if not good:
        if len(suspects) == 2 and len(slow_pairs) == 1:
            result.undecided = list(suspects)
        else:
            result.shared = True
        return result
    rnd = max(r.round for r in result.runs) + 1
    unproven = [n for n in suspects if n not in good]
    slow_alone = {s: not fast((s, good[i % len(good)]), rnd) for i, s in enumerate(unproven)}
    result.bad_nodes = [s for s, slow in slow_alone.items() if slow]
    result.bad_pairs = [(a, b) for a, b in slow_pairs if not slow_alone.get(a) and not slow_alone.get(b)]
    return result
