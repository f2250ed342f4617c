"""iperf3 ``-J`` output -> one figure per run, from real captures and their quirks.

Real captures differ: 3.0 has no ``sender`` keys and prints floats with exponents; a capture
can begin with ``^C``, have CRLF line ends, or be cut mid-way (a killed client, a full pipe).
A whole document gives the end summary; a cut one gives the mean of its complete, non-omitted
intervals, marked ``truncated`` so that nobody mistakes it for a full run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from racfg.hostfacts.parse_error import ParseError

# One interval's "sum" object: flat, so a non-greedy match up to its closing brace is exact.
_SUM_RE = re.compile(r'"sum"\s*:\s*\{(?P<body>[^{}]*)\}', re.S)
_FIELD_RE = re.compile(r'"(?P<key>[a-z_]+)"\s*:\s*(?P<value>[^,\s}]+)')


@dataclass(frozen=True)
class Iperf3Result:
    """One iperf3 client run, seen from the receiving side (what reached the far end)."""

    bits_per_second: float  # receiver goodput over the measured (non-omitted) seconds
    sent_bits_per_second: float
    seconds: float
    bytes: int
    retransmits: int | None
    reverse: bool
    streams: int
    version: str
    truncated: bool = False
    error: str | None = None
    cpu_percent: float | None = None  # this side's iperf3 process CPU, percent of one core
    remote_cpu_percent: float | None = None  # the far side's (the server's), as iperf3 reports it

    def as_dict(self) -> dict[str, Any]:
        return {"bits_per_second": round(self.bits_per_second),
                "sent_bits_per_second": round(self.sent_bits_per_second),
                "seconds": round(self.seconds, 3), "bytes": self.bytes, "retransmits": self.retransmits,
                "reverse": self.reverse, "streams": self.streams, "version": self.version,
                "truncated": self.truncated, "error": self.error,
                "cpu_percent": self.cpu_percent, "remote_cpu_percent": self.remote_cpu_percent}


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    start = text.find("{")
    if start < 0:
        raise ParseError("iperf3", f"no JSON in the output: {text.strip()[:120]!r}")
    return text[start:]


def parse_iperf3(text: str) -> Iperf3Result:
    """Parse ``iperf3 -J`` output (client side). Raises ParseError when nothing can be measured."""
    body = _clean(text)
    try:
        doc = json.loads(body)
    except json.JSONDecodeError:
        return _salvage(body)
    if not isinstance(doc, dict):
        raise ParseError("iperf3", "the JSON is not an object")
    start = doc.get("start", {})
    test = start.get("test_start", {})
    version = str(start.get("version", "")).strip()
    end = doc.get("end") or {}
    reverse = bool(test.get("reverse", 0))
    streams = int(test.get("num_streams", 1) or 1)
    received = end.get("sum_received") or end.get("sum") or {}
    sent = end.get("sum_sent") or end.get("sum") or {}
    error = doc.get("error")
    if not received and not sent:
        if error:
            return Iperf3Result(0.0, 0.0, 0.0, 0, None, reverse, streams, version, error=str(error))
        return _salvage(body)
    retransmits = sent.get("retransmits")
    cpu = (end.get("cpu_utilization_percent") or {}).get("host_total")
    remote_cpu = (end.get("cpu_utilization_percent") or {}).get("remote_total")
    return Iperf3Result(
        bits_per_second=float(received.get("bits_per_second", sent.get("bits_per_second", 0.0))),
        sent_bits_per_second=float(sent.get("bits_per_second", 0.0)),
        seconds=float(received.get("seconds", sent.get("seconds", 0.0))),
        bytes=int(received.get("bytes", sent.get("bytes", 0))),
        retransmits=int(retransmits) if retransmits is not None else None,
        reverse=reverse, streams=streams, version=version, error=str(error) if error else None,
        cpu_percent=float(cpu) if cpu is not None else None,
        remote_cpu_percent=float(remote_cpu) if remote_cpu is not None else None,
    )


def _salvage(body: str) -> Iperf3Result:
    """A cut capture: the mean rate of the complete interval sums that were not omitted."""
    total_bytes = 0
    total_seconds = 0.0
    for match in _SUM_RE.finditer(body):
        fields = {m["key"]: m["value"] for m in _FIELD_RE.finditer(match["body"])}
        if fields.get("omitted") == "true" or "bytes" not in fields or "seconds" not in fields:
            continue
        total_bytes += int(float(fields["bytes"]))
        total_seconds += float(fields["seconds"])
    if total_seconds <= 0:
        raise ParseError("iperf3", "the output is cut before its first complete interval")
    version = re.search(r'"version"\s*:\s*"([^"]*)"', body)
    reverse = re.search(r'"reverse"\s*:\s*(\d)', body)
    streams = re.search(r'"num_streams"\s*:\s*(\d+)', body)
    rate = total_bytes * 8 / total_seconds
    return Iperf3Result(rate, 0.0, total_seconds, total_bytes, None, bool(reverse and reverse[1] == "1"),
                        int(streams[1]) if streams else 1, version[1] if version else "", truncated=True)
