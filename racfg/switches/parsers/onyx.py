"""Onyx (Mellanox SN switches) ``| json-print`` output -> common facts.

Shapes seen on real switches: ``show interfaces ethernet`` is a list of objects keyed by
``header`` (VLAN entries mixed in); MTU reads ``"1500 bytes(Maximum packet size 1522 bytes)"``;
an empty description is ``N\\A``. ``show dcb priority-flow-control`` is a list of three tables
from 3.6.6000 (the third per port), an object with ``Table 2`` per port before, and the per-port
table alone where a release prints only that.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from racfg.switches.facts import BgpFacts, LldpNeighbor, NextHop, PfcFacts, PortFacts, Route, RouteFacts
from racfg.switches.parsers.bgp_summary import parse_summary_text
from racfg.switches.parsers.vendor_values import (
    ParseError,
    description,
    enabled,
    first_int,
    flatten_port_table,
    load_json,
    lookup,
    speed_gbps,
)
from racfg.switches.ports import canonical_port

PLATFORM = "onyx"


def parse_interfaces(raw: str | Any, platform: str = PLATFORM) -> dict[str, PortFacts]:
    """``show interfaces ethernet | json-print`` -> {canonical port: PortFacts}; non-ports skipped."""
    data = load_json(raw, "show interfaces ethernet")
    ports: dict[str, PortFacts] = {}
    for name, entry in flatten_port_table(data):
        port = canonical_port(platform, name)
        if port is None:
            continue
        mtu = first_int(lookup(entry, "MTU"))
        if mtu is None:
            raise ParseError(f"show interfaces ethernet: {name} has no MTU field")
        oper = enabled(lookup(entry, "Operational state"))
        ports[port] = PortFacts(
            mtu=mtu,
            admin_up=enabled(lookup(entry, "Admin state")),
            oper_up=oper,
            speed_gbps=speed_gbps(lookup(entry, "Actual speed", "Speed")),
            description=description(lookup(entry, "Description")),
        )
    return ports


def _per_port_table(data: Any) -> tuple[dict[str, Any] | None, Any]:
    """(global table, per-port table) out of the three shapes the command has had."""
    if isinstance(data, list):
        tables = [t for t in data if isinstance(t, dict)]
        if len(tables) >= 3:
            return tables[0], tables[2]
        if tables:
            return None, tables[-1]
        return None, {}
    if isinstance(data, dict):
        if "Table 2" in data:
            return data.get("Table 1"), data["Table 2"]
        return None, data
    raise ParseError("show dcb priority-flow-control: unexpected output")


def parse_pfc(raw: str | Any, roce_raw: str | None = None) -> PfcFacts:
    """``show dcb priority-flow-control | json-print`` (+ optional ``show running-config``) -> PfcFacts."""
    data = load_json(raw, "show dcb priority-flow-control")
    global_table, per_port = _per_port_table(data)
    ports: dict[str, bool] = {}
    for name, entry in flatten_port_table(per_port):
        port = canonical_port(PLATFORM, name)
        if port is None:
            continue
        admin = str(lookup(entry, "PFC admin") or "").strip().lower()
        ports[port] = admin == "on" or enabled(lookup(entry, "PFC oper"))
    glob = False
    priorities: list[int] = []
    if isinstance(global_table, dict):
        glob = enabled(lookup(global_table, "PFC", "PFC state", "Priority flow control"))
        listed = lookup(global_table, "Priority Enabled List", "Enabled Priorities", "Priority enabled list")
        if listed is not None:
            priorities = [int(p) for p in re.findall(r"\d+", str(listed))]
    return PfcFacts(glob, ports, roce=parse_roce(roce_raw or ""), lossless_priorities=tuple(priorities))


def parse_roce(running_config: str) -> bool:
    """RoCE is on when the running config carries a ``roce`` line (Onyx 3.8.2000+: ``roce [lossless]``)."""
    return any(re.match(r"^\s*roce(\s|$)", line) for line in running_config.splitlines())


def parse_version(raw: str | Any) -> str:
    """``show version | json-print`` -> ``3.6.5000``."""
    data = load_json(raw, "show version")
    release = lookup(data, "Product release", "Version") if isinstance(data, dict) else None
    if not release:
        raise ParseError("show version: no 'Product release' field")
    return str(release).strip()


def parse_lldp(raw: str | Any, platform: str = PLATFORM) -> dict[str, LldpNeighbor]:
    """``show lldp interfaces ethernet remote | json-print`` -> {local port: neighbor}.

    Ports without a remote (and outputs of other ``show lldp`` forms) give no entry."""
    data = load_json(raw, "show lldp interfaces ethernet remote")
    neighbors: dict[str, LldpNeighbor] = {}
    for name, entry in flatten_port_table(data):
        port = canonical_port(platform, name)
        system = lookup(entry, "Remote system name", "System Name")
        if port is None or system is None or description(str(system)) == "":
            continue
        remote_port = lookup(entry, "Remote port-id", "Remote port id", "Remote port description") or ""
        neighbors[port] = LldpNeighbor(str(system).strip(), str(remote_port).strip())
    return neighbors


def parse_status(raw: str | Any) -> dict[str, tuple[bool, float | None]]:
    """``show interfaces ethernet status | json-print`` -> {port: (oper_up, speed_gbps)}."""
    data = load_json(raw, "show interfaces ethernet status")
    out: dict[str, tuple[bool, float | None]] = {}
    for name, entry in flatten_port_table(data):
        port = canonical_port(PLATFORM, name)
        if port is not None:
            out[port] = (enabled(lookup(entry, "Operational state")), speed_gbps(lookup(entry, "Speed")))
    return out


def parse_rates(raw: str | Any) -> dict[str, dict[str, float]]:
    """``show interfaces ethernet rates | json-print`` -> {port: {ingress_bps, egress_bps, ...}}."""
    data = load_json(raw, "show interfaces ethernet rates")
    out: dict[str, dict[str, float]] = {}
    for name, entry in flatten_port_table(data):
        port = canonical_port(PLATFORM, name)
        if port is None:
            continue
        out[port] = {
            key.replace(" ", "_").replace("/", "_per_").replace("rate", "bps"): float(first_int(value) or 0)
            for key, value in entry.items()
        }
    return out


# BGP and routes. No real Onyx output of these was found (hosts/SOURCES.md: the public collection
# holds only ``show running-config protocol bgp``); these read the text layout of the Onyx user
# manual's examples, and their tests say so. Onyx prints no ``json-print`` form the manual shows
# for them, so this is text: a ``key : value`` header, then the Quagga-style table with the state
# and prefix count in one column (``ESTABLISHED/3``) and a d:hh:mm:ss clock.

def parse_bgp_summary(raw: str) -> BgpFacts:
    """``show ip bgp summary`` -> BgpFacts (default VRF, IPv4 unicast)."""
    return parse_summary_text(raw, "show ip bgp summary")


_SOURCES = {"direct": "connected", "bgp": "bgp", "static": "static", "ospf": "ospf", "kernel": "kernel"}
_ROUTE_COLUMNS = ("Destination", "Mask", "Flag", "Gateway", "Interface", "Source", "AD/M")


def _route_row(line: str, starts: list[int]) -> dict[str, str]:
    """Fixed-width columns, cut where the header's words start (Flag and, on ECMP continuation rows,
    Destination and Mask may be blank)."""
    bounds = [*starts[1:], None]
    return {name: line[start:end].strip() for name, start, end in zip(_ROUTE_COLUMNS, starts, bounds, strict=True)}


def parse_routes(raw: str) -> RouteFacts:
    """``show ip route [vrf default]`` -> RouteFacts; an ECMP route is one row per path, the
    destination repeated or left blank on the rows after the first."""
    starts: list[int] | None = None
    rows: dict[str, list[dict[str, str]]] = {}
    last: str | None = None
    for line in raw.splitlines():
        words = line.split()
        if words[:2] == ["Destination", "Mask"]:
            starts = [line.index(name) for name in _ROUTE_COLUMNS]
            continue
        if starts is None or not words or set(line.strip()) <= {"-"}:
            continue
        if line.strip().startswith("VRF Name"):
            break  # the default VRF comes first; other VRFs are not the fabric's
        row = _route_row(line, starts)
        if row["Destination"]:
            network = "0.0.0.0/0" if row["Destination"] == "default" else \
                str(ipaddress.IPv4Network(f"{row['Destination']}/{row['Mask']}", strict=False))
            last = network
        if last is None:
            raise ParseError(f"show ip route: a path row before any destination: {line.strip()!r}")
        rows.setdefault(last, []).append(row)
    if starts is None:
        raise ParseError(f"show ip route: no 'Destination Mask' table header ({raw.strip()[:120]!r})")
    routes = {}
    for prefix, paths in rows.items():
        hops = tuple(NextHop(None if row["Gateway"] in ("0.0.0.0", "") else row["Gateway"],
                             canonical_port(PLATFORM, row["Interface"]) or row["Interface"] or None)
                     for row in paths)
        source = paths[0]["Source"].lower()
        routes[prefix] = Route(prefix=prefix, protocol=_SOURCES.get(source, source or "unknown"), next_hops=hops,
                               installed=not any("F" in row["Flag"] for row in paths))
    return RouteFacts(routes)
