"""Why a figure dropped: what else drifted on the same host, NIC, switch port or path.

A drop alone says where to look, not what to fix. The other three layers of the same drift run
(config, state, environment) already name what changed on each host and switch, each with its
fix (and the measurement's own verdicts what it saw under load: a port's discards); a change on
the host, NIC or switch port a figure was measured through is its likely cause, and its fix is
the drop's. Pure: the item's place comes from the inventory, the candidates are the
other layers' results.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from racfg.inventory.cluster import Cluster, ClusterHost
from racfg.results import Result, Status

# the findings a drop is tied to, in this order: the read-only layers, then what the measurement's own
# verdicts said (a port's discards under load, a link below the best of its kind)
ORDER = {"config": 0, "state": 1, "environment": 2}
# what, on a host, moves a figure (a port speed, MTU, a tuning sysctl, a route, a firmware or driver):
# named before the other changes of the same host
PERFORMANCE_WORDS = re.compile(r"speed|mtu|sysctl|tuning|rmem|wmem|route|firmware|ofed|mlnx|kernel|driver|"
                               r"errors|discards|pfc|ring|irq|governor|bgp|isl", re.IGNORECASE)
SHOWN = 3  # causes listed per drop; the rest are counted


@dataclass(frozen=True)
class Place:
    """Where an item was measured: its hosts, their NICs and the switch ports behind them; ``site``
    when it crossed the whole site (a scaling step, a multi-node figure)."""

    hosts: frozenset[str]
    nics: frozenset[tuple[str, str]]
    ports: frozenset[tuple[str, str]]
    site: bool = False

    def text(self) -> str:
        if self.site:
            return "the site's hosts and switches"
        if len(self.hosts) > 2:
            return f"its {len(self.hosts)} hosts ({', '.join(sorted(self.hosts)[:3])} ...), their NICs and switch ports"
        nics = [f"NIC {host}:{nic}" for host, nic in sorted(self.nics)]
        ports = [f"{switch} port {port}" for switch, port in sorted(self.ports)]
        return ", ".join([*sorted(self.hosts), *nics, *ports]) or "its place"


def place_of(item: Mapping[str, Any], cluster: Cluster) -> Place:
    """The item's place: the host its key ends in (a per-node figure: ``storage.drive.seq.n2.stor01``),
    else its recorded target (``dgx01:data0``, ``stor01``), else the hosts it records (a scaling
    step's clients); the whole site when none names a host."""
    hosts = {h.name: h for h in cluster.hosts}
    target = str(item.get("target") or "")
    last = str(item.get("key", "")).rsplit(".", 1)[-1]
    for name, nic in (last.partition(":")[::2], target.partition(":")[::2]):
        if name in hosts:
            return _place([hosts[name]], nic)
    members = [hosts[name] for name in item.get("hosts") or [] if name in hosts]
    if members:
        return _place(members, "")
    return Place(frozenset(), frozenset(), frozenset(), site=True)


def _place(members: list[ClusterHost], nic: str) -> Place:
    """Hosts with their NICs (only ``nic`` when given) and the switch ports behind them."""
    nics = [(h, n) for h in members for n in h.nics if not nic or n.name == nic]
    return Place(frozenset(h.name for h in members), frozenset((h.name, n.name) for h, n in nics),
                 frozenset((n.switch, n.port) for _, n in nics if n.port))


def _related(place: Place, result: Result) -> int | None:
    """How closely ``result`` touches ``place`` (0 closest; None: not at all)."""
    words = f"{result.check} {result.message}"
    if place.site:
        return 1 if PERFORMANCE_WORDS.search(words) else 2
    if result.target in place.hosts:
        if any(re.search(rf"\b{re.escape(nic)}\b", words) for host, nic in place.nics if host == result.target):
            return 0
        return 1 if PERFORMANCE_WORDS.search(words) else 2
    for switch, port in place.ports:
        if result.target == f"{switch}:{port}":  # smoke's counter verdicts name the port itself
            return 0
        if result.target == switch and re.search(rf"(?<![\w/]){re.escape(port)}(?![\w/])", words):
            return 0
    return None


def likely_causes(place: Place, others: Iterable[Result]) -> list[Result]:
    """The other layers' differences on the item's place, the closest first (its NIC or port, then
    what moves a figure on its host, then the rest)."""
    found = []
    for result in others:
        if result.status is not Status.FAIL or result.category == "performance":
            continue
        rank = _related(place, result)
        if rank is not None:
            found.append((rank, ORDER.get(result.category, len(ORDER)), result.check, result))
    return [r for *_, r in sorted(found, key=lambda t: t[:3])]


def cause_text(place: Place, causes: list[Result], layers_ran: bool) -> tuple[str, str | None]:
    """The sentence a drop carries about its cause, and the fix it takes from the cause's layer."""
    if not layers_ran:
        return ("no other layer was compared in this run (racfg drift --performance runs all four), so no "
                "cause is named"), None
    if not causes:
        return f"nothing else drifted on {place.text()}: a drop no other layer explains", None
    first = causes[0]
    more = len(causes) - 1
    extra = f" (and {more} other difference{'s' if more > 1 else ''} there)" if more else ""
    return f"likely cause [{first.category}]: {first.message}{extra}", first.fix


def causes_data(causes: list[Result]) -> list[dict[str, Any]]:
    return [{"layer": r.category, "check": r.check, "target": r.target, "message": r.message, "fix": r.fix}
            for r in causes[:SHOWN]]
