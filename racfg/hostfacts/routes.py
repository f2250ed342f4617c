"""``ip -j route show table all`` and ``ip -j rule show``: a host's routes (every table) and its policy
rules, what a leaf-spine site's hosts route by (a route per data NIC to the site's data networks via
its leaf's gateway; with NICs on several leaves, a table per NIC and a rule from its address).

Formats read: iproute2 6.1 JSON as the lab's hosts print it (tests/validate/fixtures/routes): routes
of the main table carry no ``table`` key, others name theirs (``"101"``, ``"local"``); ``dst`` is
``default`` or a prefix, a host route is printed without ``/32``; a rule's source is ``all`` or an
address with ``srclen``.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from racfg.hostfacts.common import load_json, optional_int
from racfg.hostfacts.parse_error import ParseError

TOOL = "ip"


@dataclass(frozen=True)
class HostRoute:
    """One route: ``dst`` a prefix (``0.0.0.0/0`` for default), the table (``main``, ``101``, ``local``)."""

    dst: str
    table: str
    gateway: str | None
    dev: str | None
    metric: int | None
    source: str | None  # the preferred source address (``prefsrc``)


@dataclass(frozen=True)
class HostRule:
    """One policy rule: traffic from ``source`` (``all`` or a prefix) looks up ``table``."""

    priority: int | None
    source: str
    table: str


def _prefix(dst: str) -> str:
    return "0.0.0.0/0" if dst == "default" else str(ipaddress.ip_network(dst, strict=False))


def _entries(text: str | bytes, command: str) -> list[object]:
    """``ip -j <command> show``'s JSON list of entries."""
    data = load_json(text, TOOL)
    if not isinstance(data, list):
        raise ParseError(TOOL, f"-j {command}: expected a JSON list of {command}s")
    return data


def parse_routes(text: str | bytes) -> list[HostRoute]:
    """``ip -j route show [table all]`` -> the routes in the order printed."""
    routes = []
    for entry in _entries(text, "route"):
        if not isinstance(entry, dict) or "dst" not in entry:
            raise ParseError(TOOL, "-j route: a route without dst")
        try:
            dst = _prefix(str(entry["dst"]))
        except ValueError:
            continue  # an IPv6 or multicast entry of the local table that is not an address: not racfg's
        routes.append(HostRoute(dst, str(entry.get("table", "main")), entry.get("gateway"), entry.get("dev"),
                                optional_int(entry.get("metric"), TOOL, "metric"), entry.get("prefsrc")))
    return routes


def parse_rules(text: str | bytes) -> list[HostRule]:
    """``ip -j rule show`` -> the rules in priority order as printed."""
    rules = []
    for entry in _entries(text, "rule"):
        if not isinstance(entry, dict) or "table" not in entry:
            continue  # a rule with another action (goto, nop, blackhole) routes by no table
        src = str(entry.get("src", "all"))
        if src != "all":
            src = f"{src}/{entry.get('srclen', 32)}"
        rules.append(HostRule(optional_int(entry.get("priority"), TOOL, "priority"), src, str(entry["table"])))
    return rules
