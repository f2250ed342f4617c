"""The path matrix: which NIC (or which lone path) a failing ping is put down to. Pure, unit-tested on tables.

Each path gets a small ping and a DF ping at the path MTU, by destination as applications send
(racfg.validate.probe). Small fails: the destination cannot be reached at all (address, link, port,
a neighbour entry); small passes and DF fails: the MTU; the host's routing sends it by another NIC, a
non-data source address or a blackhole (the same ping bound to the NIC may pass): the route. One bad end fails every
path through it, so the matrix is read as a whole: a destination whose inbound paths all fail is
named once as the destination (even when its own outbound paths pass), a source whose outbound
paths all fail likewise, and a failing path neither end explains is named as that path. A sender
that is healthy is never the target of a failure, even when every destination it sends to is broken:
the old row/column reading, which named a NIC only when every path through it failed both ways,
blamed every sender of a host that only receives badly.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from racfg.validate.probe import PingPath

End = tuple[str, str]  # (host, nic)


class Outcome(StrEnum):
    OK = "ok"  # small and DF pings pass
    MTU = "mtu"  # the small ping passes, the DF ping at the MTU fails
    UNREACHABLE = "unreachable"  # the small ping fails
    ROUTE = "route"  # by destination the host's routing sends it wrong (bound to the NIC it may pass)


@dataclass(frozen=True)
class PathFinding:
    """A failure filed on one NIC: as the ``destination`` of all its inbound paths, the ``source`` of
    all its outbound ones, ``both``, or one lone ``path`` it sends on."""

    host: str
    nic: str
    role: str
    outcomes: tuple[tuple[str, Outcome], ...]  # (path label, outcome) of the failing paths it explains
    # MTU when every failing path it alone explains is MTU (a path whose far end is named too, e.g. to an
    # unreachable destination, says nothing about this end's kind); else unreachable
    kind: Outcome = Outcome.UNREACHABLE
    # what the source host's state says of its failing paths (racfg.validate.context.jumbo): the route
    # its routing picks, a neighbour entry with a MAC the destination does not have
    causes: tuple[str, ...] = ()

    def describe(self, size: int) -> str:
        n = len(self.outcomes)
        why = {Outcome.MTU: f"small ping passes, {size + 28}-byte DF ping fails: MTU",
               Outcome.ROUTE: "by destination the host's routing sends it wrong"}.get(
                   self.kind, "small ping fails: unreachable")
        why += "".join(f"; {c}" for c in self.causes)
        if self.role == "path":
            return f"path {self.outcomes[0][0]} fails ({why})"
        where = f"{self.host}:{self.nic}"
        what = {"destination": f"all {n} inbound paths to {where} fail",
                "source": f"all {n} outbound paths from {where} fail",
                "both": f"all {n} paths into and out of {where} fail"}[self.role]
        return f"{what} ({why})"


@dataclass(frozen=True)
class NicPaths:
    """One NIC's share of the matrix: how many paths through it were measured, what is filed on it."""

    host: str
    nic: str
    measured: int
    findings: tuple[PathFinding, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.findings

    def paths_text(self) -> str:
        return f"{self.measured} path{'' if self.measured == 1 else 's'}"


def attribute(paths: list[PingPath], outcomes: dict[str, Outcome | None],
              causes: dict[str, str] | None = None) -> dict[End, NicPaths]:
    """Every NIC on a path, with the failures filed on it. ``outcomes``: path label -> outcome, None or
    absent when the source could not be probed (such a path counts nowhere); ``causes``: path label ->
    what its source's state says of it (a stray route, a wrong neighbour entry), carried by the finding."""
    causes = causes or {}
    known = [p for p in paths if outcomes.get(p.label) is not None]
    inbound: dict[End, list[PingPath]] = {}
    outbound: dict[End, list[PingPath]] = {}
    for p in known:
        inbound.setdefault(_dst(p), []).append(p)
        outbound.setdefault(_src(p), []).append(p)

    def fails(p: PingPath) -> bool:
        return outcomes[p.label] != Outcome.OK

    # Candidates: every path on that side fails. A candidate is named only with evidence of its own:
    # a failing path whose far end is not itself a candidate. A sender whose every destination is
    # broken (or a destination all of whose senders are) is explained by them, not named; where
    # neither end of a path has such evidence (a one-path site), the path is named as itself.
    cand_dst = {end for end, ps in inbound.items() if all(fails(p) for p in ps)}
    cand_src = {end for end, ps in outbound.items() if all(fails(p) for p in ps)}
    as_dst = {end for end in cand_dst if any(_src(p) not in cand_src for p in inbound[end])}
    as_src = {end for end in cand_src if any(_dst(p) not in cand_dst for p in outbound[end])}
    found: dict[End, list[PathFinding]] = {}
    for end in sorted(as_dst | as_src):
        role = "both" if end in as_dst and end in as_src else "destination" if end in as_dst else "source"
        ps = [p for p in known if fails(p) and ((role != "source" and _dst(p) == end)
                                                or (role != "destination" and _src(p) == end))]
        alone = [p for p in ps if (_src(p) if _dst(p) == end else _dst(p)) not in as_src | as_dst] or ps
        found.setdefault(end, []).append(PathFinding(end[0], end[1], role, _outcomes(ps, outcomes),
                                                     _kind(alone, outcomes), _causes(ps, causes)))
    for p in known:
        if fails(p) and _dst(p) not in as_dst and _src(p) not in as_src:
            found.setdefault(_src(p), []).append(PathFinding(p.src_host, p.src_nic, "path", _outcomes([p], outcomes),
                                                             _kind([p], outcomes), _causes([p], causes)))
    ends = sorted({_src(p) for p in paths} | {_dst(p) for p in paths})
    return {end: NicPaths(end[0], end[1], len(inbound.get(end, [])) + len(outbound.get(end, [])),
                          tuple(found.get(end, ()))) for end in ends}


def _src(p: PingPath) -> End:
    return (p.src_host, p.src_nic)


def _dst(p: PingPath) -> End:
    return (p.dst_host, p.dst_nic)


def _kind(ps: list[PingPath], outcomes: dict[str, Outcome | None]) -> Outcome:
    for kind in (Outcome.MTU, Outcome.ROUTE):
        if all(outcomes[p.label] == kind for p in ps):
            return kind
    return Outcome.UNREACHABLE


def _causes(ps: list[PingPath], causes: dict[str, str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(causes[p.label] for p in ps if causes.get(p.label)))


def _outcomes(ps: list[PingPath], outcomes: dict[str, Outcome | None]) -> tuple[tuple[str, Outcome], ...]:
    return tuple((p.label, Outcome(outcomes[p.label])) for p in ps)
