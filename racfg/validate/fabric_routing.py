"""Checks of a routed leaf-spine fabric, from its routing intent and the switches' facts: the ISLs
(both ends), the BGP sessions, the prefixes and ECMP paths each leaf has, the spines' share of
and each leaf's oversubscription with the uplinks it has left (the spread of cross-leaf traffic over
the spines and uplinks, from counters: racfg.validate.fabric_ecmp).

Pure: facts in (racfg.switches.facts, as every platform's parsers produce them), Results out, so
validate, drift and smoke call the same judgements and units test them on tables. The intent is the
small dataclasses below, a view of the intended site (racfg.intent, through ``fabric_intent``), so a
test can write one as a table.

Check ids follow validate's ``<switch>/switches/<check>[<param>]`` (``leaf1/switches/isl_mtu[1/31]``,
``leaf1/switches/bgp_session[172.16.0.0]``); the ECMP share is ``fabric/switches/ecmp_share[<spine>]``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from racfg.intent import SiteIntent, site_intent
from racfg.results.model import Result, Status, expected_actual
from racfg.switches.facts import BgpFacts, Route, RouteFacts, SwitchFacts
from racfg.switches.ports import canonical_port

if TYPE_CHECKING:
    from racfg.inventory.cluster import Cluster

CATEGORY = "switches"


@dataclass(frozen=True)
class Uplink:
    """One ISL seen from its leaf: the leaf's port and address, the spine's name, port, address, ASN."""

    local_port: str  # canonical port name (racfg.switches.ports)
    peer_switch: str
    peer_port: str
    local_ip: str  # the leaf's address on the /31, without prefix length
    peer_ip: str
    peer_asn: int
    mtu: int = 9216
    speed_gbps: float = 100.0


@dataclass(frozen=True)
class LeafIntent:
    """What one leaf should be: its ASN, the host subnets it routes, its uplinks, and what its hosts
    can send in all (the sum of its host ports' line rates, for the oversubscription judgement)."""

    name: str
    asn: int
    subnets: tuple[str, ...]
    uplinks: tuple[Uplink, ...]
    host_gbps: float = 0.0


@dataclass(frozen=True)
class FabricIntent:
    """The routed fabric: its leaves, the spines' ASN, the site's oversubscription ceiling, and the
    deploy command a configuration fix names (``racfg deploy inventory/site.yaml``)."""

    leaves: tuple[LeafIntent, ...]
    spine_asn: int
    max_oversubscription: float = 1.0
    deploy: str = "racfg deploy"

    @property
    def spines(self) -> list[str]:
        return sorted({u.peer_switch for leaf in self.leaves for u in leaf.uplinks})

    def switch_fix(self, switch: str) -> str:
        return f"{self.deploy} --limit {switch} --tags switch"


def _result(target: str, name: str, ok: bool, expected: object, actual: object, fix: str | None,
            message: str = "") -> Result:
    return Result(target=target, check=f"{target}/{CATEGORY}/{name}", category=CATEGORY,
                  status=Status.PASS if ok else Status.FAIL, message=message or expected_actual(expected, actual),
                  expected=str(expected), actual=str(actual), fix=None if ok else fix)


def _unread(target: str, name: str, what: str) -> Result:
    return _note(target, name, Status.ERROR, f"{target}: {what} could not be read, so this was not checked")


def _note(target: str, name: str, status: Status, message: str) -> Result:
    return Result(target=target, check=f"{target}/{CATEGORY}/{name}", category=CATEGORY, status=status,
                  message=message)


# --- ISLs -------------------------------------------------------------------------------------------

def _same_port(announced: str, planned: str) -> bool:
    """A neighbour announces its port as it names it (``Eth1/31``, ``Ethernet31``, ``Et31``)."""
    return planned in (announced, canonical_port("onyx", announced), canonical_port("eos", announced))


def _same_system(announced: str, planned: str) -> bool:
    return announced.split(".")[0] == planned  # a switch may announce its FQDN


def _isl_ends(intent: FabricIntent) -> list[tuple[str, str, str, str, Uplink]]:
    """Every ISL end: (switch, port, the planned neighbour, its port, the uplink it belongs to)."""
    ends = []
    for leaf in intent.leaves:
        for up in leaf.uplinks:
            ends.append((leaf.name, up.local_port, up.peer_switch, up.peer_port, up))
            ends.append((up.peer_switch, up.peer_port, leaf.name, up.local_port, up))
    return ends


def _hears(facts: Mapping[str, SwitchFacts], end: tuple[str, str], plan: tuple[str, str]) -> bool:
    have = facts.get(end[0])
    heard = have.lldp.get(end[1]) if have else None
    return heard is not None and _same_system(heard.system_name, plan[0]) and _same_port(heard.port, plan[1])


def _swapped_pair(end: tuple[str, str], plan: Mapping[tuple[str, str], tuple[str, str]],
                  facts: Mapping[str, SwitchFacts], leaves: set[str]) -> tuple[str, str, str] | None:
    """(switch, port, port) of the swapped pair that explains ``end``'s neighbour: another end that
    hears ``end``'s planned neighbour while ``end`` hears its. Crossing two plugs at one end or at
    the other gives the same wiring, so the pair is named at the leaf (its uplinks) wherever both
    ends allow it, and every end the swap shows on names the same pair and the same fix."""
    for other, other_plan in plan.items():
        if other == end or not (_hears(facts, end, other_plan) and _hears(facts, other, plan[end])):
            continue
        near = (end[0], *sorted((end[1], other[1]))) if other[0] == end[0] else None
        far = (plan[end][0], *sorted((plan[end][1], other_plan[1]))) if other_plan[0] == plan[end][0] else None
        pair = near if near and (near[0] in leaves or far is None) else far
        if pair:
            return pair[0], pair[1], pair[2]
    return None


def _lldp_result(end: tuple[str, str], plan: Mapping[tuple[str, str], tuple[str, str]],
                 facts: Mapping[str, SwitchFacts], leaves: set[str]) -> Result:
    """LLDP against the plan; a swapped pair of uplinks is named as such on each end it shows on
    (four: both uplinks' ends), with the one fix (swap them back)."""
    switch, port = end
    name, want = f"isl_lldp[{port}]", " ".join(plan[end])
    heard = facts[switch].lldp.get(port)
    if heard is None:
        return _result(switch, name, False, want, "no LLDP neighbour", f"check the cable {switch} {port} <-> {want}")
    actual = f"{heard.system_name} {heard.port}"
    if _hears(facts, end, plan[end]):
        return _result(switch, name, True, want, actual, None)
    pair = _swapped_pair(end, plan, facts, leaves)
    if pair is None:
        return _result(switch, name, False, want, actual, f"recable {switch} {port} to {want}")
    where = f"{pair[0]} {pair[1]} and {pair[2]}"
    return _result(switch, name, False, want, actual, f"swap the cables at {where} back",
                   message=f"uplinks swapped at {where}: {expected_actual(want, actual)}")


def check_isls(intent: FabricIntent, facts: Mapping[str, SwitchFacts]) -> list[Result]:
    """Both ends of every ISL: LLDP neighbour against the plan (a swapped pair named as such), admin
    and oper up, MTU, speed. A switch whose facts are missing gives errors, never passes."""
    ends = _isl_ends(intent)
    plan = {(sw, port): (peer, peer_port) for sw, port, peer, peer_port, _ in ends}
    leaves = {leaf.name for leaf in intent.leaves}
    results: list[Result] = []
    for switch, port, peer, peer_port, up in ends:
        have = facts.get(switch)
        checks = ("isl_lldp", "isl_admin_up", "isl_oper_up", "isl_mtu", "isl_speed")
        if have is None:
            results += [_unread(switch, f"{c}[{port}]", "its facts") for c in checks]
            continue
        results.append(_lldp_result((switch, port), plan, facts, leaves))
        state = have.interfaces.get(port)
        if state is None:
            results += [_result(switch, f"{c}[{port}]", False, f"port {port}", "no such port",
                                f"check the port names of {switch} in the inventory") for c in checks[1:]]
            continue
        fix = intent.switch_fix(switch)
        results.append(_result(switch, f"isl_admin_up[{port}]", state.admin_up, "up",
                               "up" if state.admin_up else "shutdown", fix))
        results.append(_result(switch, f"isl_oper_up[{port}]", state.oper_up, "up", "up" if state.oper_up else "down",
                               f"check the cable {switch} {port} <-> {peer} {peer_port}" if state.admin_up else fix))
        results.append(_result(switch, f"isl_mtu[{port}]", state.mtu == up.mtu, up.mtu, state.mtu, fix))
        speed = state.speed_gbps
        if speed is None:  # vEOS reports bandwidth 0 on some ports: unknown, not wrong
            results.append(_note(switch, f"isl_speed[{port}]", Status.SKIP, f"{switch} reports no speed for {port}"))
        else:
            results.append(_result(switch, f"isl_speed[{port}]", abs(speed - up.speed_gbps) < 0.5,
                                   f"{up.speed_gbps:g}G", f"{speed:g}G", fix))
    return results


# --- BGP and routes ---------------------------------------------------------------------------------

def _sessions(intent: FabricIntent) -> dict[str, list[tuple[str, int, str]]]:
    """switch -> [(peer address, peer ASN, peer name)], leaves' and spines' sides alike."""
    out: dict[str, list[tuple[str, int, str]]] = {}
    for leaf in intent.leaves:
        for up in leaf.uplinks:
            out.setdefault(leaf.name, []).append((up.peer_ip, up.peer_asn, up.peer_switch))
            out.setdefault(up.peer_switch, []).append((up.local_ip, leaf.asn, leaf.name))
    return out


def _session(intent: FabricIntent, switch: str, facts: BgpFacts, address: str, asn: int, peer: str) -> Result:
    name, want = f"bgp_session[{address}]", f"Established, AS {asn}"
    have = facts.peers.get(address)
    if have is None:
        return _result(switch, name, False, want, "no such neighbor", intent.switch_fix(switch),
                       f"{switch} has no BGP neighbor {address} ({peer}): {expected_actual(want, 'not configured')}")
    actual = f"{have.state}{f' ({have.detail})' if have.detail else ''}, AS {have.remote_asn}"
    ok = have.established and have.remote_asn == asn and have.detail != "Policy"
    fix = (intent.switch_fix(switch) if have.remote_asn != asn or have.detail
           else f"check the ISL and BGP on {peer} (racfg validate names the ISL if it is down)")
    return _result(switch, name, ok, want, actual, fix)


def check_bgp_sessions(intent: FabricIntent, bgp: Mapping[str, BgpFacts]) -> list[Result]:
    """Each switch's own ASN, and every expected session from both ends: configured, Established,
    with the planned peer ASN (FRR's ``(Policy)``, up but every prefix held back, is a failure)."""
    own = {leaf.name: leaf.asn for leaf in intent.leaves} | dict.fromkeys(intent.spines, intent.spine_asn)
    results: list[Result] = []
    for switch, peers in _sessions(intent).items():
        facts = bgp.get(switch)
        if facts is None:
            results += [_unread(switch, n, "its BGP summary")
                        for n in ["bgp_local_asn", *(f"bgp_session[{address}]" for address, _, _ in peers)]]
            continue
        results.append(_note(switch, "bgp_local_asn", Status.SKIP, f"{switch} has no BGP neighbour, so no AS shown")
                       if facts.local_asn is None else  # FRR then prints no header; the sessions below say why
                       _result(switch, "bgp_local_asn", facts.local_asn == own[switch], own[switch],
                               facts.local_asn, intent.switch_fix(switch)))
        results += [_session(intent, switch, facts, address, asn, peer) for address, asn, peer in peers]
    return results


def _best_route(routes: RouteFacts, subnet: str) -> Route | None:
    """The longest installed BGP route that covers ``subnet`` (a leaf may receive a summary)."""
    net = ipaddress.ip_network(subnet)
    best: Route | None = None
    for prefix, route in routes.of_protocol("bgp").items():
        candidate = ipaddress.ip_network(prefix)
        if (route.installed and candidate.version == net.version and net.subnet_of(candidate)  # type: ignore[arg-type]
                and (best is None or candidate.prefixlen > ipaddress.ip_network(best.prefix).prefixlen)):
            best = route
    return best


def _ecmp_result(leaf: LeafIntent, subnet: str, route: Route | None) -> Result:
    by_hop = {u.peer_ip: u.peer_switch for u in leaf.uplinks}
    hops = {h.address for h in route.next_hops} if route else set()
    lost = sorted(set(by_hop) - hops)
    want = f"{len(by_hop)} paths via {', '.join(sorted(set(by_hop.values())))}"
    have = f"{len(hops & set(by_hop))} paths"
    if lost:
        have += f", none via {', '.join(by_hop[h] for h in lost)} ({', '.join(lost)})"
    spines = ", ".join(sorted({by_hop[h] for h in lost}))
    return _result(leaf.name, f"route_ecmp[{subnet}]", not lost, want, have,
                   f"check the ISLs and BGP sessions of {leaf.name} to {spines} and maximum-paths on {leaf.name}")


def check_routes(intent: FabricIntent, routes: Mapping[str, RouteFacts]) -> list[Result]:
    """Per leaf: BGP brought every other leaf's subnets (``bgp_prefixes``), and each over one
    equal-cost path per uplink, through every spine (``route_ecmp[<subnet>]``)."""
    results: list[Result] = []
    for leaf in intent.leaves:
        others = [s for other in intent.leaves if other.name != leaf.name for s in other.subnets]
        table = routes.get(leaf.name)
        if table is None:
            results.append(_unread(leaf.name, "bgp_prefixes", "its routing table"))
            results += [_unread(leaf.name, f"route_ecmp[{s}]", "its routing table") for s in others]
            continue
        best = {s: _best_route(table, s) for s in others}
        missing = [s for s, route in best.items() if route is None]
        results.append(_result(leaf.name, "bgp_prefixes", not missing, f"{len(others)} subnets of the other leaves",
                               f"missing {', '.join(missing)}" if missing else f"all {len(others)}",
                               f"check the BGP sessions of {leaf.name} and the networks the other leaves announce"))
        results += [_ecmp_result(leaf, s, route) for s, route in best.items()]
    return results


# --- load: oversubscription ------------------------------------------------------------------------

def check_oversubscription(intent: FabricIntent, facts: Mapping[str, SwitchFacts],
                           rates: Mapping[tuple[str, str], float] | None = None) -> list[Result]:
    """Per leaf, what its hosts can send over the uplink capacity it has now: an uplink that is down
    counts 0, ``rates`` (leaf, port) -> Gb/s overrides a port's line rate where smoke measured or
    shaped it. Above ``max_oversubscription`` the leaf's uplinks are the fabric's bottleneck."""
    results = []
    for leaf in intent.leaves:
        have = facts.get(leaf.name)
        if have is None:
            results.append(_unread(leaf.name, "oversubscription", "its facts"))
            continue
        down = [u.local_port for u in leaf.uplinks
                if not (have.interfaces.get(u.local_port) and have.interfaces[u.local_port].oper_up)]
        capacity = sum((rates or {}).get((leaf.name, u.local_port), u.speed_gbps)
                       for u in leaf.uplinks if u.local_port not in down)
        ratio = leaf.host_gbps / capacity if capacity else float("inf")
        ok = ratio <= intent.max_oversubscription + 1e-9
        lost = f" with {', '.join(down)} down" if down else ""
        results.append(Result(
            target=leaf.name, check=f"{leaf.name}/{CATEGORY}/oversubscription", category=CATEGORY,
            status=Status.PASS if ok else Status.FAIL,
            message=(f"{leaf.name}: hosts {leaf.host_gbps:g} Gb/s over uplinks {capacity:g} Gb/s{lost}: "
                     f"{ratio:.2f}:1, {'within' if ok else 'above'} the site's {intent.max_oversubscription:g}:1"),
            expected=f"<= {intent.max_oversubscription:g}", actual=f"{ratio:.2f}",
            fix=None if ok else (f"bring {leaf.name} {', '.join(down)} back up" if down
                                 else f"add uplinks to {leaf.name} or move hosts to another leaf"),
            data={"ratio": ratio, "host_gbps": leaf.host_gbps, "uplink_gbps": capacity, "down": down}))
    return results


# --- the view of the intended site -------------------------------------------------------------------

def intent_from_cluster(cluster: Cluster, deploy: str = "racfg deploy") -> FabricIntent | None:
    """The intent of a loaded site; None where it does not route (a single switch, InfiniBand)."""
    return fabric_intent(site_intent(cluster), deploy)


def fabric_intent(site: SiteIntent, deploy: str = "racfg deploy") -> FabricIntent | None:
    """The routed fabric of the intended site (racfg.intent) as these checks read it: each leaf's ASN,
    subnets, uplinks and what its hosts can send. None where the site does not route."""
    if not site.routed:
        return None
    leaves, spine_asn = [], 0
    for name, switch in sorted(site.switches.items()):
        routing = switch.routing
        if routing is None:
            continue
        if routing.role == "spine":
            spine_asn = routing.asn
            continue
        uplinks = tuple(Uplink(local_port=i.port, peer_switch=i.peer, peer_port=i.peer_port,
                               local_ip=i.address.split("/")[0], peer_ip=str(i.peer_address), peer_asn=i.peer_asn,
                               mtu=i.mtu, speed_gbps=float(i.speed_gbps)) for i in routing.isls)
        spine_asn = spine_asn or int(routing.spine_asn or 0)
        leaves.append(LeafIntent(name=name, asn=routing.asn, subnets=tuple(str(s.network) for s in routing.subnets),
                                 uplinks=uplinks, host_gbps=float(site.host_gbps.get(name, 0.0))))
    return FabricIntent(tuple(leaves), spine_asn, site.max_oversubscription, deploy)
