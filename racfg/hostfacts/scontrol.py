"""Slurm's view of its nodes: ``scontrol show node -o`` (one line per node, ``Key=Value`` fields).

``racfg gate`` reads each node's state and drain reason here before it drains or resumes
anything: whether a node is drained, and whether the reason is racfg's own (racfg.scheduler.drain_reason)
or someone else's, decides what gate may touch. Format read: Slurm 22.05's one-line form (Debian
bookworm; tests/recordings/slurm), where values may hold spaces (``OS=Linux 6.1.0 #1 SMP ...``,
``Reason=...``) and equals signs (``CfgTRES=cpu=2,mem=1M``): a field starts at a blank followed
by ``Key=``. The reason is read to the end of the line, so that a reason someone else wrote with a
``word=`` in it stays whole; Slurm appends ``[user@time]`` to it, kept apart here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from racfg.hostfacts.common import lines
from racfg.hostfacts.parse_error import ParseError

TOOL = "scontrol show node -o"
_FIELD = re.compile(r"(?:^|\s)([A-Za-z_]+)=")
_STAMP = re.compile(r"\s*\[(?P<user>[^\]@\s]+)@(?P<time>[^\]]+)\]\s*$")
# Fields Slurm may print after Reason= (newer releases): where a reason ends when one follows it.
_AFTER_REASON = ("Comment", "Extra", "InstanceId", "InstanceType", "ResumeAfterTime")
_NO_NODES = "No nodes in the system"


@dataclass(frozen=True)
class SlurmNode:
    """One node as slurmctld sees it. ``state`` is the base state (IDLE, MIXED, ALLOCATED, DOWN ...),
    ``flags`` the rest (DRAIN, NOT_RESPONDING, ...); ``reason`` without Slurm's ``[user@time]``."""

    name: str
    state: str
    flags: frozenset[str]
    reason: str | None
    reason_user: str | None
    partitions: tuple[str, ...]

    @property
    def drained(self) -> bool:
        """Draining or drained: no new job lands on it (Slurm's DRAIN flag)."""
        return "DRAIN" in self.flags

    @property
    def down(self) -> bool:
        return self.state == "DOWN"

    @property
    def state_text(self) -> str:
        return "+".join([self.state, *sorted(self.flags)])


def parse_scontrol_nodes(text: str | bytes) -> list[SlurmNode]:
    """Every node of ``scontrol show node -o``; an empty cluster is an empty list, anything that is
    not one node per line (an error message, a capture cut mid-line) a :class:`ParseError`."""
    nodes: list[SlurmNode] = []
    body = [line for line in lines(text) if line.strip()]
    if not body:
        raise ParseError(TOOL, "no output")
    if len(body) == 1 and body[0].strip() == _NO_NODES:
        return []
    for number, line in enumerate(body, 1):
        nodes.append(_node(_fields(line, number), number))
    return nodes


def _fields(line: str, number: int) -> dict[str, str]:
    if not line.startswith("NodeName="):
        raise ParseError(TOOL, f"line {number}: expected NodeName=..., got {line[:60]!r}")
    reason_at = line.find(" Reason=")
    reason: str | None = None
    if reason_at >= 0:
        line, reason = line[:reason_at], line[reason_at + len(" Reason="):]
        ends = [m.start() for key in _AFTER_REASON if (m := re.search(rf"\s{key}=", reason))]
        if ends:
            line, reason = line + reason[min(ends):], reason[:min(ends)]
    starts = list(_FIELD.finditer(line))
    out: dict[str, str] = {}
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(line)
        out[match.group(1)] = line[match.end():end].strip()
    if reason is not None:
        out["Reason"] = reason.strip()
    return out


def _node(fields: dict[str, str], number: int) -> SlurmNode:
    name, state = fields.get("NodeName", ""), fields.get("State")
    if not name or not state:
        raise ParseError(TOOL, f"line {number}: a node without NodeName or State")
    base, *flags = state.split("+")
    if base.endswith("*"):  # older releases mark a node that does not respond with a star
        base, flags = base.rstrip("*"), [*flags, "NOT_RESPONDING"]
    reason, user = fields.get("Reason") or None, None
    if reason is not None and (stamp := _STAMP.search(reason)):
        reason, user = reason[:stamp.start()].strip() or None, stamp.group("user")
    partitions = tuple(p for p in fields.get("Partitions", "").split(",") if p and p != "(null)")
    return SlurmNode(name, base.upper(), frozenset(f.upper() for f in flags if f), reason, user, partitions)
