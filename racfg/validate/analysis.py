"""Cluster-wide readings of many observations: which NIC breaks jumbo frames, which cables are
swapped, which host is the odd one out. Pure functions, unit-tested on tables.

A single bad NIC or switch port makes every path through it fail; reporting each of those paths
would bury the one cause under N symptoms. So paths are read as a matrix: a NIC whose every path
fails is named once, and the paths it explains are not reported again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from racfg.validate.probe import PingPath


@dataclass(frozen=True)
class NicJumbo:
    """The jumbo-frame verdict of one data NIC."""

    host: str
    nic: str
    paths: int  # paths through this NIC that were measured
    failed: tuple[str, ...] = ()  # failing paths reported on this NIC (source side), labels
    dead: bool = False  # every path through this NIC fails

    @property
    def ok(self) -> bool:
        return not self.dead and not self.failed


def jumbo_verdicts(paths: list[PingPath], passed: dict[str, bool | None]) -> dict[tuple[str, str], NicJumbo]:
    """``passed``: path label -> True/False, or None/absent when the source could not be probed."""
    through: dict[tuple[str, str], list[bool]] = {}
    for p in paths:
        outcome = passed.get(p.label)
        if outcome is None:
            continue
        for end in ((p.src_host, p.src_nic), (p.dst_host, p.dst_nic)):
            through.setdefault(end, []).append(outcome)
    dead = {end for end, outcomes in through.items() if outcomes and not any(outcomes)}
    out: dict[tuple[str, str], NicJumbo] = {}
    nics = {(p.src_host, p.src_nic) for p in paths} | {(p.dst_host, p.dst_nic) for p in paths}
    for end in sorted(nics):
        measured = through.get(end, [])
        if end in dead:
            out[end] = NicJumbo(end[0], end[1], len(measured), dead=True)
            continue
        failed = tuple(
            p.label for p in paths
            if (p.src_host, p.src_nic) == end and passed.get(p.label) is False
            and (p.dst_host, p.dst_nic) not in dead
        )
        out[end] = NicJumbo(end[0], end[1], len(measured), failed=failed)
    return out


@dataclass(frozen=True)
class CableEnd:
    """One end of an intended cable: the switch port and the host NIC it should join."""

    switch: str
    port: str  # canonical port name
    host: str
    nic: str


@dataclass
class CablingVerdict:
    """What LLDP says about one intended cable, from both ends."""

    cable: CableEnd
    switch_sees: tuple[str, str] | None = None  # (system, port id) the switch port hears
    host_sees: tuple[str, str] | None = None  # (system, canonical port) the host NIC hears
    swapped_with: CableEnd | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def cabling_verdicts(
    cables: list[CableEnd],
    switch_lldp: dict[tuple[str, str], tuple[str, str]],
    host_lldp: dict[tuple[str, str], tuple[str, str]],
) -> dict[tuple[str, str], CablingVerdict]:
    """Compare both ends' LLDP with the cabling plan; name swapped pairs as such.

    ``switch_lldp``: (switch, port) -> (neighbour system name, neighbour port id = host NIC name).
    ``host_lldp``: (host, nic) -> (neighbour system name = switch, canonical switch port).
    Missing keys mean "nothing heard" (or not readable: callers leave out what they could not read).
    Keyed by (switch, port).
    """
    by_nic = {(c.host, c.nic): c for c in cables}
    out: dict[tuple[str, str], CablingVerdict] = {}
    for c in cables:
        v = CablingVerdict(c, switch_lldp.get((c.switch, c.port)), host_lldp.get((c.host, c.nic)))
        if v.switch_sees is not None and v.switch_sees != (c.host, c.nic):
            other = by_nic.get(v.switch_sees)
            if other is not None and switch_lldp.get((other.switch, other.port)) == (c.host, c.nic):
                v.swapped_with = other
        if v.swapped_with is not None:
            o = v.swapped_with
            v.problems.append(
                f"cables swapped: {c.switch} {c.port} has {o.host}:{o.nic} and {o.switch} {o.port} has "
                f"{c.host}:{c.nic} (swap the cables of {c.host}:{c.nic} and {o.host}:{o.nic})")
        elif v.switch_sees is None:
            v.problems.append(f"{c.switch} {c.port} hears no LLDP neighbour (expected {c.host}:{c.nic})")
        elif v.switch_sees != (c.host, c.nic):
            v.problems.append(f"{c.switch} {c.port} hears {v.switch_sees[0]}:{v.switch_sees[1]} "
                              f"(expected {c.host}:{c.nic})")
        if v.host_sees is not None and v.host_sees != (c.switch, c.port) and v.swapped_with is None:
            v.problems.append(f"{c.host}:{c.nic} hears {v.host_sees[0]} {v.host_sees[1]} "
                              f"(expected {c.switch} {c.port})")
        out[(c.switch, c.port)] = v
    return out


def odd_ones(values: dict[str, str | None]) -> tuple[str | None, dict[str, str | None]]:
    """The majority value among hosts, and the hosts that differ from it (None values ignored).

    With no strict majority (a tie) the most common value still serves as the expectation: the
    report then names every host off it, which is what a person needs to look at.
    """
    seen = Counter(v for v in values.values() if v is not None)
    if not seen:
        return None, {}
    majority, _ = seen.most_common(1)[0]
    return majority, {h: v for h, v in values.items() if v is not None and v != majority}
