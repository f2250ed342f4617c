"""Stragglers: each per-node and per-link figure of a smoke run judged against the same figure of its peers.

Why: an absolute mark passes a link at 93% of line rate or a storage node a tenth slower than its
twins, and either bends a benchmark campaign. Peers measured in the same run under the same
conditions are the fairest reference a site has, so a figure far below its peers' median is named
even when it passes its mark.

Peers: the figures of one kind (``link.read``, ``storage.drive.seq.n2``, ``nccl.node``, ...:
racfg.history.key_figures.family_of, the name with its item removed), and for links also of one
declared speed (the result's ``line_bps``): a 25G link is no peer of a 100G one.

Statistic: the group's median and MAD (median absolute deviation, scaled by 1.4826 to estimate a
standard deviation). A figure is a straggler when it is worse than the median by more than
``max(K * 1.4826 * MAD, FLOOR * median)``. K = 3 is the usual robust outlier bound. The relative
FLOOR of 7% is what keeps a small or very even site quiet: on the 3-client lab the MAD of a
healthy group is well under 1% of the median (links 248-252 Mbit/s of 250), so K * MAD alone would
name a link 2% low; 7% sits above the spread of repeated healthy lab runs (tests/recordings) and
below the 6-10% drops a campaign cares about being missed twice (drift --performance measures those
against the baseline). A group of fewer than MIN_PEERS figures has no meaningful median: it gets one
SKIP per group saying so, not a verdict.

Not where the measuring machine decided: figures read at once while the measuring machines' CPUs were
at their limit (a result's ``machine_busy``, racfg.smoke.machine_limit: the lab's hosts share two
CPUs) spread by how those CPUs were shared, not by the nodes. Their group gets one SKIP that says so, as
a short reading on a busy machine is an error naming the machine, never a node blamed.

Measured again first: a storage step of several hosts with a host below its peers is measured again
before its figures reach this comparison, each host's figure its best reading (``stragglers`` is the rule
the phase asks: racfg.smoke.phases.storage_throughput.until_peers_met).

No blaming twice: an item whose own result already FAILs or ERRORs (below its mark, or an outlier
of the link phase: below outlier_fraction of the best link of its kind) is neither named again
nor part of its peers' reference (a broken link must not drag the median down and hide a second
one). Its cell in the heat map still shows its ratio.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from racfg.history.key_figures import family_of
from racfg.results import Result, Status
from racfg.smoke.machine_limit import limited_text

CATEGORY = "stragglers"
K = 3.0  # robust bounds: this many scaled MADs
MAD_SCALE = 1.4826  # MAD of a normal distribution to its standard deviation
FLOOR = 0.07  # never closer to the median than this share of it
MIN_PEERS = 3  # fewer figures than this: no median worth judging by


@dataclass(frozen=True)
class PeerFigure:
    """One item's figure in a run: its kind, the item (link key or host), and whether it already failed."""

    family: str
    item: str
    value: float
    unit: str
    better: str
    line_bps: float | None
    failed: bool
    machine_busy: tuple[str, ...] = ()  # what says the measuring machines were at their limit as it was read

    @property
    def node(self) -> str:
        return self.item.split(":", 1)[0]


def straggler_bound(values: list[float], k: float = K, floor: float = FLOOR) -> tuple[float, float]:
    """The median of ``values`` and how far from it a figure may lie before it is a straggler."""
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    return median, max(k * MAD_SCALE * mad, floor * abs(median))


def is_straggler(value: float, median: float, allowance: float, better: str) -> bool:
    worse_by = median - value if better == "higher" else value - median
    return worse_by > allowance


def peer_floor(noise: Mapping[str, float] | None, kind: str) -> float:
    """How close to the peers' median a figure of ``kind`` (``link``, ``storage``: the first word of its key)
    is never named: FLOOR, or the site's noise for that kind (acceptance.noise) where larger."""
    return max(FLOOR, (noise or {}).get(kind, 0.0))


def stragglers(values: Mapping[str, float], floor: float = FLOOR, better: str = "higher") -> list[str]:
    """The items of one group of peers (item -> figure) that lie past its bound, in order; none in a group
    too small to judge. What a phase asks before it measures a step again (racfg.smoke.phases.storage_throughput)."""
    if len(values) < MIN_PEERS:
        return []
    median, allowance = straggler_bound(list(values.values()), floor=floor)
    return sorted(item for item, value in values.items() if is_straggler(value, median, allowance, better))


def peer_figures(results: Iterable[Result]) -> list[PeerFigure]:
    """Every per-item figure of the run, with whether its own verdict (or a link outlier) already failed it."""
    results = list(results)
    outliers = {"link." + "/".join(r.check.split("/")[1:2]) + "." + r.target for r in results
                if r.check.startswith("outlier/") and r.status is Status.FAIL}  # link.read.HOST:NIC
    out = []
    for r in results:
        for m in r.data.get("metrics", []) if isinstance(r.data, dict) else []:
            family = family_of(str(m.get("name", "")))
            if family is None:
                continue
            item = m["name"][len(family) + 1:]
            failed = r.status in (Status.FAIL, Status.ERROR) or m["name"] in outliers
            out.append(PeerFigure(family, item, float(m["value"]), str(m.get("unit", "")),
                                  "lower" if m.get("better") == "lower" else "higher", r.data.get("line_bps"), failed,
                                  tuple(r.data.get("machine_busy", ()))))
    return out


def peer_groups(figures: Iterable[PeerFigure]) -> dict[str, list[PeerFigure]]:
    """Figures grouped by kind (and declared speed for links), each group's label its name."""
    groups: dict[str, list[PeerFigure]] = defaultdict(list)
    for f in figures:
        speed = f" at {f.line_bps / 1e9:g} Gbit/s" if f.line_bps else ""
        groups[f.family + speed].append(f)
    return dict(groups)


def straggler_results(results: Iterable[Result], noise: Mapping[str, float] | None = None) -> list[Result]:
    """One FAIL per straggler, one PASS per group without, one SKIP per group too small to judge.
    ``noise``: the site's noise per kind of figure (acceptance.noise.by_kind()); a kind noisier than
    FLOOR is held to its own (the lab's drives, read through shared CPUs, differ by a third)."""
    out: list[Result] = []
    for label, group in peer_groups(peer_figures(results)).items():
        out += _judge_group(label, group, peer_floor(noise, group[0].family.split(".", 1)[0]))
    return out


def _judge_group(label: str, group: list[PeerFigure], floor: float = FLOOR) -> list[Result]:
    check = "peers/" + label.replace(" at ", "@").replace(" Gbit/s", "G")
    reference = [f for f in group if not f.failed]
    if len(reference) < MIN_PEERS:
        return [Result("cluster", check, CATEGORY, Status.SKIP,
                       f"{label}: {len(reference)} figure(s) to compare, fewer than {MIN_PEERS}: "
                       "no peers' median to judge a straggler by")]
    busy = next((f.machine_busy for f in reference if f.machine_busy), ())
    if busy:
        return [Result("cluster", check, CATEGORY, Status.SKIP,
                       f"{label}: {len(reference)} figures read at once; {limited_text(list(busy))}: their spread is "
                       "how its CPUs were shared, not how the nodes compare, so no straggler is named",
                       data={"machine_busy": list(busy), "peers": len(reference)})]
    median, allowance = straggler_bound([f.value for f in reference], floor=floor)
    slow = [f for f in reference if is_straggler(f.value, median, allowance, f.better)]
    unit = reference[0].unit
    if not slow:
        return [Result("cluster", check, CATEGORY, Status.PASS,
                       f"{label}: all {len(reference)} within {allowance:.4g} {unit} of the peers' median "
                       f"{median:.4g} {unit}",
                       data={"median": median, "allowance": allowance, "peers": len(reference)})]
    return [_straggler(f, label, median, allowance, len(reference)) for f in slow]


def _straggler(f: PeerFigure, label: str, median: float, allowance: float, peers: int) -> Result:
    ratio = f.value / median if median else 0.0
    return Result(
        f.item, f"peers/{f.family}/{f.item}", CATEGORY, Status.FAIL,
        f"{f.family} of {f.item}: {f.value:.4g} {f.unit} is {ratio * 100:.1f}% of its {peers} peers' median "
        f"{median:.4g} {f.unit} ({label}); it passes or misses its own mark separately",
        f"within {allowance:.4g} {f.unit} of {median:.4g} {f.unit}", f"{f.value:.4g} {f.unit}",
        fix=f"compare {f.item} with its peers: its NIC speed, MTU, errors, tuning and (storage) drives; "
            "re-run smoke to confirm",
        data={"median": median, "ratio": round(ratio, 5), "allowance": allowance, "peers": peers, "group": label})


def peer_heatmap(results: Iterable[Result]) -> dict[str, Any]:
    """``meta["peer_heatmap"]`` (racfg.results.figure_views): node x figure kind, each cell the node's figure
    over its peers' median (the median over the figure where lower is better, so below 1 is always worse);
    a node with several items of one kind (two NICs) shows its worst. Groups of two are drawn, not judged."""
    groups = [g for g in peer_groups(peer_figures(results)).values() if len(g) >= 2]
    if not groups:
        return {}
    figures = sorted({g[0].family for g in groups})
    cells: dict[str, dict[str, float]] = defaultdict(dict)
    for group in groups:
        reference = [f.value for f in group if not f.failed] or [f.value for f in group]
        median = statistics.median(reference)
        for f in group:
            if not median:
                continue
            ratio = f.value / median if f.better == "higher" else (median / f.value if f.value else 0.0)
            old = cells[f.node].get(f.family)
            cells[f.node][f.family] = round(ratio if old is None else min(old, ratio), 4)
    return {"figures": figures,
            "nodes": {node: [row.get(fig) for fig in figures] for node, row in sorted(cells.items())}}
