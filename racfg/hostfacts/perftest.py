"""perftest (``ib_write_bw``, ``ib_read_bw`` ...) text output -> bandwidth in Gb/s.

Real captures are messy: indented by whoever pasted them, TAB separated, a ``Conflicting CPU
frequency`` warning between the header and the row, server and client output interleaved (every
header and row twice), an excerpt cut after a few rows. Rows are read by their shape and
de-duplicated by message size; the unit comes from the column header (``--report_gbits`` gives
Gb/sec, the default MB/sec is MiB/s as perftest computes it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from racfg.hostfacts.parse_error import ParseError

_ROW_RE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s*$")
_HEADER_RE = re.compile(r"BW average\[(Gb/sec|MB/sec)\]")
_TITLE_RE = re.compile(r"^\s*(RDMA_\w+|Send) BW Test", re.M)
_FIELD_RE = re.compile(r"(Device|Link type|Mtu)\s*:\s*(\S+)")
_MIB_TO_GBIT = 1048576 * 8 / 1e9


@dataclass(frozen=True)
class PerftestRow:
    size: int
    iterations: int
    peak_gbits: float
    average_gbits: float
    msg_rate_mpps: float


@dataclass(frozen=True)
class PerftestResult:
    test: str
    device: str
    link_type: str
    mtu: str
    unit: str
    rows: list[PerftestRow] = field(default_factory=list)

    @property
    def average_gbits(self) -> float:
        """The average bandwidth at the largest message size measured (what fills a link)."""
        return max(self.rows, key=lambda r: r.size).average_gbits

    def as_dict(self) -> dict[str, Any]:
        return {"test": self.test, "device": self.device, "link_type": self.link_type, "mtu": self.mtu,
                "unit": self.unit, "average_gbits": round(self.average_gbits, 3),
                "rows": [[r.size, r.iterations, r.peak_gbits, r.average_gbits, r.msg_rate_mpps] for r in self.rows]}


def parse_perftest(text: str) -> PerftestResult:
    text = text.replace("\r\n", "\n")
    header = _HEADER_RE.search(text)
    if header is None:
        raise ParseError("perftest", "no result table header (BW average[...]) in the output")
    unit = header[1]
    factor = 1.0 if unit == "Gb/sec" else _MIB_TO_GBIT
    rows: dict[int, PerftestRow] = {}
    for line in text[header.start():].splitlines():
        match = _ROW_RE.match(line)
        if match is None:
            continue
        size = int(match[1])
        rows.setdefault(size, PerftestRow(size, int(match[2]), float(match[3]) * factor, float(match[4]) * factor,
                                          float(match[5])))
    if not rows:
        raise ParseError("perftest", "the output has a header but no result row")
    title = _TITLE_RE.search(text)
    fields: dict[str, str] = {}
    for match in _FIELD_RE.finditer(text):
        fields.setdefault(match[1], match[2])
    return PerftestResult(title[1] if title else "", fields.get("Device", ""), fields.get("Link type", ""),
                          fields.get("Mtu", ""), unit, sorted(rows.values(), key=lambda r: r.size))
