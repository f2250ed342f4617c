"""The gate's plan, decided purely from each node's health, Slurm's view of it and the partitions.

One decision per node of the scheduler's partitions:

- ``drain``: broken, and not yet drained by racfg (or drained by racfg for other problems: the
  reason is brought up to date);
- ``keep``: broken, drained by racfg already for the same problems;
- ``resume``: drained by racfg, read now, and no problem left;
- ``held``: broken, but the circuit breaker (racfg.scheduler.breaker) holds its drain back;
- ``others``: drained or down with someone else's reason: never touched, its problems reported;
- ``unknown``: its read failed: never drained, never resumed (a racfg drain stays until a read
  shows the problem gone);
- ``absent``: an inventory host of a partition that Slurm does not know: nothing to do;
- ``ok``: nothing to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from racfg.errors import ExitCode
from racfg.hostfacts.scontrol import SlurmNode
from racfg.scheduler.breaker import Trip, trips
from racfg.scheduler.drain_reason import drain_reason, is_racfg_reason
from racfg.scheduler.node_health import NodeHealth


class Action(StrEnum):
    DRAIN = "drain"
    KEEP = "keep"
    RESUME = "resume"
    HELD = "held"
    OTHERS = "others"
    UNKNOWN = "unknown"
    ABSENT = "absent"
    OK = "ok"


CHANGES = (Action.DRAIN, Action.RESUME)  # what an applied plan runs scontrol for


@dataclass
class Decision:
    node: str
    action: Action
    partitions: tuple[str, ...]
    state: str  # Slurm's state before the run ("" when Slurm does not know the node)
    reason_now: str | None  # Slurm's reason before the run
    problems: tuple[str, ...] = ()
    reason: str | None = None  # the reason a drain sets
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.node, "action": str(self.action), "partitions": list(self.partitions),
                "state": self.state, "reason_now": self.reason_now, "problems": list(self.problems),
                "reason": self.reason, "note": self.note}


@dataclass
class GatePlan:
    decisions: list[Decision]
    trips: list[Trip] = field(default_factory=list)
    max_drain: float = 0.10

    def of(self, *actions: Action) -> list[Decision]:
        return [d for d in self.decisions if d.action in actions]

    def exit_code(self) -> ExitCode:
        """1 a node is broken (drained now, kept drained, held back by the breaker, or drained by
        someone else with racfg's problems); else 3 a node could not be judged; else 0."""
        if self.of(Action.DRAIN, Action.KEEP, Action.HELD) or any(d.problems for d in self.of(Action.OTHERS)):
            return ExitCode.FINDINGS
        if self.of(Action.UNKNOWN, Action.ABSENT):
            return ExitCode.CANNOT_RUN
        return ExitCode.OK


def plan_gate(partitions: Mapping[str, list[str]], health: Mapping[str, NodeHealth],
              slurm: Mapping[str, SlurmNode], max_drain: float) -> GatePlan:
    """Decide every node of ``partitions`` (inventory order, each node once)."""
    member: dict[str, list[str]] = {}
    for name, nodes in partitions.items():
        for node in nodes:
            member.setdefault(node, []).append(name)
    decisions = [_decide(node, tuple(parts), health.get(node) or NodeHealth(), slurm.get(node))
                 for node, parts in member.items()]
    kept = [d.node for d in decisions if d.action is Action.KEEP or (d.action is Action.DRAIN and _racfg(d))]
    new = [d.node for d in decisions if d.action is Action.DRAIN and not _racfg(d)]
    tripped = trips(partitions, kept, new, max_drain)
    held = {n for t in tripped for n in t.would_drain}
    for d in decisions:
        if d.node in held:
            where = ", ".join(t.partition for t in tripped if d.node in t.would_drain)
            d.action, d.note = Action.HELD, f"not drained: over the circuit breaker's cap of partition {where}"
    return GatePlan(decisions, tripped, max_drain)


def _racfg(decision: Decision) -> bool:
    return is_racfg_reason(decision.reason_now)


def _decide(node: str, partitions: tuple[str, ...], health: NodeHealth, slurm: SlurmNode | None) -> Decision:
    ids = tuple(health.problems)
    if slurm is None:
        return Decision(node, Action.ABSENT, partitions, "", None, ids, note="not a node of Slurm (scontrol)")
    base = Decision(node, Action.OK, partitions, slurm.state_text, slurm.reason, ids)
    mine = is_racfg_reason(slurm.reason)
    if (slurm.drained or slurm.down) and slurm.reason and not mine:
        who = slurm.reason_user or "someone else"
        base.action, base.note = Action.OTHERS, f"drained or down by {who} ({slurm.reason}): untouched"
        return base
    if health.broken:
        first = next(iter(health.problems.values()))
        base.reason = drain_reason(ids, first.fix)
        same = mine and slurm.drained and slurm.reason == base.reason
        base.action = Action.KEEP if same else Action.DRAIN
        return base
    if health.unknown:
        base.action, base.note = Action.UNKNOWN, health.unreadable[0]
        return base
    if mine and slurm.drained:
        base.action = Action.RESUME
    return base
