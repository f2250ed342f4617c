"""The diagnosis rules of a leaf-spine fabric: an inter-switch link's fault, found from the switch
facts (racfg.validate.fabric_routing's checks), is the cause of what it breaks further on: the other
end's state, the BGP sessions over it, the leaves' missing equal-cost paths through its spine, the
leaf's oversubscription with the uplink gone, and the cross-leaf host paths (jumbo matrix) whose
flows hashed onto it. So a spine's fault is never filed against the hosts whose pings cross it.

The causal order continues the hosts' (racfg.validate.diagnosis runs these after its own): ISL admin
state -> ISL link -> ISL cabling (LLDP) -> ISL MTU -> BGP session. The rules take racfg.validate.
diagnosis's run (``open``/``take``/``failing``) as they find it; they do not import it (it imports them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from racfg.results.model import Result, Status
from racfg.results.problems import Problem
from racfg.results.wording import headline

if TYPE_CHECKING:
    from racfg.intent import SiteIntent

_SWAPPED = re.compile(r"^uplinks swapped at (\S+) (\S+) and (\S+):")


class _Run(Protocol):
    failing: dict[str, Result]

    def open(self, check: str) -> Result | None: ...

    def take(self, kind: str, where: str, root: Result, cause: str, explains: list[str]) -> Problem: ...


@dataclass(frozen=True)
class IslPlan:
    """One ISL: the leaf's port and address, the spine's port and address (as render plans them)."""

    leaf: str
    leaf_port: str
    spine: str
    spine_port: str
    leaf_ip: str
    spine_ip: str

    def ends(self) -> tuple[tuple[str, str, str, str], ...]:
        """(switch, port, peer, peer port) of both ends, spine first (a spine's fault is its own)."""
        return ((self.spine, self.spine_port, self.leaf, self.leaf_port),
                (self.leaf, self.leaf_port, self.spine, self.spine_port))

    def name(self) -> str:
        return f"{self.leaf} {self.leaf_port} <-> {self.spine} {self.spine_port}"


def plan_isls(site: SiteIntent) -> list[IslPlan]:
    """The ISLs of the intended site's leaves (racfg.intent; none on a site that does not route)."""
    plans = []
    for name, switch in sorted(site.switches.items()):
        routing = switch.routing
        if routing is None or routing.role != "leaf":
            continue
        plans += [IslPlan(name, i.port, i.peer, i.peer_port, i.address.split("/")[0], str(i.peer_address))
                  for i in routing.isls]
    return plans


def _key(switch: str, func: str, label: str = "") -> str:
    return f"{switch}/switches/{func}" + (f"[{label}]" if label else "")


def _both(isl: IslPlan, *funcs: str) -> list[str]:
    return [_key(sw, f, port) for sw, port, _, _ in isl.ends() for f in funcs]


def _unsaved(run: _Run, *switches: str) -> list[str]:
    return [k for k in (_key(sw, "config_saved") for sw in switches) if run.open(k) is not None]


def _downstream(run: _Run, isl: IslPlan) -> list[str]:
    """What a fault on ``isl`` breaks beyond its own ends: the sessions over it, every leaf's paths
    through its spine, the leaves' prefixes, the leaf's oversubscription, the cross-leaf host paths."""
    sessions = [_key(isl.leaf, "bgp_session", isl.spine_ip), _key(isl.spine, "bgp_session", isl.leaf_ip)]
    via_spine = [c for c, r in run.failing.items() if "/switches/route_ecmp[" in c and isl.spine in (r.actual or "")]
    prefixes = [c for c in run.failing if c.endswith("/switches/bgp_prefixes")]
    paths = [c for c, r in run.failing.items() if "/fabric/jumbo_frames[" in c and r.status is Status.FAIL]
    return [*sessions, *via_spine, *prefixes, _key(isl.leaf, "oversubscription"), *paths,
            *_unsaved(run, isl.leaf, isl.spine)]


def isl_admin(run: _Run, isls: list[IslPlan]) -> Iterator[Problem]:
    for isl in isls:
        for switch, port, peer, peer_port in isl.ends():
            root = run.root(_key(switch, "isl_admin_up", port))
            if root is None:
                continue
            unsaved = " (not saved)" if _unsaved(run, switch) else ""
            cause = f"{switch} {port} (ISL to {peer} {peer_port}) shut down in the running config{unsaved}"
            yield run.take("isl_admin", f"{switch}:{port}", root, cause,
                           [*_both(isl, "isl_oper_up", "isl_lldp", "isl_speed"), *_downstream(run, isl)])


def isl_carrier(run: _Run, isls: list[IslPlan]) -> Iterator[Problem]:
    for isl in isls:
        root = next((r for k in _both(isl, "isl_oper_up") if (r := run.root(k)) is not None), None)
        if root is not None:
            yield run.take("isl_carrier", f"{isl.leaf}:{isl.leaf_port}", root,
                           f"no link on the ISL {isl.name()} (both ends admin up)",
                           [*_both(isl, "isl_oper_up", "isl_lldp", "isl_speed"), *_downstream(run, isl)])


def isl_cabling(run: _Run, isls: list[IslPlan]) -> Iterator[Problem]:
    """A swapped pair of uplinks is one problem (the four ends it shows on, the sessions and paths it
    breaks); any other wrong neighbour is one per ISL."""
    for isl in isls:
        root = next((r for k in _both(isl, "isl_lldp") if (r := run.root(k)) is not None), None)
        if root is None:
            continue
        swapped = _SWAPPED.match(root.message or "")
        if swapped is None:
            yield run.take("isl_cabling", f"{isl.leaf}:{isl.leaf_port}", root, f"ISL {isl.name()}: {headline(root)}",
                           [*_both(isl, "isl_lldp"), *_downstream(run, isl)])
            continue
        switch, a, b = swapped.groups()
        involved = [i for i in isls if any((sw, port) in ((switch, a), (switch, b)) for sw, port, _, _ in i.ends())]
        explains = [c for i in involved for c in (*_both(i, "isl_lldp"), *_downstream(run, i))]
        yield run.take("isl_cabling", f"{switch}:{a}+{b}", root,
                       f"uplinks swapped at {switch}: {a} and {b} are cabled to each other's spine port", explains)


def isl_mtu(run: _Run, isls: list[IslPlan]) -> Iterator[Problem]:
    for isl in isls:
        wrong = [r for k in _both(isl, "isl_mtu") if (r := run.root(k)) is not None]
        if not wrong:
            continue
        ends = " and ".join(f"{r.target} MTU {r.actual}" for r in wrong)
        root = wrong[0]
        fix = root.fix
        if len(wrong) == 2 and fix:
            fix = fix.replace(f"--limit {root.target} ", f"--limit {wrong[0].target},{wrong[1].target} ")
        problem = run.take("isl_mtu", f"{isl.leaf}:{isl.leaf_port}", root,
                           f"ISL {isl.name()} at {ends}, the inventory says {root.expected}",
                           [*_both(isl, "isl_mtu"), *_downstream(run, isl)])
        yield replace(problem, fix=fix)


def bgp_session(run: _Run, isls: list[IslPlan]) -> Iterator[Problem]:
    """A session that is not up over a healthy ISL: the side whose config lacks the neighbour is the
    cause (its peer sees the session down); otherwise the first side found."""
    for isl in isls:
        sides = [run.root(_key(isl.leaf, "bgp_session", isl.spine_ip)),
                 run.root(_key(isl.spine, "bgp_session", isl.leaf_ip))]
        found = [r for r in sides if r is not None]
        if not found:
            continue
        root = next((r for r in found if r.actual == "no such neighbor"), found[0])
        cause = (f"{root.target} has no BGP neighbor for the ISL {isl.name()} in its running config"
                 if root.actual == "no such neighbor" else f"BGP over the ISL {isl.name()}: {headline(root)}")
        yield run.take("bgp", f"{root.target}:{isl.spine_ip if root.target == isl.leaf else isl.leaf_ip}", root,
                       cause, _downstream(run, isl))
