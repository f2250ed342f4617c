"""nccl-tests (``all_reduce_perf`` and its siblings): the per-size table and the average bus bandwidth.

Read as the recordings print it (tests/hostfacts/fixtures): the old layout (no ``redop``/``root``
columns in all_gather, an ``error`` column holding floats or ``N/A``) and the new one (``#wrong``),
lines prefixed by mpirun's ``--tag-output`` (``[1,0]<stdout>:``) or indented by a Markdown copy,
NCCL INFO and ssh warnings interleaved, a 17179869184-byte size filling its column, a bandwidth printed
in e-notation (``2e+06``: one rank on an H100, tests/recordings/h100-device). Each row's last
eight fields are the out-of-place then the in-place (time, algbw, busbw, error) groups, whatever
columns come before them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from racfg.hostfacts.common import require_text
from racfg.hostfacts.parse_error import ParseError

TOOL = "nccl-tests"

_PREFIX_RE = re.compile(r"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:)?")
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([\d.]+)")
_RANK_RE = re.compile(
    r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s+(.+)$")
# nccl-tests prints a figure it cannot fit in its column in e-notation: one rank's in-place all-reduce
# moves nothing, so its algbw at 1 GiB reads "2e+06" (tests/recordings/h100-device, racfg's default sizes).
_NUMBER_RE = re.compile(r"^\d+(?:\.\d+)?(?:e[+-]?\d+)?$")


@dataclass(frozen=True)
class NcclRow:
    """One message size: bytes, and the bus bandwidth (GB/s) out of place and in place."""

    size: int
    busbw_out: float
    busbw_in: float
    algbw_out: float
    algbw_in: float

    @property
    def busbw(self) -> float:
        """The better of the two placements: what the fabric delivered at this size."""
        return max(self.busbw_out, self.busbw_in)


@dataclass(frozen=True)
class NcclRun:
    rows: tuple[NcclRow, ...]
    avg_busbw: float | None  # the "# Avg bus bandwidth" line (None in a run cut before it)
    ranks: dict[int, tuple[str, int, str]]  # rank -> (host, device, GPU name)

    @property
    def peak_busbw(self) -> float:
        return max(row.busbw for row in self.rows)

    @property
    def largest(self) -> NcclRow:
        """The largest message's row: the bandwidth figure acceptance judges (small sizes are latency)."""
        return max(self.rows, key=lambda row: row.size)

    @property
    def hosts(self) -> list[str]:
        return list(dict.fromkeys(host for host, _, _ in self.ranks.values()))


def _row(fields: list[str]) -> NcclRow | None:
    """A data row: size, count, type ... then 2 x (time, algbw, busbw, error/#wrong)."""
    if len(fields) < 11 or not fields[0].isdigit() or not fields[1].isdigit():
        return None
    out, inp = fields[-8:-4], fields[-4:]
    numbers = [out[1], out[2], inp[1], inp[2]]
    if not all(_NUMBER_RE.match(n) for n in numbers):
        return None
    return NcclRow(int(fields[0]), float(out[2]), float(inp[2]), float(out[1]), float(inp[1]))


def parse_output(text: str | bytes) -> NcclRun:
    """Parse one nccl-tests run; a run with no data row is a ParseError (it did not measure)."""
    rows: list[NcclRow] = []
    avg: float | None = None
    ranks: dict[int, tuple[str, int, str]] = {}
    for raw in require_text(text, TOOL):
        line = _PREFIX_RE.sub("", raw, count=1).strip()
        if not line:
            continue
        if line.startswith("#"):
            if match := _AVG_RE.match(line):
                avg = float(match.group(1))
            elif match := _RANK_RE.match(line):
                ranks[int(match.group(1))] = (match.group(2), int(match.group(3)), match.group(4).strip())
            continue
        if (row := _row(line.split())) is not None:
            rows.append(row)
    if not rows:
        raise ParseError(TOOL, "no result rows (size ... busbw): the test did not run or its output was cut")
    return NcclRun(tuple(rows), avg, ranks)
