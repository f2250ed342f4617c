"""Which client links the links phase loads at once, and from which storage links.

Why: one link at a time costs a load per link and direction (a 96-link pod: 192 loads, most of a
smoke run), although links that share no bottleneck can be measured together and each still reads
its own line rate. A batch therefore gives every client link storage links of its own (no storage
link serves two links of a batch, so no reading is limited by another's), enough of them to fill
it, and on a leaf-spine site keeps what it sends across each leaf's uplinks within a share of their
live capacity each way (``UPLINK_HEADROOM``: ECMP hashes flows, not bytes, so uplinks are never
planned full).
A batch is no larger than the biggest scaling step, which the site loads at once anyway, nor than
``MAX_BATCH``.

A batched reading only screens: a link that meets its mark there keeps that reading, one that
misses is measured again alone from every storage link it may use (racfg.smoke.phases.link_saturation), so that a
slow storage link or a crowded uplink never names a healthy client link.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from racfg.smoke.smoke_plan import Link, SmokePlan

UPLINK_HEADROOM = 0.5  # share of a leaf's live uplink capacity, each way, one batch may use
# Links one batch loads at most: the links phase already takes a few loads instead of two per link,
# and a lab's shared CPUs (not its links) became the limit above this on this machine (bench/RESULTS.md).
MAX_BATCH = 8


@dataclass(frozen=True)
class Assignment:
    """A client link of a batch and the storage links that load it (its own within the batch)."""

    client: Link
    sources: tuple[Link, ...]


def batch_limit(plan: SmokePlan) -> int:
    """The most client links one batch loads: those of the largest scaling step's hosts, at most MAX_BATCH."""
    hosts = plan.client_hosts[:max(plan.steps, default=1)]
    return max(1, min(MAX_BATCH, sum(len(plan.links_of(h)) for h in hosts)))


def uplink_capacity(plan: SmokePlan) -> dict[str, float]:
    """Each leaf's live uplink capacity in Mbit/s (the uplinks the switch says are down left out)."""
    capacity: dict[str, float] = defaultdict(float)
    for uplink in plan.uplinks:
        if (uplink.leaf, uplink.port) not in plan.uplinks_down:
            capacity[uplink.leaf] += uplink.rate_mbit
    return capacity


def own_sources(plan: SmokePlan, client: Link, taken: set[str], offset: int) -> tuple[Link, ...] | None:
    """Storage links not yet taken in the batch that together carry the client link's rate, starting
    ``offset`` into its targets so that batches spread over the storage hosts (None: too few left)."""
    targets = plan.targets_for(client)
    if not targets:
        return None
    chosen: list[Link] = []
    for i in range(len(targets)):
        source = targets[(i + offset) % len(targets)]
        if source.key in taken:
            continue
        chosen.append(source)
        if sum(s.rate_mbit for s in chosen) >= client.rate_mbit:
            return tuple(chosen)
    return None


def crossing(plan: SmokePlan, assignment: Assignment) -> dict[tuple[str, str], float]:
    """Mbit/s the assignment sends across leaves' uplinks, per (leaf, way) (nothing on a single-switch
    site). Reading, the client's leaf takes it in from the spines and each source's leaf sends it out;
    writing is the same the other way, so one count serves both directions of the batch."""
    if not plan.routed:
        return {}
    out: dict[tuple[str, str], float] = defaultdict(float)
    out[(assignment.client.switch, "in")] += assignment.client.rate_mbit
    for source in assignment.sources:
        out[(source.switch, "out")] += source.rate_mbit
    return out


def link_batches(plan: SmokePlan) -> list[list[Assignment]]:
    """The client links in batches, in plan order as far as they fit. A batch of one link loads it from
    every storage link it may use, as a link measured alone always is."""
    limit, capacity = batch_limit(plan), uplink_capacity(plan)
    pending, batches = list(plan.clients), []
    while pending:
        batch, later, taken = [], [], set()
        used: dict[tuple[str, str], float] = defaultdict(float)
        for client in pending:
            sources = own_sources(plan, client, taken, len(batch)) if len(batch) < limit else None
            across = crossing(plan, Assignment(client, sources)) if sources else {}
            if not sources or any(used[way] + mbit > UPLINK_HEADROOM * capacity[way[0]]
                                  for way, mbit in across.items()):
                later.append(client)
                continue
            batch.append(Assignment(client, sources))
            taken.update(s.key for s in sources)
            for way, mbit in across.items():
                used[way] += mbit
        if len(batch) <= 1:  # one link fits, or none does (its leaf's uplinks down): it is loaded alone
            first = batch[0].client if batch else pending[0]
            batch = [Assignment(first, tuple(plan.targets_for(first)))]
            later = [c for c in pending if c != first]
        batches.append(batch)
        pending = later
    return batches
