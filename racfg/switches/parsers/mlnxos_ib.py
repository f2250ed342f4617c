"""MLNX-OS InfiniBand (SB7800) text output -> common facts. The IB CLI has no JSON form for
these commands, so this reads the ``Field : value`` blocks ``show interfaces ib`` prints.

InfiniBand has no PFC and no LLDP: parse_pfc reports everything off (what the RA wants) and
parse_lldp returns no neighbors.
"""

from __future__ import annotations

import re

from racfg.switches.facts import LldpNeighbor, PfcFacts, PortFacts
from racfg.switches.parsers.vendor_values import ParseError, description, enabled, first_int, speed_gbps
from racfg.switches.ports import canonical_port

PLATFORM = "mlnxos-ib"
_HEADER_RE = re.compile(r"^(IB\d+/\d+(?:/\d+)?)(?:\s+state)?\s*:?\s*$", re.I)
_FIELD_RE = re.compile(r"^\s+([^:]+?)\s*:\s?(.*)$")


def _blocks(raw: str) -> dict[str, dict[str, str]]:
    blocks: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in raw.splitlines():
        header = _HEADER_RE.match(line.strip()) if line and not line[0].isspace() else None
        if header:
            current = blocks.setdefault(header.group(1), {})
            continue
        field = _FIELD_RE.match(line)
        if field and current is not None:
            current[field.group(1).strip().lower()] = field.group(2).strip()
    return blocks


def parse_interfaces(raw: str) -> dict[str, PortFacts]:
    """``show interfaces ib`` -> {canonical port: PortFacts}."""
    ports: dict[str, PortFacts] = {}
    for name, fields in _blocks(raw).items():
        port = canonical_port(PLATFORM, name)
        if port is None:
            continue
        mtu = first_int(fields.get("mtu") or fields.get("logical mtu"))
        if mtu is None:
            raise ParseError(f"show interfaces ib: {name} has no MTU field")
        oper_up = fields.get("physical port state", "").lower() == "linkup" or enabled(fields.get("logical port state"))
        speed = speed_gbps(fields.get("current line rate")) if oper_up else None
        ports[port] = PortFacts(
            mtu=mtu,
            admin_up=enabled(fields.get("admin state", "Enabled")),
            oper_up=oper_up,
            speed_gbps=speed,
            description=description(fields.get("description")),
        )
    if not ports and raw.strip():
        raise ParseError(f"show interfaces ib: no port blocks in {raw.strip()[:120]!r}")
    return ports


def parse_pfc(raw: str = "") -> PfcFacts:
    """InfiniBand has no PFC or RoCE: always off."""
    return PfcFacts(False, {})


def parse_version(raw: str) -> str:
    """``show version`` -> ``3.6.8010`` (the ``Product release`` line)."""
    match = re.search(r"^\s*Product release\s*:\s*(\S+)", raw, re.M)
    if not match:
        raise ParseError("show version: no 'Product release' line")
    return match.group(1)


def parse_lldp(raw: str = "") -> dict[str, LldpNeighbor]:
    """InfiniBand ports run no LLDP: no neighbors."""
    return {}
