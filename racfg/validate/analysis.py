"""Cluster-wide readings of many observations: which cables are swapped, which host is the odd
one out. Pure functions, unit-tested on tables. (Which NIC breaks the paths through it is the path
matrix's reading, racfg.validate.pathmatrix.)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


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
    """The strict-majority value among hosts, and the hosts that differ from it (None values ignored).

    Without a strict majority (a tie, or no value held by more than half) there is no expectation:
    (None, {}) names no host, and the caller reports the split once (``split``).
    """
    seen = Counter(v for v in values.values() if v is not None)
    if not seen:
        return None, {}
    majority, count = seen.most_common(1)[0]
    if count * 2 <= sum(seen.values()):
        return None, {}
    return majority, {h: v for h, v in values.items() if v is not None and v != majority}


def split(values: dict[str, str | None]) -> str:
    """``2 on 6.1.0, 2 on 6.8.0``: how hosts divide over the values they reported, largest share first."""
    seen = Counter(v for v in values.values() if v is not None)
    return ", ".join(f"{n} on {v}" for v, n in sorted(seen.items(), key=lambda item: (-item[1], item[0])))
