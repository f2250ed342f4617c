"""The routed fabric's checks in a validate run: the ISLs (both ends), BGP, routes and each leaf's
oversubscription of a leaf-spine site, judged by racfg.validate.fabric_routing on the switch facts
validate has already read (one read per switch: ports, LLDP, BGP and routes in one session).

Why beside the validators rather than in validators/: these checks are one judgement over the whole
fabric (a swapped pair needs both uplinks' ends, a route's paths need every spine's ISLs), not one
pytest item per subject; they are derived from the same inventory and filed in the same results,
and --limit, --check and --category select them as they select the validators' checks.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from racfg.results.model import Result, Status
from racfg.switches.facts import BgpFacts, RouteFacts, SwitchFacts
from racfg.validate.fabric_routing import (
    CATEGORY,
    FabricIntent,
    check_bgp_sessions,
    check_isls,
    check_oversubscription,
    check_routes,
    intent_from_cluster,
)

if TYPE_CHECKING:
    from racfg.inventory.cluster import Cluster


def _tables(facts: Mapping[str, SwitchFacts]) -> tuple[dict[str, BgpFacts], dict[str, RouteFacts]]:
    """Each read switch's BGP summary and routes. A switch whose running config has no BGP process
    has no sessions and no BGP routes (the checks then fail it with the deploy that configures BGP);
    one whose tables could not be read is left out (the checks say so: an error, never a pass)."""
    bgp, routes = {}, {}
    for name, have in facts.items():
        if have.routing_error:
            continue
        if not have.routes_traffic:
            bgp[name], routes[name] = BgpFacts(None, None, {}), RouteFacts({})
            continue
        if have.bgp is not None:
            bgp[name] = have.bgp
        if have.routes is not None:
            routes[name] = have.routes
    return bgp, routes


def judge_fabric(intent: FabricIntent, facts: Mapping[str, SwitchFacts],
                 errors: Mapping[str, str] | None = None) -> list[Result]:
    """Every fabric check of ``intent`` on ``facts`` (name -> SwitchFacts of the switches read);
    ``errors``: why a switch's facts or routing tables are missing, put in its errors' messages."""
    bgp, routes = _tables(facts)
    results = (check_isls(intent, facts) + check_bgp_sessions(intent, bgp) + check_routes(intent, routes)
               + check_oversubscription(intent, facts))
    why = dict(errors or {}) | {n: f.routing_error for n, f in facts.items() if f.routing_error}
    return [replace(r, message=f"{r.message}: {why[r.target]}") if r.target in why and r.status is Status.ERROR
            else r for r in results]


def fabric_results(cluster: Cluster, read: Callable[[], Mapping[str, Any]], selected: list[str],
                   checks: list[str], categories: list[str]) -> list[Result]:
    """The fabric checks of a validate run; none on a site that does not route. ``read`` gives
    name -> SwitchFacts or the exception that kept it from being read (validate's one read);
    ``selected``: the switches --limit kept (results are filed under them only);
    ``checks``/``categories``: the run's filters."""
    if not selected or (categories and CATEGORY not in categories):
        return []
    intent = intent_from_cluster(cluster, deploy=f"racfg deploy {cluster.display}")
    if intent is None:
        return []
    switch_facts = read()
    facts = {n: f for n, f in switch_facts.items() if isinstance(f, SwitchFacts)}
    errors = {n: str(f) for n, f in switch_facts.items() if isinstance(f, Exception)}
    return [r for r in judge_fabric(intent, facts, errors) if r.target in selected
            and (not checks or any(fnmatch.fnmatch(r.check, g) for g in checks))]
