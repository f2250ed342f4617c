"""Port counters (bytes, errors, discards, pause frames) from each platform's interface output.

Kept apart from ``PortFacts`` (configuration state that validate and drift compare): counters
change every second and matter only to measurements (``racfg smoke`` reads them before and
after each step). Same show commands as the facts: ``show interfaces ethernet | json-print``
(Onyx: ``Rx``/``Tx`` objects of strings), ``show interfaces | json`` (EOS: ``interfaceCounters``),
``show interfaces ib`` (MLNX-OS IB: ``Rx:``/``Tx:`` text blocks).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from racfg.switches.parsers.vendor_values import first_int, flatten_port_table, load_json, lookup
from racfg.switches.ports import canonical_port


@dataclass(frozen=True)
class PortCounters:
    """Cumulative counters of one port, from the switch's side (rx = from the host, tx = to it)."""

    rx_bytes: int = 0
    tx_bytes: int = 0
    rx_errors: int = 0
    tx_errors: int = 0
    rx_discards: int = 0
    tx_discards: int = 0
    rx_pause: int = 0
    tx_pause: int = 0

    def minus(self, before: PortCounters) -> PortCounters:
        """Growth since ``before`` (a counter that went back, e.g. a cleared port, counts from 0)."""
        values = {}
        for key, now in asdict(self).items():
            old = getattr(before, key)
            values[key] = now - old if now >= old else now
        return PortCounters(**values)

    @property
    def problems(self) -> int:
        return self.rx_errors + self.tx_errors + self.rx_discards + self.tx_discards

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def _int(value: Any) -> int:
    return first_int(value) or 0


def onyx_counters(raw: str | Any) -> dict[str, PortCounters]:
    data = load_json(raw, "show interfaces ethernet")
    out = {}
    for name, entry in flatten_port_table(data):
        port = canonical_port("onyx", name)
        if port is None:
            continue
        rx = lookup(entry, "Rx") or {}
        tx = lookup(entry, "Tx") or {}
        if not isinstance(rx, dict) or not isinstance(tx, dict):
            continue
        out[port] = PortCounters(
            rx_bytes=_int(lookup(rx, "bytes")), tx_bytes=_int(lookup(tx, "bytes")),
            rx_errors=_int(lookup(rx, "error packets")), tx_errors=_int(lookup(tx, "error packets")),
            rx_discards=_int(lookup(rx, "discard packets")),
            tx_discards=_int(lookup(tx, "discard packets")) + _int(lookup(tx, "hoq discard packets")),
            rx_pause=_int(lookup(rx, "pause packets")), tx_pause=_int(lookup(tx, "pause packets")),
        )
    return out


def eos_counters(raw: str | Any) -> dict[str, PortCounters]:
    data = load_json(raw, "show interfaces")
    out = {}
    for name, entry in (data.get("interfaces") or {}).items():
        port = canonical_port("eos", name)
        counters = entry.get("interfaceCounters") if isinstance(entry, dict) else None
        if port is None or not isinstance(counters, dict):
            continue
        rx_detail = counters.get("inputErrorsDetail") or {}
        tx_detail = counters.get("outputErrorsDetail") or {}
        out[port] = PortCounters(
            rx_bytes=_int(counters.get("inOctets")), tx_bytes=_int(counters.get("outOctets")),
            rx_errors=_int(counters.get("totalInErrors")), tx_errors=_int(counters.get("totalOutErrors")),
            rx_discards=_int(counters.get("inDiscards")), tx_discards=_int(counters.get("outDiscards")),
            rx_pause=_int(rx_detail.get("rxPause")), tx_pause=_int(tx_detail.get("txPause")),
        )
    return out


_IB_BLOCK_RE = re.compile(r"^IB(1/\d+(?:/\d+)?)\s+state:", re.M)
_IB_COUNTER_RE = re.compile(r"^\s*(\d+)\s+(packets|bytes|error packets|discard packets)\s*$")


def ib_counters(raw: str) -> dict[str, PortCounters]:
    out = {}
    blocks = list(_IB_BLOCK_RE.finditer(raw))
    for i, block in enumerate(blocks):
        text = raw[block.end(): blocks[i + 1].start() if i + 1 < len(blocks) else len(raw)]
        side = ""
        values: dict[str, int] = {}
        for line in text.splitlines():
            stripped = line.strip()
            if stripped in ("Rx:", "Tx:"):
                side = stripped[:2].lower()
                continue
            match = _IB_COUNTER_RE.match(line)
            if match and side:
                key = {"bytes": "bytes", "error packets": "errors", "discard packets": "discards"}.get(match[2])
                if key:
                    values[f"{side}_{key}"] = int(match[1])
        out[block[1]] = PortCounters(**values)
    return out


PARSERS = {"onyx": onyx_counters, "eos": eos_counters, "mlnxos-ib": ib_counters}


def parse_counters(platform: str, raw_interfaces: str) -> dict[str, PortCounters]:
    """Counters per canonical port from the platform's interface show command."""
    return PARSERS[platform](raw_interfaces)
