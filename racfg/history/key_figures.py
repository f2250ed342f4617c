"""Which of a run's figures are key: what a campaign's report cites, one screen for any site size.

A smoke run keeps one figure per item (each link in each direction, each storage host in a step,
RDMA per link, NCCL per node) and figures of the whole site (each scaling step's aggregate T(n) and
efficiency E(n), the storage steps' throughput and IOPS, the spine crossing, NCCL per step, the
benchmark's figure). The key figures are the site-wide ones as they are, and for each per-item
family its worst item and its median (``link.read.worst``, ``link.read.median``): a site of a
thousand links still has a handful of key figures, and a slipping link still moves the worst.
``--all`` adds every per-item figure.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict

from racfg.history.run_figures import Figure

# A per-item figure's name: its family, then the item (a link key, a host). Families of
# racfg.smoke.phases: link_saturation, rdma_bandwidth, nccl_allreduce, storage_throughput.
PER_ITEM = (
    re.compile(r"^(link\.(?:read|write))\.(.+)$"),
    re.compile(r"^(rdma\.[^.]+)\.(.+)$"),
    re.compile(r"^(nccl\.node)\.(.+)$"),
    re.compile(r"^(storage\.[^.]+\.[^.]+\.n\d+)\.(.+)$"),
)
SUMMARIES = ("worst", "median")


def family_of(name: str) -> str | None:
    """The per-item family of a figure (``link.read`` for ``link.read.dgx01:data0``); None: site-wide."""
    for pattern in PER_ITEM:
        match = pattern.match(name)
        if match:
            return match.group(1)
    return None


def key_figures(figures: dict[str, Figure]) -> dict[str, Figure]:
    """The site-wide figures, and each per-item family's worst and median item."""
    out = {name: f for name, f in figures.items() if family_of(name) is None}
    families: dict[str, list[Figure]] = defaultdict(list)
    for name, f in figures.items():
        family = family_of(name)
        if family is not None:
            families[family].append(f)
    for family, items in families.items():
        first = items[0]
        values = [f.value for f in items]
        worst = min(values) if first.better == "higher" else max(values)
        out[f"{family}.worst"] = Figure(f"{family}.worst", worst, first.unit, first.better)
        out[f"{family}.median"] = Figure(f"{family}.median", statistics.median(values), first.unit, first.better)
    return out


def all_figures(figures: dict[str, Figure]) -> dict[str, Figure]:
    """Every figure the run kept, with the key summaries beside them (``--all``)."""
    return {**figures, **key_figures(figures)}
