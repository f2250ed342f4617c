"""What the BGP and route parsers of several platforms share: ASNs, session states, up/down clocks,
and the Quagga-style summary table (``Neighbor V AS MsgRcvd ... Up/Down State/PfxRcd``) that FRR
prints and Onyx's BGP follows.

Real oddities handled: asdot ASNs (EOS ``"65002.2048"``), states as vendors spell them
(``ESTABLISHED``, ``Estab``, ``Idle (Admin)``), FRR's State/PfxRcd column that holds a prefix count
once a session is up and ``(Policy)`` when eBGP has no policy yet, peers named ``host(ifname)``,
the optional ``LocalAS`` column of ``summary wide``, text indented as a whole (manual excerpts).
"""

from __future__ import annotations

import re

from racfg.switches.facts import BGP_STATES, BgpFacts, BgpPeer
from racfg.switches.parsers.vendor_values import ParseError

_STATES = {s.lower(): s for s in BGP_STATES} | {"estab": "Established", "open_sent": "OpenSent",
                                                "open_confirm": "OpenConfirm"}
_CLOCK_RE = re.compile(r"^(?:(\d+):)?(\d+):(\d+):(\d+)$")
_UNITS_RE = re.compile(r"(\d+)([wdhms])")
_UNIT_S = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_ROUTER_RE = re.compile(r"BGP router identifier\s*:?\s*([0-9.]+)", re.I)
_ASN_RE = re.compile(r"local AS number\s*:?\s*([0-9.]+)", re.I)
_NO_PEERS_RE = re.compile(r"No BGP neighbors found", re.I)
_AF_RE = re.compile(r"^(ipv4|ipv6|l2vpn|vpnv4|vpnv6)\s+\S+\s+summary", re.I)


def asplain(text: str | int) -> int:
    """``65001`` -> 65001; asdot ``65002.2048`` -> 65002 * 65536 + 2048 (RFC 5396)."""
    value = str(text).strip()
    if re.fullmatch(r"\d+", value):
        return int(value)
    match = re.fullmatch(r"(\d+)\.(\d+)", value)
    if not match:
        raise ParseError(f"not an AS number: {value!r}")
    return int(match.group(1)) * 65536 + int(match.group(2))


def bgp_state(text: str) -> tuple[str, str]:
    """(state, detail): ``Idle (Admin)`` -> (Idle, Admin); ``ESTABLISHED`` -> (Established, "")."""
    match = re.fullmatch(r"\s*([A-Za-z_]+)\s*(?:\((.*)\))?\s*", text)
    state = _STATES.get(match.group(1).lower()) if match else None
    if state is None:
        raise ParseError(f"not a BGP session state: {text!r}")
    return state, (match.group(2) or "").strip() if match else ""


def uptime_seconds(text: str) -> float | None:
    """``00:03:09``, ``0:00:00:09`` (d:h:m:s), ``1d01h44m``, ``01w2d03h`` -> seconds; ``never`` -> None."""
    value = text.strip().lower()
    match = _CLOCK_RE.match(value)
    if match:
        days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
        return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)
    parts = _UNITS_RE.findall(value)
    if parts and "".join(n + u for n, u in parts) == value:
        return float(sum(int(n) * _UNIT_S[u] for n, u in parts))
    return None


def _peer_row(tokens: list[str], columns: list[str], command: str) -> BgpPeer:
    """One table row; every column before Up/Down is one token, the state may be two (``Idle (Admin)``)."""
    updown = columns.index("Up/Down")
    if len(tokens) <= updown + 1:
        raise ParseError(f"{command}: short neighbor row {' '.join(tokens)!r}")
    fields = dict(zip(columns[:updown], tokens[:updown], strict=True))
    name, interface = re.fullmatch(r"([^()]+)(?:\((.+)\))?", fields["Neighbor"]).groups()  # type: ignore[union-attr]
    rest = tokens[updown + 1:]
    state_text = rest[0]
    if len(rest) > 1 and re.fullmatch(r"\(.*\)(?:/\d+)?", rest[1]) and state_text.isalpha():
        state_text = f"{state_text} {rest[1]}"
    prefixes: int | None = None
    count = re.fullmatch(r"(?:(\w+(?:\s*\(.*\))?)/)?(\d+)", state_text)  # ``5`` (FRR), ``ESTABLISHED/5`` (Onyx)
    if count:
        state, detail = bgp_state(count.group(1)) if count.group(1) else ("Established", "")
        prefixes = int(count.group(2))
    elif re.fullmatch(r"\((.*)\)", state_text):  # FRR: up, but every prefix held back (no policy)
        state, detail = "Established", state_text.strip("()")
    else:
        state, detail = bgp_state(state_text)
    return BgpPeer(address=name, remote_asn=asplain(fields["AS"]), state=state, prefixes_received=prefixes,
                   uptime_s=uptime_seconds(tokens[updown]), interface=interface, detail=detail)


def parse_summary_text(raw: str, command: str) -> BgpFacts:
    """A Quagga-style ``show ip bgp summary``: the IPv4 unicast table (the first one where no address
    family heads the sections). ``% No BGP neighbors found`` gives no peers (and, where FRR printed
    nothing else, no local ASN); ``% BGP instance not found`` or anything else is a ParseError."""
    router_id = asn = None
    columns: list[str] | None = None
    peers: dict[str, BgpPeer] = {}
    section_ok, seen_section = True, False
    for line in raw.splitlines():
        text = line.strip()
        family = _AF_RE.match(text)
        if family:
            section_ok = not seen_section and family.group(1).lower() == "ipv4" and "unicast" in text.lower()
            seen_section = seen_section or section_ok
            columns = None
            continue
        if not section_ok:
            continue
        if router_id is None and (match := _ROUTER_RE.search(text)):
            router_id = match.group(1)
        if asn is None and (match := _ASN_RE.search(text)):
            asn = asplain(match.group(1))
        if text.startswith("Neighbor") and "Up/Down" in text:
            columns = text.split()
        elif columns and text and not set(text) <= {"-"} and not text.startswith(("Total number", "Displayed")):
            peer = _peer_row(text.split(), columns, command)
            peers[peer.address] = peer
        elif columns and text.startswith("Total number"):
            columns = None
    if not peers and _NO_PEERS_RE.search(raw):
        return BgpFacts(local_asn=asn, router_id=router_id, peers={})
    if router_id is None or asn is None:
        raise ParseError(f"{command}: no 'BGP router identifier' / 'local AS number' in the output "
                         f"({raw.strip()[:120]!r})")
    return BgpFacts(local_asn=asn, router_id=router_id, peers=peers)
