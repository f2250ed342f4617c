"""The circuit breaker: the most of a partition one gate run may leave drained by racfg.

Why: a wrong reading (a bad baseline, a switch read that fails half-way, a bug in a rule) would
otherwise drain a whole partition and stop the site's work; NVSentinel caps its quarantines for the
same reason. The cap is a share of the partition's nodes (``--max-drain``, else
``scheduler.max_drain``, 10%), rounded down but never below one node, so a small partition can
still lose its one broken node.

What counts: the nodes racfg's drains hold in the partition after the run (those it keeps and those
it would add). Someone else's drains do not count: they are not racfg's to release or to blame.
Over the cap, the partition trips: none of its new drains happen (not the first K: which K would be
an arbitrary pick, and a partition with more broken nodes than its cap points at a cause on the
site's side, a switch or the baseline, that a person should read first). The run says what it
would have drained, and its exit code is 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


def drain_cap(size: int, share: float) -> int:
    """The most nodes of a ``size``-node partition racfg may hold drained: ``share`` of it rounded
    down, at least one (``1e-9`` absorbs float error: 10% of 30 is 3, not 2)."""
    return max(1, math.floor(size * share + 1e-9))


@dataclass(frozen=True)
class Trip:
    """A partition whose cap the run would pass: its size, cap, the racfg drains it keeps, and the
    drains it holds back."""

    partition: str
    size: int
    cap: int
    kept: tuple[str, ...]
    would_drain: tuple[str, ...]

    def sentence(self) -> str:
        return (f"partition {self.partition}: draining {', '.join(self.would_drain)} would leave "
                f"{len(self.kept) + len(self.would_drain)} of {self.size} nodes drained by racfg, over the cap "
                f"of {self.cap}; none of them drained")


def trips(partitions: Mapping[str, list[str]], kept: Iterable[str], new: Iterable[str], share: float) -> list[Trip]:
    """The partitions the run's ``new`` drains would take past their cap, with racfg's ``kept`` drains."""
    kept_set, new_set = set(kept), set(new)
    out = []
    for name, nodes in partitions.items():
        cap = drain_cap(len(nodes), share)
        mine_kept = tuple(n for n in nodes if n in kept_set)
        mine_new = tuple(n for n in nodes if n in new_set)
        if mine_new and len(mine_kept) + len(mine_new) > cap:
            out.append(Trip(name, len(nodes), cap, mine_kept, mine_new))
    return out
