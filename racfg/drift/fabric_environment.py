"""Environment drift of a routed fabric: the ISLs, BGP sessions and route tables now against the baseline.

Why its own module: a leaf-spine fault shows on several switches at once (an ISL shut on a spine is
its port down, the leaf's port down, a BGP session down at both ends and paths lost on every leaf),
and a person must see which difference is the cause and which follow from it. So the comparison is
site-wide: each change of a session or route names the change it follows (``rides ISL 1/31, down``,
``via 198.18.254.0 (spine1) lost``) and carries the repair of that cause, not a second guess.

Pure: switch fact documents in (SwitchFacts.to_dict, as the baseline keeps them: ``interfaces``,
``bgp`` BgpFacts, ``routes`` RouteFacts), Changes out; the ISL plan comes from the intended site
(racfg.intent) through ``fabric_view``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from racfg.drift.environment import Change
from racfg.intent import IslEnd, site_intent

if TYPE_CHECKING:
    from racfg.inventory import Cluster

Facts = Mapping[str, Mapping[str, Any]]  # switch name -> its facts document


@dataclass(frozen=True)
class FabricView:
    """What the comparison needs of the plan: each switch's ISL ends (the intended site's own,
    racfg.intent.IslEnd), and the deploy command a repair names (``racfg deploy inventory/site.yaml``)."""

    ends: Mapping[str, tuple[IslEnd, ...]]
    deploy: str = "racfg deploy"

    def isl_ports(self, switch: str) -> set[str]:
        return {end.port for end in self.ends.get(switch, ())}

    def end_to(self, switch: str, address: str | None) -> IslEnd | None:
        """The ISL of ``switch`` whose other end has ``address``: the link a session or a path rides."""
        return next((e for e in self.ends.get(switch, ()) if address and e.peer_address == address), None)

    def redeploy(self, switch: str) -> str:
        return f"{self.deploy} --limit {switch} --tags switch"


def fabric_view(cluster: Cluster, deploy: str) -> FabricView | None:
    """The ISL ends of a routed site from the intended site (racfg.intent); None where it does not route."""
    site = site_intent(cluster)
    if not site.routed:
        return None
    ends = {name: sw.routing.isls for name, sw in site.switches.items() if sw.routing is not None}
    return FabricView(ends, deploy)


# --- ISLs --------------------------------------------------------------------------------------

_ISL_FIELDS = (("admin_up", "admin"), ("oper_up", "oper"), ("mtu", "MTU"), ("speed_gbps", "speed"),
               ("description", "description"))


def _updown(field: str, value: Any) -> str | None:
    if value is None:
        return None
    return ("up" if value else "down") if field in ("admin_up", "oper_up") else str(value)


def _port(facts: Mapping[str, Any] | None, port: str) -> Mapping[str, Any]:
    return ((facts or {}).get("interfaces") or {}).get(port) or {}


def isl_repair(view: FabricView, switch: str, end: IslEnd, now: Facts) -> tuple[str, str]:
    """(what is wrong with this ISL now, its repair). deploy owns an ISL's admin state and MTU (the
    switch play plans ``no shutdown`` on it), so a shut end is repaired by deploying that switch."""
    here, there = _port(now.get(switch), end.port), _port(now.get(end.peer), end.peer_port)
    if here and not here.get("admin_up"):
        return f"ISL {end.port} shut here", view.redeploy(switch)
    if there and not there.get("admin_up"):
        return (f"ISL {end.port} down: its other end {end.peer} {end.peer_port} is shut",
                view.redeploy(end.peer))
    if here and not here.get("oper_up"):
        return (f"ISL {end.port} down with both ends up", f"check the cable {switch} {end.port} - "
                f"{end.peer} {end.peer_port} (racfg validate names the link's fault)")
    return f"ISL {end.port}", view.redeploy(switch)


def isl_changes(view: FabricView, switch: str, before: Facts, now: Facts) -> list[Change]:
    """Each ISL end's admin and oper state, MTU, speed and description, baseline -> now."""
    out = []
    for end in view.ends.get(switch, ()):
        a, b = _port(before.get(switch), end.port), _port(now.get(switch), end.port)
        for field, label in _ISL_FIELDS:
            old, new = _updown(field, a.get(field)), _updown(field, b.get(field))
            if old == new:
                continue
            _, repair = isl_repair(view, switch, end, now)
            out.append(Change(switch, "~", f"ISL {end.port} (to {end.peer} {end.peer_port}) {label}", old, new,
                              f"isls/{end.port}/{field}", repair=repair))
    return out


# --- BGP sessions ------------------------------------------------------------------------------

def _bgp(facts: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return (facts or {}).get("bgp")


def _state(peer: Mapping[str, Any] | None) -> str | None:
    if peer is None:
        return None
    return f"{peer['state']} ({peer['detail']})" if peer.get("detail") else str(peer["state"])


def _established(bgp: Mapping[str, Any] | None, address: str | None) -> bool:
    peer = ((bgp or {}).get("peers") or {}).get(address or "")
    return bool(peer) and peer.get("state") == "Established"


def session_cause(view: FabricView, switch: str, address: str, now: Facts) -> tuple[str, str]:
    """(why the session of ``switch`` with ``address`` is not up now, the repair): the ISL it rides
    is down, the neighbour is gone from this switch's config, or from the other end's."""
    end = view.end_to(switch, address)
    here = (_bgp(now.get(switch)) or {}).get("peers") or {}
    if address not in here:
        return f"neighbour {address} no longer configured here", view.redeploy(switch)
    if end is not None:
        link = _port(now.get(switch), end.port)
        if link and not (link.get("admin_up") and link.get("oper_up")):
            return isl_repair(view, switch, end, now)
        ours = _local_address(view, end, switch)
        theirs = _bgp(now.get(end.peer))
        if theirs is not None and ours is not None and ours not in (theirs.get("peers") or {}):
            return f"{end.peer} has no neighbour {ours} any more", view.redeploy(end.peer)
    return "session down", f"racfg validate names the cause; {view.redeploy(switch)} restores the configured neighbours"


def _local_address(view: FabricView, end: IslEnd, switch: str) -> str | None:
    """This switch's address on the ISL ``end``: the peer address of the other end's matching end."""
    back = next((e for e in view.ends.get(end.peer, ()) if e.peer == switch and e.port == end.peer_port), None)
    return back.peer_address if back else None


def bgp_changes(view: FabricView, switch: str, before: Facts, now: Facts) -> list[Change]:
    """The switch's ASN and router id, and each session (peer, its ASN, its state), baseline -> now.
    A session that is not up names its cause and that cause's repair (session_cause)."""
    a, b = _bgp(before.get(switch)), _bgp(now.get(switch))
    if a is None or b is None:
        return []  # not read (then, or now): nothing to compare
    out = []
    for field, label in (("local_asn", "BGP local AS"), ("router_id", "BGP router id")):
        if a.get(field) != b.get(field):
            out.append(Change(switch, "~", label, _str(a.get(field)), _str(b.get(field)), f"bgp/{field}",
                              repair=view.redeploy(switch)))
    old_peers, new_peers = a.get("peers") or {}, b.get("peers") or {}
    for address in sorted(set(old_peers) | set(new_peers)):
        old, new = old_peers.get(address), new_peers.get(address)
        if _state(old) == _state(new) and (old or {}).get("remote_asn") == (new or {}).get("remote_asn"):
            continue
        peer = old or new or {}
        end = view.end_to(switch, address)
        subject = f"BGP session {address} ({end.peer + ', ' if end else ''}AS {peer.get('remote_asn')})"
        sign = "+" if old is None else "-" if new is None else "~"
        cause, repair = ("", view.redeploy(switch)) if _established(b, address) \
            else session_cause(view, switch, address, now)
        if old is not None and new is not None and old.get("remote_asn") != new.get("remote_asn"):
            out.append(Change(switch, "~", f"BGP session {address} peer AS", _str(old.get("remote_asn")),
                              _str(new.get("remote_asn")), f"bgp/{address}/remote_asn", repair=view.redeploy(switch)))
            if _state(old) == _state(new):
                continue
        out.append(Change(switch, sign, subject, _state(old), _state(new), f"bgp/{address}",
                          note=cause, repair=repair))
    return out


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


# --- routes ------------------------------------------------------------------------------------

def _routes(facts: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    routes = (facts or {}).get("routes")
    return None if routes is None else routes.get("routes") or {}


def _route_text(route: Mapping[str, Any] | None) -> str | None:
    if route is None:
        return None
    paths = len(route.get("next_hops") or ())
    return f"{route.get('protocol')}, {paths} path{'' if paths == 1 else 's'}"


def _gateways(route: Mapping[str, Any] | None) -> list[str]:
    return sorted({h["address"] for h in (route or {}).get("next_hops") or () if h.get("address")})


def route_changes(view: FabricView, switch: str, before: Facts, now: Facts) -> list[Change]:
    """Each prefix of the route table and its number of paths, baseline -> now. A lost path names
    its gateway, the switch behind it and why it is gone (route_cause)."""
    a, b = _routes(before.get(switch)), _routes(now.get(switch))
    if a is None or b is None:
        return []
    out = []
    for prefix in sorted(set(a) | set(b), key=_prefix_order):
        old, new = a.get(prefix), b.get(prefix)
        if _route_text(old) == _route_text(new) and _gateways(old) == _gateways(new):
            continue
        lost = [g for g in _gateways(old) if g not in _gateways(new)]
        gained = [g for g in _gateways(new) if g not in _gateways(old)]
        notes = [f"lost via {g}{_behind(view, switch, g)}" for g in lost] + \
                [f"new via {g}{_behind(view, switch, g)}" for g in gained]
        cause, repair = route_cause(view, switch, prefix, before, now)
        notes += [cause] if cause else []
        sign = "+" if old is None else "-" if new is None else "~"
        out.append(Change(switch, sign, f"route {prefix}", _route_text(old), _route_text(new), f"routes/{prefix}",
                          note="; ".join(notes), repair=repair))
    return out


def _behind(view: FabricView, switch: str, gateway: str) -> str:
    end = view.end_to(switch, gateway)
    return f" from {end.peer}" if end else ""


def route_cause(view: FabricView, switch: str, prefix: str, before: Facts, now: Facts,
                hops: int = 3) -> tuple[str, str]:
    """(why paths of ``prefix`` are gone from ``switch``, the repair). A path lost with its BGP session:
    that session's cause; a path lost while the session is up: the switch behind it lost the route
    itself, so its cause, followed up to ``hops`` switches (a leaf's path through a spine whose ISL
    to the other leaf is shut); a connected ISL subnet gone: its ISL. Else deploying the switch."""
    old, new = (_routes(before.get(switch)) or {}).get(prefix), (_routes(now.get(switch)) or {}).get(prefix)
    for gateway in (g for g in _gateways(old) if g not in _gateways(new)):
        end = view.end_to(switch, gateway)
        if end is None:
            continue
        sessions = _bgp(now.get(switch))
        if sessions is not None and not _established(sessions, gateway):
            return session_cause(view, switch, gateway, now)
        behind = (_routes(now.get(end.peer)) or {}).get(prefix)
        if hops and len(_gateways(behind)) < len(_gateways((_routes(before.get(end.peer)) or {}).get(prefix))):
            cause, repair = route_cause(view, end.peer, prefix, before, now, hops - 1)
            return f"{end.peer} lost it: {cause}" if cause else f"{end.peer} lost it", repair
    network = ipaddress.ip_network(prefix, strict=False)
    for end in view.ends.get(switch, ()):
        if end.peer_address and ipaddress.ip_address(end.peer_address) in network and network.prefixlen >= 30:
            return isl_repair(view, switch, end, now)
    return "", view.redeploy(switch)


def _prefix_order(prefix: str) -> tuple[int, ...]:
    address, _, length = prefix.partition("/")
    try:
        return (*(int(x) for x in address.split(".")), int(length or 32))
    except ValueError:
        return (999,)


# --- the site ----------------------------------------------------------------------------------

def fabric_changes(view: FabricView, before: Facts, now: Facts, switches: list[str] | None = None) -> list[Change]:
    """Every fabric difference of the site (or of ``switches``), per switch: ISLs, sessions, routes.
    A switch missing from either document (not read, or not in the baseline) is left out."""
    out: list[Change] = []
    for switch in sorted(view.ends):
        if (switches is not None and switch not in switches) or switch not in before or switch not in now:
            continue
        out += isl_changes(view, switch, before, now)
        out += bgp_changes(view, switch, before, now)
        out += route_changes(view, switch, before, now)
    return out
