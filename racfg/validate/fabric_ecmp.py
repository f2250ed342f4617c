"""ECMP balance of a routed leaf-spine fabric, judged from the leaves' ISL counters over a measurement:
each spine's share of the cross-leaf bytes, and the spread over each leaf's uplinks, per direction.

Pure, like racfg.validate.fabric_routing (whose intent it reads): counters in, Results out, so smoke
(over its whole run) and the units judge the same way. Check ids: ``fabric/switches/ecmp_share[<spine>]``
and ``<leaf>/switches/ecmp_links``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from racfg.results.model import Result, Status
from racfg.switches.parsers.port_counters import PortCounters
from racfg.switches.ports import port_sort_key
from racfg.validate.fabric_routing import CATEGORY, FabricIntent, LeafIntent

# ECMP: a spine is flagged when its share of the cross-leaf bytes is off its fair share (its links over
# all uplinks) by more than SHARE_TOLERANCE of it: with 2 spines, outside 25%..75% (one spine carrying
# over three times the other's bytes); a dead spine path (0%) is always flagged. Hashing spreads flows,
# not bytes: with few flows an honest fabric is uneven (8 flows on 2 paths split 6/2 or worse 29% of the
# time), so smoke should run 16 flows or more, and only MIN_ECMP_BYTES across the spines is judged.
SHARE_TOLERANCE = 0.5
MIN_ECMP_BYTES = 100 * 2**20
# ECMP within a leaf's uplinks: a link is idle when it moved under IDLE_SHARE of its fair share of one
# direction's bytes. Hashing leaves an honest link that short only when it drew no flow at all, which
# hundreds of flows make negligible; a link that no path or no hash choice reaches moves only BGP and
# LLDP (kilobytes), and a spine that hashes as the leaf did before it idles half its links to each leaf.
IDLE_SHARE = 0.01


Counters = Mapping[str, Mapping[str, PortCounters]]


def _growth(before: Counters, after: Counters, switch: str, port: str) -> PortCounters | None:
    """What a port's counters grew by during the measurement; None where either read lacks it."""
    old, new = before.get(switch, {}).get(port), after.get(switch, {}).get(port)
    return new.minus(old) if old is not None and new is not None else None


def check_ecmp_balance(intent: FabricIntent, before: Counters, after: Counters, tolerance: float = SHARE_TOLERANCE,
                       min_bytes: int = MIN_ECMP_BYTES) -> list[Result]:
    """Each spine's share of the bytes the leaves' uplinks moved (in and out) during a measurement,
    against its fair share (its links over all uplinks); flagged outside fair * (1 -/+ tolerance)."""
    per_spine: dict[str, int] = {}
    links: dict[str, int] = {}
    unread = []
    for leaf in intent.leaves:
        for up in leaf.uplinks:
            grown = _growth(before, after, leaf.name, up.local_port)
            moved = grown.rx_bytes + grown.tx_bytes if grown else None
            links[up.peer_switch] = links.get(up.peer_switch, 0) + 1
            per_spine[up.peer_switch] = per_spine.get(up.peer_switch, 0) + (moved or 0)
            if moved is None:
                unread.append(f"{leaf.name} {up.local_port}")
    total, total_links = sum(per_spine.values()), sum(links.values())
    results = []
    for spine in sorted(per_spine):
        check = f"fabric/{CATEGORY}/ecmp_share[{spine}]"
        if unread or total < min_bytes:
            why = (f"no counters for {', '.join(unread)}" if unread
                   else f"{total} bytes crossed the spines, under the {min_bytes} a share needs")
            results.append(Result(target=spine, check=check, category=CATEGORY, status=Status.SKIP, message=why))
            continue
        fair, share = links[spine] / total_links, per_spine[spine] / total
        low, high = fair * (1 - tolerance), min(fair * (1 + tolerance), 1.0)
        ok = low - 1e-9 <= share <= high + 1e-9
        word = "more" if share > fair else "less"
        results.append(Result(
            target=spine, check=check, category=CATEGORY, status=Status.PASS if ok else Status.FAIL,
            message=(f"{spine} carried {share:.0%} of the cross-leaf bytes (fair share {fair:.0%})" if ok else
                     f"{spine} carried much {word} than its share: {share:.0%} of the cross-leaf bytes, "
                     f"fair {fair:.0%} (flagged outside {low:.0%}..{high:.0%})"),
            expected=f"{fair:.2f} (within {low:.2f}..{high:.2f})", actual=f"{share:.2f}",
            fix=None if ok else "check maximum-paths and the routes on every leaf (route_ecmp names a missing "
                                "path) and the ISLs of the other spines",
            data={"share": share, "fair": fair, "bytes": per_spine[spine]}))
    return results


def _direction_bytes(before: Counters, after: Counters, leaf: LeafIntent) -> dict[str, dict[str, int]]:
    """Per direction ("in": from the spines, chosen by their hash; "out": to them, by the leaf's), the
    bytes each uplink of ``leaf`` moved; uplinks without counters are left out."""
    moved: dict[str, dict[str, int]] = {"in": {}, "out": {}}
    for up in leaf.uplinks:
        grown = _growth(before, after, leaf.name, up.local_port)
        if grown is not None:
            moved["in"][up.local_port], moved["out"][up.local_port] = grown.rx_bytes, grown.tx_bytes
    return moved


def _idle_fix(intent: FabricIntent, leaf: LeafIntent, idle: Mapping[str, list[str]],
              down: frozenset[tuple[str, str]]) -> str:
    """The one cause an idle pattern points at: an uplink down (here, or another leaf's to the same spine,
    which leaves that spine no way on), or whose hash or route left the links out."""
    both = [port for port in idle["in"] if port in idle["out"]]
    if both:
        own = [port for port in both if (leaf.name, port) in down]
        if own:
            return f"{', '.join(own)} on {leaf.name} is down: bring the ISL back (validate's isl checks say why)"
        spines = {u.peer_switch for u in leaf.uplinks if u.local_port in both}
        away = [f"{lf.name} {u.local_port}" for lf in intent.leaves if lf.name != leaf.name for u in lf.uplinks
                if u.peer_switch in spines and (lf.name, u.local_port) in down]
        if away:
            return (f"{', '.join(sorted(spines))} cannot reach the leaf behind {', '.join(away)} (down), so no "
                    f"cross-leaf traffic takes these healthy links: bring {', '.join(away)} back")
        return ("no path uses these links in either direction: their ISL or BGP session is down (validate's isl "
                "and bgp_session checks name which); bring it back")
    if idle["in"]:
        return ("the spines never chose these links towards this leaf while the leaf used them all: the spines "
                "hash each flow as the leaf before them did, so each sees half the hash space and uses half its "
                "links (ECMP polarization); give every switch its own ECMP hash seed")
    return ("this leaf's routes to the other leaves leave these uplinks out: check maximum-paths on the leaf "
            "(validate's route_ecmp names a missing path)")


def check_uplink_spread(intent: FabricIntent, before: Counters, after: Counters, min_bytes: int = MIN_ECMP_BYTES,
                        down: frozenset[tuple[str, str]] = frozenset()) -> list[Result]:
    """ECMP across each leaf's uplinks, per direction: an uplink that moved under IDLE_SHARE of its fair
    share of a direction's bytes while the others carried them is idle, and the direction names whose
    choice left it out (``down``: the (leaf, port) the switches said are down). The spines' shares
    (check_ecmp_balance) cannot see this: a spine using 4 of its 8 links to a leaf still has half the bytes."""
    results = []
    for leaf in intent.leaves:
        moved = _direction_bytes(before, after, leaf)
        if len(moved["in"]) < len(leaf.uplinks) or sum(moved["in"].values()) + sum(moved["out"].values()) < min_bytes:
            results.append(_links_result(leaf, Status.SKIP, f"{leaf.name}: its uplinks' counters were not all read, "
                                         f"or under {min_bytes} bytes crossed them, so their spread was not judged"))
        elif len(leaf.uplinks) > 1:
            results.append(_spread_result(intent, leaf, moved, min_bytes, down))
    return results


def _links_result(leaf: LeafIntent, status: Status, message: str, **fields: Any) -> Result:
    return Result(target=leaf.name, check=f"{leaf.name}/{CATEGORY}/ecmp_links", category=CATEGORY, status=status,
                  message=message, **fields)


def _spread_result(intent: FabricIntent, leaf: LeafIntent, moved: Mapping[str, Mapping[str, int]], min_bytes: int,
                   down: frozenset[tuple[str, str]]) -> Result:
    idle: dict[str, list[str]] = {}
    for way, ports in moved.items():
        total = sum(ports.values())
        idle[way] = [port for port, n in ports.items()
                     if total >= min_bytes // 2 and n < IDLE_SHARE * total / len(ports)]
    named = sorted(set(idle["in"]) | set(idle["out"]), key=port_sort_key)
    expected = f"every uplink over {IDLE_SHARE:.0%} of its fair share, each way"
    data = {"idle": idle, "bytes": moved}
    if not named:
        return _links_result(leaf, Status.PASS, f"{leaf.name}: all {len(leaf.uplinks)} uplinks carried cross-leaf "
                             "bytes both ways", expected=expected, actual=f"all {len(leaf.uplinks)} carried", data=data)
    ways = " and ".join(f"{len(idle[w])} {'from' if w == 'in' else 'to'} the spines" for w in ("in", "out") if idle[w])
    return _links_result(leaf, Status.FAIL, f"{leaf.name}: {len(named)} of its {len(leaf.uplinks)} uplinks moved "
                         f"under {IDLE_SHARE:.0%} of their share of the cross-leaf bytes ({ways}): {', '.join(named)}",
                         expected=expected, actual=f"{len(named)} of {len(leaf.uplinks)} idle: {', '.join(named)}",
                         fix=_idle_fix(intent, leaf, idle, down), data=data)
