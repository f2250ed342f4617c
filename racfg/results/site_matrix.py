"""The host x category matrix: one row per host, one column per check family, each cell its worst status.

It is what a person scans first on a large site: which hosts have a problem, and in what. Results
name their target (a host, a switch, ``cluster``, or a link ``host:nic``); a link's results count for
its host, so a host's row holds its own checks and its links'. Hosts with a failure or an error come
first; the hosts where nothing failed are folded into one line, open on demand, so 1,000 healthy hosts
take one line and not a screen each. A host's name and each cell link to its detail rows
(``#h=host``, ``#h=host&c=category``), which the report draws on demand (racfg.results.row_store).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from urllib.parse import quote

from racfg.results.model import Report, Status, natural_key
from racfg.results.wording import clean

_RANK = {Status.FAIL: 0, Status.ERROR: 1, Status.PASS: 2, Status.SKIP: 3, Status.INFO: 4}
_LETTER = {Status.FAIL: "f", Status.ERROR: "e", Status.SKIP: "s", Status.INFO: "i", Status.PASS: "p"}


def host_of(target: str) -> str:
    """The host a target belongs to: a link ``dgx01:data0`` is dgx01's; anything else is itself."""
    return target.split(":", 1)[0]


@dataclass
class MatrixRow:
    """One host: per category the count of results of each status."""

    host: str
    cells: dict[str, dict[Status, int]] = field(default_factory=dict)

    def worst(self, category: str | None = None) -> Status | None:
        """The worst verdict of one cell (or of the whole row); None where it holds no result. A skip or a
        reading shows only where nothing was judged: a cell of ten passes and one skip reads as passed."""
        counts = [self.cells[category]] if category else list(self.cells.values())
        found = [s for c in counts for s, n in c.items() if n]
        return min(found, key=_RANK.__getitem__) if found else None

    def troubled(self) -> bool:
        return self.worst() in (Status.FAIL, Status.ERROR)


def site_matrix(report: Report) -> tuple[list[str], list[MatrixRow]]:
    """The categories (columns, sorted) and the rows: hosts with a failure or error first, then by name."""
    rows: dict[str, MatrixRow] = {}
    for result in report.results:
        row = rows.setdefault(host_of(result.target), MatrixRow(host_of(result.target)))
        cell = row.cells.setdefault(result.category, {})
        cell[result.status] = cell.get(result.status, 0) + 1
    categories = sorted({c for row in rows.values() for c in row.cells})
    ordered = sorted(rows.values(), key=lambda r: (not r.troubled(), natural_key(r.host)))
    return categories, ordered


def matrix_html(report: Report) -> str:
    """The matrix section, or nothing for an empty report."""
    categories, rows = site_matrix(report)
    if not rows:
        return ""
    head = "<thead><tr><th>host</th>" + "".join(f"<th><span>{_e(c)}</span></th>" for c in categories) + "</tr></thead>"
    troubled = [r for r in rows if r.troubled()]
    calm = [r for r in rows if not r.troubled()]
    parts = [f'<section class="matrix" aria-label="Hosts by category"><h2>{len(rows)} host'
             f'{"" if len(rows) == 1 else "s"} x {len(categories)} categor{"y" if len(categories) == 1 else "ies"}'
             f'<span class="tally">{len(troubled)} with a failure or error</span></h2>']
    if troubled:
        parts.append(f'<table class="matrix">{head}<tbody>{"".join(_row(r, categories) for r in troubled)}'
                     "</tbody></table>")
    if calm:
        opened = " open" if not troubled and len(calm) <= 40 else ""
        parts.append(f"<details{opened}><summary>{len(calm)} host{'' if len(calm) == 1 else 's'} where nothing "
                     f'failed</summary><table class="matrix">{head}<tbody>'
                     f'{"".join(_row(r, categories) for r in calm)}</tbody></table></details>')
    parts.append("</section>")
    return "".join(parts)


def _row(row: MatrixRow, categories: list[str]) -> str:
    host = _e(row.host)
    cells = []
    for category in categories:
        worst = row.worst(category) if category in row.cells else None
        if worst is None:
            cells.append("<td></td>")
            continue
        counts = row.cells[category]
        shown = sum(n for s, n in counts.items() if s in (Status.FAIL, Status.ERROR)) or ""
        link = _e(f"#h={quote(row.host)}&c={quote(category)}")
        cells.append(f'<td class="{_LETTER[worst]}"><a href="{link}">{shown}</a></td>')
    return f'<tr data-host="{host}"><th><a href="{_e("#h=" + quote(row.host))}">{host}</a></th>{"".join(cells)}</tr>'


def _e(text: object) -> str:
    return html.escape(clean(text), quote=True)
