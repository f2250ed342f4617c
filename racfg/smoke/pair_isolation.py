"""The node, not the pair: a multi-node step's suspects, each measured again beside a node that passed.

A step of several nodes at once (a scaling step of n clients, fio on several hosts) gives each node's
own figure. A node below ``fraction`` (acceptance.smoke.outlier_fraction) of its share of what the step
carried (its capacity's share: its links' line rate, or an equal share) is a suspect; the nodes at their
share passed. Each suspect, at most ``MAX_SUSPECTS`` and the lowest first, is loaded again beside one
node that passed, loaded the same way: a suspect that stays low beside a good partner is the node at
fault (its NIC, cable, drives, tuning); one that reaches its partner's figure was only slow inside the
whole step, so the step, not a node, falls short (the shared path: storage links, the fabric, the
measuring machine). NCCL does the same for all-reduce (racfg.smoke.nccl_marks.isolate), where any run
needs two nodes; here the step's own per-node figures already name the suspects, so one pair each
suffices and the extra loads stay bounded.

A pair is an item like any other: a pair whose suspect stays low is measured again (racfg.smoke.remeasure)
before it names the node, and its best reading decides. ``pick_pairs`` and ``isolation_results`` read
plain figures; ``isolate_suspects`` takes the pair's measurement as a function that the phase supplies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

from racfg.results import Result, Status
from racfg.smoke.remeasure import Announce, deciding_reading, until_met
from racfg.smoke.units import pct

MAX_SUSPECTS = 3  # pairs loaded after one step, at most: each costs one load (and its re-measurements)

Figures = Mapping[str, float]  # node -> its figure in one load (bits/s, bytes/s)
MeasurePair = Callable[[str, str], Figures]  # (suspect, partner) -> each one's figure in their load together


def shares(figures: Figures, capacity: Mapping[str, float]) -> dict[str, float]:
    """Each node's figure over its share of the load's total (its capacity's share of the nodes'; a node
    missing from ``capacity`` counts 1): 1.0 is a fair share. Empty when the load carried nothing."""
    total = sum(figures.values())
    weights = {n: capacity.get(n, 1.0) for n in figures}
    if total <= 0 or sum(weights.values()) <= 0:
        return {}
    return {n: figures[n] / (total * weights[n] / sum(weights.values())) for n in figures}


def pick_pairs(figures: Figures, capacity: Mapping[str, float], fraction: float,
               limit: int = MAX_SUSPECTS) -> list[tuple[str, str]]:
    """(suspect, partner) for each node below ``fraction`` of its share, the lowest first and at most
    ``limit``, each beside a node at its share (the best first, in turn). None without a node that passed."""
    share = shares(figures, capacity)
    low = sorted((n for n in share if share[n] < fraction), key=lambda n: (share[n], n))[:limit]
    good = sorted((n for n in share if share[n] >= fraction), key=lambda n: (-share[n], n))
    if not good:
        return []
    return [(suspect, good[i % len(good)]) for i, suspect in enumerate(low)]


def pair_ratio(suspect: str, partner: str, capacity: Mapping[str, float], figures: Figures) -> float | None:
    """The suspect's figure over its partner's, each per unit of capacity (1.0: as good as the partner);
    None when the partner carried nothing (the pair's load failed: it says nothing about the suspect)."""
    mine, theirs = figures.get(suspect, 0.0), figures.get(partner, 0.0)
    if theirs <= 0:
        return None
    return (mine / capacity.get(suspect, 1.0)) / (theirs / capacity.get(partner, 1.0))


@dataclass(frozen=True)
class PairOutcome:
    """One suspect's pair: its deciding reading (both nodes' figures), the ratio it gives, the loads it took
    (a step of two nodes is its own pair: its reading counts first, and only re-measurements load)."""

    suspect: str
    partner: str
    figures: dict[str, float]
    ratio: float | None  # pair_ratio of the deciding reading
    loads: int = 1

    def low(self, fraction: float) -> bool:
        return self.ratio is not None and self.ratio < fraction

    def as_dict(self) -> dict:
        return {"suspect": self.suspect, "partner": self.partner, "loads": self.loads,
                "ratio": round(self.ratio, 5) if self.ratio is not None else None,
                "figures": {n: round(v) for n, v in self.figures.items()}}


def _margin(suspect: str, partner: str, capacity: Mapping[str, float], fraction: float, figures: Figures) -> float:
    ratio = pair_ratio(suspect, partner, capacity, figures)
    return -1.0 if ratio is None else ratio - fraction


def isolate_suspects(figures: Figures, capacity: Mapping[str, float], fraction: float, measure_pair: MeasurePair,
                     limit: int, announce: Announce, what: str) -> list[PairOutcome]:
    """Each suspect of a step (``pick_pairs``) loaded beside its partner through ``measure_pair``, measured
    again while it stays low (at most ``limit`` times, racfg.smoke.remeasure); the best reading decides.
    A step of two nodes is already the pair: its figures are the first reading, so a fault in it costs
    only the re-measurements, and noise is measured through as anywhere."""
    out = []
    for suspect, partner in pick_pairs(figures, capacity, fraction):
        take = partial(measure_pair, suspect, partner)
        margin = partial(_margin, suspect, partner, capacity, fraction)
        whole = set(figures) == {suspect, partner}  # a step of two: its own reading is the pair's first
        if not whole:
            announce(f"{what}: {suspect} below its share, measured beside {partner}, which passed")
        readings = until_met([dict(figures) if whole else take()], take, margin, limit, announce,
                             f"{what}: {suspect} beside {partner}")
        best = dict(readings[deciding_reading([margin(r) for r in readings])])
        out.append(PairOutcome(suspect, partner, best, pair_ratio(suspect, partner, capacity, best),
                               len(readings) - whole))
    return out


@dataclass(frozen=True)
class Isolating:
    """How a phase says its pairs: its check's prefix and category, what a node is ("client"), what the
    step was ("the 3-client step"), how a figure reads, and the fix for a node named (``{node}`` in it)."""

    check: str
    category: str
    node: str
    step: str
    rate: Callable[[float], str]
    fix: str


def isolation_results(how: Isolating, figures: Figures, capacity: Mapping[str, float], fraction: float,
                      pairs: list[PairOutcome]) -> list[Result]:
    """What the pairs found: each suspect that stayed low beside a node that passed, named; else, when every
    pair was healthy, that no node is at fault and the step falls short only as a whole. Nothing without pairs."""
    if not pairs:
        return []
    share = shares(figures, capacity)
    data = {"pairs": [p.as_dict() for p in pairs], "fraction": fraction, "step": how.step,
            "shares": {n: round(v, 5) for n, v in share.items()}}
    named = [p for p in pairs if p.low(fraction)]
    undecided = [p for p in pairs if p.ratio is None]
    out = [Result(p.suspect, f"{how.check}/{p.suspect}", how.category, Status.FAIL,
                  f"{how.node} {p.suspect} stays low beside {p.partner}, a {how.node} that passed: "
                  f"{_pair_text(how, p)}, {pct(p.ratio or 0.0)} of its partner's figure per unit of capacity "
                  f"(below {pct(fraction)}); in {how.step} it had {pct(share.get(p.suspect, 0.0))} of its share: "
                  f"the {how.node} is at fault, not the step", f">= {pct(fraction)} of its partner's figure",
                  pct(p.ratio or 0.0), fix=how.fix.format(node=p.suspect), data=data) for p in named]
    out += [Result(p.suspect, f"{how.check}/{p.suspect}", how.category, Status.ERROR,
                   f"{how.node} {p.suspect} not told apart: its load beside {p.partner} carried nothing for the "
                   f"partner ({_pair_text(how, p)})", data=data) for p in undecided]
    if out:
        return out
    healthy = "; ".join(f"{p.suspect} beside {p.partner}: {_pair_text(how, p)} ({pct(p.ratio or 0.0)})"
                        for p in pairs)
    return [Result("cluster", how.check, how.category, Status.PASS,
                   f"every {how.node} below its share in {how.step} kept up beside a {how.node} that passed "
                   f"({healthy}): no {how.node} is at fault; they are slow only all at once (the shared "
                   "path: storage, the fabric, the measuring machine)", data=data)]


def _pair_text(how: Isolating, pair: PairOutcome) -> str:
    return (f"{how.rate(pair.figures.get(pair.suspect, 0.0))} against "
            f"{how.rate(pair.figures.get(pair.partner, 0.0))}")
