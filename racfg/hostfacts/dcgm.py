"""``dcgmi diag -r N``: DCGM's GPU diagnostic, as the table it prints.

Two layouts are read (recordings in tests/hostfacts/fixtures): DCGM 3.x (``Denylist``, ``PCIe``,
``GPU Memory`` rows with ``Pass - All`` / ``Fail - GPU: 1`` / ``Pass - GPUs: 0, 2, 3``) and DCGM 4.x
(lower-case plugin names with one ``GPU0: Pass`` row per GPU). ``Warning`` and ``Info`` rows belong
to the test above them and wrap over several rows, cut mid-word by DCGM itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from racfg.hostfacts.common import require_text
from racfg.hostfacts.parse_error import ParseError

TOOL = "dcgmi diag"

_ROW_RE = re.compile(r"^\|(?P<name>[^|]*)\|(?P<value>.*)\|$")
_CATEGORY_RE = re.compile(r"^[|+]-+\s+(?P<name>[A-Za-z ]+?)\s+-+\+")
_RESULT_RE = re.compile(r"^(?P<status>Pass|Fail|Skip|Warn)(?: - (?P<scope>.+))?$")
_PER_GPU_RE = re.compile(r"^GPU(?P<gpu>\d+): (?P<status>Pass|Fail|Skip|Warn)$")


@dataclass
class DcgmTest:
    """One diagnostic test: its overall status, the GPUs it failed on ("all" for every GPU), notes."""

    name: str
    category: str
    status: str
    failed_gpus: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status == "Fail" or bool(self.failed_gpus)


@dataclass
class DcgmDiag:
    metadata: dict[str, str]
    tests: list[DcgmTest]

    @property
    def failures(self) -> list[DcgmTest]:
        return [t for t in self.tests if t.failed]


def _gpus(scope: str | None) -> list[str]:
    """``All`` -> ["all"]; ``GPU: 1`` / ``GPUs: 0, 2, 3`` -> ["1"] / ["0", "2", "3"]."""
    if not scope or scope.strip().lower() == "all":
        return ["all"]
    return [g.strip() for g in scope.split(":", 1)[-1].split(",") if g.strip()]


def parse_diag(text: str | bytes) -> DcgmDiag:
    """Parse ``dcgmi diag`` table output (any run level)."""
    category, metadata, tests = "", {}, []
    note: list[str] | None = None  # the Warning being continued over rows
    full = False  # the row before filled its column: DCGM cut a word there, the next row goes on with it
    for line in require_text(text, TOOL):
        stripped = line.strip()
        if cat := _CATEGORY_RE.match(stripped):
            category, note = cat["name"].strip(), None
            continue
        row = _ROW_RE.match(stripped)
        if row is None or set(stripped) <= set("+-=|"):
            continue
        name, value = row["name"].strip(), row["value"].strip()
        # DCGM pads a cut row with exactly two blanks; a row that ends at a word has three or more
        joined, full = full, len(row["value"]) - len(row["value"].rstrip()) == 2
        if name == "Diagnostic" and value == "Result":
            continue
        if category == "Metadata" and name:
            metadata[name] = value
        elif name in ("Warning", "Info"):
            if not tests:
                raise ParseError(TOOL, f"a {name} row before any test")
            note = tests[-1].warnings if name == "Warning" else []
            note.append(value)
        elif name:
            result = _RESULT_RE.match(value)
            if result is None:
                raise ParseError(TOOL, f"test {name!r}: result {value!r} is not Pass/Fail/Skip/Warn")
            test = DcgmTest(name, category, result["status"])
            if result["status"] == "Fail":
                test.failed_gpus = _gpus(result["scope"])
            tests.append(test)
            note = None
        elif tests and (more := _RESULT_RE.match(value) or _PER_GPU_RE.match(value)):
            if more["status"] == "Fail":
                scope = more.groupdict().get("scope")
                tests[-1].failed_gpus += [more["gpu"]] if "gpu" in more.groupdict() else _gpus(scope)
            note = None
        elif note is not None and value:
            note[-1] += row["value"][1:].rstrip() if joined else " " + value
    if not tests:
        raise ParseError(TOOL, "no diagnostic result table")
    return DcgmDiag(metadata, tests)
