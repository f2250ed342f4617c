"""WekaFS CLI: ``weka status`` (text and ``-J``), ``weka cluster host|container|drive``, ``weka fs``.

Validate needs: the cluster status is OK (not DEGRADED, no rebuild), every backend and drive is up,
the file systems exist. Formats read (vendor docs and the weka-operator repo, see SOURCES.md):
``weka status`` of 3.7.2 (short), 4.0.0, 4.2.9 and 4.4.x (``17/21 backend containers UP``, no banner),
``weka status -J`` of 4.4.2; the space-aligned tables of ``weka cluster container`` (4.3.0 ``HOST ID``,
4.3.2 ``CONTAINER ID``), ``weka cluster host -v`` (3.13.6), ``weka cluster host -b -v --output ...``,
``weka cluster drive`` (4.2, 4.3.0); ``weka fs`` as the 4.x pipe table and the
3.x boxed table whose headers wrap over two lines. Only fields these recordings show are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from racfg.hostfacts.common import load_json, optional_int, require_text, split_key_value
from racfg.hostfacts.parse_error import ParseError

TOOL = "weka"


@dataclass(frozen=True)
class WekaStatus:
    """``weka status``. Counts are None where that release does not print them (3.7 has no io status)."""

    cluster_name: str
    guid: str
    status: str  # OK, DEGRADED, ...
    version: str | None
    backends_up: int | None
    backends_total: int | None
    drives_up: int | None
    drives_total: int | None
    io_status: str | None  # STARTED, STOPPED
    rebuilding: bool
    protection: str | None = None  # "4+2"

    @property
    def ok(self) -> bool:
        return self.status == "OK" and not self.rebuilding


_BANNER_RE = re.compile(r"^WekaIO v(\S+)")
_CLUSTER_RE = re.compile(r"^(.+?) \(([0-9a-f-]{36})\)$")
_STATUS_RE = re.compile(r"^(?P<status>[A-Z_]+)\s*\((?P<counts>[^)]*)\)")
_COUNT_RE = re.compile(r"(\d+)(?:/(\d+))? (backends?(?: containers)?|drives) UP")


def parse_status(text: str | bytes) -> WekaStatus:
    """Parse ``weka status`` (text) or ``weka status -J``: which one is told by the first character."""
    body = "\n".join(require_text(text, TOOL)).strip()
    if body.startswith("{"):
        return _status_json(load_json(body, TOOL))
    fields: dict[str, str] = {}
    continuation: list[str] = []
    version = None
    for line in body.split("\n"):
        if banner := _BANNER_RE.match(line):
            version = banner.group(1)
            continue
        pair = split_key_value(line)
        if pair is not None and pair[0]:
            fields.setdefault(pair[0], pair[1])
        elif line.strip():
            continuation.append(line.strip())  # "Rebuild in progress (3%)" under status or io status
    cluster = _CLUSTER_RE.match(fields.get("cluster", ""))
    status = _STATUS_RE.match(fields.get("status", ""))
    if cluster is None or status is None:
        raise ParseError(TOOL, "status: no 'cluster: NAME (GUID)' and 'status: STATE (...)' lines")
    counts = {kind.split()[0].rstrip("s"): (int(up), int(total) if total else None)
              for up, total, kind in _COUNT_RE.findall(status["counts"])}
    io_status = fields.get("io status", "").split(" ")[0] or None
    return WekaStatus(
        cluster_name=cluster.group(1), guid=cluster.group(2), status=status["status"], version=version,
        backends_up=counts.get("backend", (None, None))[0], backends_total=counts.get("backend", (None, None))[1],
        drives_up=counts.get("drive", (None, None))[0], drives_total=counts.get("drive", (None, None))[1],
        io_status=io_status, rebuilding=any(line.startswith("Rebuild in progress") for line in continuation),
        protection=(fields.get("protection") or "").split(" ")[0] or None,
    )


def _status_json(data: object) -> WekaStatus:
    if not isinstance(data, dict) or "status" not in data or "guid" not in data:
        raise ParseError(TOOL, "status -J: no 'status' and 'guid' keys")
    backends = (data.get("containers") or data.get("hosts") or {}).get("backends", {})
    drives = data.get("drives") or {}
    rebuild = data.get("rebuild") or {}
    data_drives, protection_drives = data.get("stripe_data_drives"), data.get("stripe_protection_drives")
    return WekaStatus(
        cluster_name=str(data.get("name", "")), guid=str(data["guid"]), status=str(data["status"]),
        version=data.get("release"),
        backends_up=optional_int(backends.get("active"), TOOL, "backends active"),
        backends_total=optional_int(backends.get("total"), TOOL, "backends total"),
        drives_up=optional_int(drives.get("active"), TOOL, "drives active"),
        drives_total=optional_int(drives.get("total"), TOOL, "drives total"),
        io_status=data.get("io_status"),
        rebuilding=bool(rebuild.get("movingData")) or bool(rebuild.get("unavailableMiB")),
        protection=f"{data_drives}+{protection_drives}" if data_drives is not None else None,
    )


# ---------------------------------------------------------------------------------------------- tables


def parse_table(text: str | bytes) -> list[dict[str, str]]:
    """A space-aligned weka table as rows keyed by lower-case header (``"host id"``, ``"status"``).

    Weka pads every column to its widest cell and separates header words by one space and columns by
    two or more, so cells are cut at the header's column starts (empty cells, such as an unset failure
    domain or an empty LAST FAILURE, stay empty). The ``.`` lines docs use to elide rows are skipped.
    """
    text_lines = [line for line in require_text(text, TOOL) if line.strip() and line.strip() != "."]
    header = text_lines[0]
    starts = [match.start() for match in re.finditer(r"(?:^|(?<=\s\s))\S", header)]
    names = [header[start:end].strip().lower() for start, end in zip(starts, [*starts[1:], None], strict=True)]
    if len(names) < 2 or any(not re.fullmatch(r"[a-z %()]+", name) for name in names):
        raise ParseError(TOOL, f"expected a table header, got {header.strip()[:80]!r}")
    rows = []
    for line in text_lines[1:]:
        cells = [line[start:end].strip() for start, end in zip(starts, [*starts[1:], None], strict=True)]
        if line[: starts[1]].strip() == "" or (len(line) > starts[1] and line[starts[1] - 1] not in " "):
            raise ParseError(TOOL, f"row does not line up with the header: {line.strip()[:80]!r}")
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


@dataclass(frozen=True)
class WekaContainer:
    """A row of ``weka cluster container`` / ``weka cluster host`` (columns a release lacks are None)."""

    id: int | None
    hostname: str
    container: str | None
    status: str | None  # UP, DOWN, ...
    release: str | None
    mode: str | None  # backend, client (3.x ``-v``)
    failure_domain: str | None

    @property
    def up(self) -> bool:
        return self.status == "UP"


def parse_cluster_containers(text: str | bytes) -> list[WekaContainer]:
    """Parse ``weka cluster container`` (4.x) or ``weka cluster host [-v] [--output ...]`` (3.x/4.x)."""
    rows = parse_table(text)
    if not rows or "hostname" not in rows[0]:
        raise ParseError(TOOL, "cluster container/host: no HOSTNAME column, or no rows")
    result = []
    for row in rows:
        ident = row.get("container id", row.get("host id"))
        result.append(WekaContainer(
            id=optional_int(ident, TOOL, "container id"), hostname=row["hostname"],
            container=row.get("container", row.get("container name")) or None,
            status=row.get("status") or None, release=row.get("release", row.get("version")) or None,
            mode=row.get("mode") or None, failure_domain=row.get("failure domain") or None,
        ))
    return result


@dataclass(frozen=True)
class WekaDrive:
    """A row of ``weka cluster drive``: ``status`` ACTIVE/INACTIVE/PHASING_OUT..., size as printed."""

    disk_id: int
    uuid: str
    hostname: str
    size: str
    status: str

    @property
    def active(self) -> bool:
        return self.status == "ACTIVE"


def parse_cluster_drives(text: str | bytes) -> list[WekaDrive]:
    """Parse ``weka cluster drive``."""
    rows = parse_table(text)
    if not rows or not {"disk id", "uuid", "hostname", "size", "status"} <= set(rows[0]):
        raise ParseError(TOOL, "cluster drive: expected DISK ID, UUID, HOSTNAME, SIZE, STATUS columns and rows")
    return [WekaDrive(disk_id=optional_int(row["disk id"], TOOL, "disk id") or 0, uuid=row["uuid"],
                      hostname=row["hostname"], size=row["size"], status=row["status"]) for row in rows]


# ---------------------------------------------------------------------------------------------- weka fs


@dataclass(frozen=True)
class WekaFilesystem:
    """A row of ``weka fs``: ``ready`` from Status READY (4.x) or "Is ready" True (3.x)."""

    id: int
    name: str
    group: str
    ready: bool


def parse_fs(text: str | bytes) -> list[WekaFilesystem]:
    """Parse ``weka fs`` in the 4.x pipe-separated table or the 3.x boxed table with wrapped headers."""
    text_lines = [line for line in require_text(text, TOOL) if line.strip()]
    if text_lines[0].startswith("|"):
        rows = _boxed_rows(text_lines)
    else:
        header = [cell.strip().lower() for cell in text_lines[0].split("|")]
        if "filesystem name" not in header:
            raise ParseError(TOOL, f"fs: expected the 'Filesystem ID | Filesystem Name' header, got "
                                   f"{text_lines[0].strip()[:60]!r}")
        rows = [dict(zip(header, (cell.strip() for cell in line.split("|")), strict=False))
                for line in text_lines[1:] if not set(line) <= {"-", "+", " "}]
    result = []
    for row in rows:
        ident = row.get("filesystem id", "").removeprefix("FSId:").strip()
        name = row.get("filesystem name", row.get("name"))
        ready = row["status"] == "READY" if "status" in row else row.get("is ready") == "True"
        if not ident.isdigit() or not name:
            raise ParseError(TOOL, f"fs: expected Filesystem ID and Name, got {row!r:.80}")
        result.append(WekaFilesystem(id=int(ident), name=name, group=row.get("group", ""), ready=ready))
    return result


def _boxed_rows(text_lines: list[str]) -> list[dict[str, str]]:
    """3.x: ``| FileSystem | Name | ... | SSD Bu |`` over ``|  ID | | ... | dget |``, then ``+---``, then rows.

    Headers are wrapped at the column width, mid-word, so the pieces are joined without trimming inside
    (cell text is the cell minus its one space of padding on each side)."""
    rule = next((i for i, line in enumerate(text_lines) if line.startswith("+")), None)
    if rule is None or rule == 0:
        raise ParseError(TOOL, "fs: boxed table without its +--- rule")

    def cells(line: str) -> list[str]:
        return [cell[1:-1] if len(cell) > 1 else cell for cell in line.rstrip("\n").split("|")[1:]]

    pieces = [cells(line) for line in text_lines[:rule]]
    header = ["".join(part[i] if i < len(part) else "" for part in pieces).strip().lower()
              for i in range(len(pieces[0]))]
    header = [re.sub(r"\s+", " ", name) for name in header]
    return [dict(zip(header, (cell.strip() for cell in line.split("|")[1:]), strict=False))
            for line in text_lines[rule + 1:]]
