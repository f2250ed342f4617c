"""FRR ``vtysh`` text output -> common facts: the routing daemon the lab's switches run, whose
answers the lab's Onyx and EOS CLIs pass on, and the daemon of FRR-based switches (Cumulus, SONiC).

Text, not ``json``: no real FRR JSON was found to test on (../shared/device-outputs/hosts/SOURCES.md),
and the text is what an operator pastes. Shapes handled, as FRR's documentation prints them: the
``Codes:`` legend (FRR 10 adds ``L - local``), ECMP as one ``>*`` line and ``*`` continuation lines,
a recursive next hop followed by the hop it resolves through, ``is directly connected``,
``linkdown``, ``rejected``, a route selected but not in the FIB (``S>`` without ``*``).
"""

from __future__ import annotations

import re

from racfg.switches.facts import BgpFacts, NextHop, Route, RouteFacts
from racfg.switches.parsers.bgp_summary import parse_summary_text
from racfg.switches.parsers.vendor_values import ParseError

PLATFORM = "frr"

# zebra's route type characters (lib/route_types.txt); FRR >= 10 prints L for local (/32 of an address)
PROTOCOLS = {"K": "kernel", "C": "connected", "L": "local", "S": "static", "R": "rip", "O": "ospf",
             "I": "isis", "B": "bgp", "E": "eigrp", "N": "nhrp", "T": "table", "v": "vnc",
             "V": "vnc-direct", "A": "babel", "D": "sharp", "F": "pbr", "f": "openfabric",
             "t": "table-direct"}
_PREFIX = r"(\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}|[0-9a-fA-F:]*:[0-9a-fA-F:]*/\d{1,3})"
_ROUTE_RE = re.compile(rf"^([A-Za-z])(?:\[\d+\])?([>* qrtob]*?)\s+{_PREFIX}\s*(.*)$")
_CONT_RE = re.compile(r"^([>* qrtob]*)\s*(via\s.*|is directly connected.*)$")
_VIA_RE = re.compile(r"via\s+([0-9a-fA-F.:]+)(\s+\(recursive\))?(?:,\s*([^,\s]+))?")
_DIRECT_RE = re.compile(r"is directly connected,\s*([^,\s]+)")


def parse_bgp_summary(raw: str) -> BgpFacts:
    """``show bgp summary`` / ``show ip bgp summary [wide]`` -> BgpFacts (IPv4 unicast)."""
    return parse_summary_text(raw, "show ip bgp summary")


def _hop(text: str) -> tuple[NextHop, bool] | None:
    """(next hop, recursive) of one path's text, None where it names none."""
    via = _VIA_RE.search(text)
    if via:
        recursive = bool(via.group(2))
        return NextHop(via.group(1), None if recursive else via.group(3)), recursive
    direct = _DIRECT_RE.search(text)
    return (NextHop(None, direct.group(1)), False) if direct else None


def _finish(prefix: str, protocol: str, flags: str, hops: list[tuple[NextHop, bool]], text: str) -> Route:
    """A recursive hop is replaced by the hops it resolves through (the ``*`` lines below it)."""
    resolved = [hop for hop, recursive in hops if not recursive]
    chosen = resolved or [hop for hop, _ in hops]
    return Route(prefix=prefix, protocol=protocol, next_hops=tuple(chosen),
                 installed="*" in flags and "rejected" not in text)


def parse_routes(raw: str) -> RouteFacts:
    """``show ip route [PREFIX]`` -> RouteFacts. Where a prefix has several entries, the selected one
    (``>``) is kept: the others are candidates the router does not use."""
    routes: dict[str, Route] = {}
    current: list | None = None  # [prefix, protocol, flags, hops, text]
    saw_route = False

    def close() -> None:
        if current is not None:
            prefix = current[0]
            if prefix not in routes or ">" in current[2]:
                routes[prefix] = _finish(*current)

    for line in raw.splitlines():
        text = line.strip()
        match = _ROUTE_RE.match(text)
        if match and " - " not in text.split(match.group(3))[0]:
            close()
            code, flags, prefix, rest = match.groups()
            hop = _hop(rest)
            current = [prefix, PROTOCOLS.get(code, "unknown"), flags, [hop] if hop else [], text]
            saw_route = True
            continue
        cont = _CONT_RE.match(text)
        if cont and current is not None:
            hop = _hop(cont.group(2))
            if hop:
                current[3].append(hop)
            current[2] += cont.group(1)
            current[4] += " " + text
    close()
    if not saw_route and "Codes:" not in raw and raw.strip():
        raise ParseError(f"show ip route: no route lines and no legend ({raw.strip()[:120]!r})")
    return RouteFacts(routes)
