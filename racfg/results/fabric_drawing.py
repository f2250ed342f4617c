"""The fabric drawn as inline SVG: switches by tier, the ISLs between them, every cabled host port.

It reads the outline the command put in ``Report.meta["fabric"]`` (racfg.intent.fabric_outline) and
the report's results: a port's colour is the worst status of the results about its link (target
``host:nic``), its label the share of line rate smoke measured on it (the lowest direction), so a
slow link shows where it sits (which leaf, which spines above it). Spines are the top row, leaves
(or a single tier's switches) the row below, each with its hosts' ports under it: a labelled box per
port on a small site, a 10-pixel square with a tooltip on a large one, so 1,000 hosts stay one
picture of a few hundred KB. No outline (an old run record, ``check``): no picture.
"""

from __future__ import annotations

import html
import re
from typing import Any

from racfg.results.model import Report, Status
from racfg.results.wording import clean

_COLOUR = {Status.FAIL: "#c62828", Status.ERROR: "#e67700", Status.SKIP: "#9e9e9e", Status.INFO: "#1565c0",
           Status.PASS: "#2e7d32"}
_UNCHECKED = "#cfd8dc"
_RANK = {Status.FAIL: 0, Status.ERROR: 1, Status.PASS: 2, Status.SKIP: 3}
_NIC = re.compile(r"\[([\w.-]+)\]$")
_LABELLED_PORTS = 96  # up to this many ports each gets a labelled box; above, a square with a tooltip
_SWITCH_H = 26


def link_figures(report: Report, links: set[str]) -> dict[str, tuple[Status, float | None]]:
    """Per link (``host:nic``, one of ``links``): the worst verdict about it and the lowest measured share of
    line rate. A result is about a link when its target is the link (smoke) or its target is the host and its
    check names the NIC (validate's ``dgx01/network/mtu[data0]``). A skip colours a link only where nothing
    else was said of it (RDMA not measured says nothing of a link TCP filled); a reading (info) never."""
    out: dict[str, tuple[Status, float | None]] = {}
    for result in report.results:
        link = result.target
        if link not in links:
            nic = _NIC.search(result.check)
            link = f"{result.target}:{nic.group(1)}" if nic else ""
        if link not in links or result.status is Status.INFO:
            continue
        status, share = out.get(link, (Status.SKIP, None))
        if _RANK[result.status] < _RANK[status]:
            status = result.status
        measured = result.data.get("share_of_line") if isinstance(result.data, dict) else None
        if isinstance(measured, (int, float)):
            share = measured if share is None else min(share, measured)
        out[link] = (status, share)
    return out


def fabric_svg(report: Report) -> str:
    """The fabric section (heading, legend, SVG), or nothing when the report carries no outline."""
    outline = report.meta.get("fabric")
    if not isinstance(outline, dict) or not outline.get("switches"):
        return ""
    tiers = {name: tier for name, tier in outline["switches"]}
    ports: dict[str, list[list[Any]]] = {}
    for row in outline.get("ports", []):
        ports.setdefault(row[0], []).append(row)
    spines = [n for n, t in tiers.items() if t == "spine"]
    lower = [n for n in tiers if n not in spines]
    labelled = sum(len(p) for p in ports.values()) <= _LABELLED_PORTS
    cell_w, cell_h, per_row, switch_w = (150, 20, 1, 100) if labelled else (11, 11, 5, 58)
    col_w = max(switch_w, per_row * cell_w) + (24 if labelled else 8)
    width = max(len(lower), 1) * col_w + 20
    top = 40 if spines else 10
    leaf_y = top + (90 if spines else 0)
    centre = {n: 10 + i * col_w + col_w / 2 for i, n in enumerate(lower)}
    spine_step = (width - 20) / max(len(spines), 1)
    centre.update({n: 10 + i * spine_step + spine_step / 2 for i, n in enumerate(spines)})
    figures = link_figures(report, {row[2] for rows in ports.values() for row in rows})
    body: list[str] = []
    for leaf, spine, count, gbps in outline.get("isls", []):
        if leaf in centre and spine in centre:
            body.append(f'<line x1="{centre[leaf]:.0f}" y1="{leaf_y}" x2="{centre[spine]:.0f}" y2="{top + _SWITCH_H}" '
                        f'class="isl"><title>{_e(leaf)} - {_e(spine)}: {count} x {gbps / max(count, 1):g}G'
                        "</title></line>")
    deepest = leaf_y + _SWITCH_H
    for name in lower:
        rows = ports.get(name, [])
        x0 = centre[name] - (per_row * cell_w) / 2
        if rows:
            body.append(f'<line x1="{centre[name]:.0f}" y1="{leaf_y + _SWITCH_H}" x2="{centre[name]:.0f}" '
                        f'y2="{leaf_y + _SWITCH_H + 10}" class="isl"/>')
        for i, (_, port, link, gbps) in enumerate(rows):
            r, c = divmod(i, per_row)
            x, y = x0 + c * cell_w, leaf_y + _SWITCH_H + 12 + r * (cell_h + 2)
            body.append(_port(link, port, gbps, figures.get(link), x, y, cell_w - 2, cell_h, labelled))
            deepest = max(deepest, y + cell_h)
    for name in [*spines, *lower]:
        y = top if name in spines else leaf_y
        body.append(f'<g class="sw{"" if labelled else " small"}"><rect x="{centre[name] - switch_w / 2:.0f}" y="{y}" '
                    f'width="{switch_w}" '
                    f'height="{_SWITCH_H}" rx="4"/><text x="{centre[name]:.0f}" y="{y + 17}">{_e(name)}</text>'
                    f"<title>{_e(name)} ({_e(tiers[name])}, {len(ports.get(name, []))} host ports)</title></g>")
    height = deepest + 12
    measured = sum(1 for _, share in figures.values() if share is not None)
    tiers_text = (f"{len(spines)} spines, {len(lower)} leaves" if spines else
                  f"{len(lower)} switch{'' if len(lower) == 1 else 'es'}")
    legend = (f'<p class="legend">{tiers_text}, '
              f"{sum(len(p) for p in ports.values())} host ports; {measured} links measured (share of line rate, "
              "the lower direction). Colour: the worst result about the link; pale: no result.</p>")
    return (f'<section class="fabric" aria-label="Fabric"><h2>Fabric</h2>{legend}<div class="svgbox">'
            f'<svg width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img">{"".join(body)}</svg></div></section>')


def _port(link: str, port: str, gbps: float, figure: tuple[Status, float | None] | None, x: float, y: float,
          w: float, h: float, labelled: bool) -> str:
    status, share = figure if figure else (None, None)
    colour = _COLOUR[status] if status is not None else _UNCHECKED
    measured = f" {share * 100:.1f}%" if share is not None else ""
    tip = f"{link} on {port} ({gbps:g}G){measured}" + (f": {status}" if status is not None else ": not checked")
    box = f'<rect x="{x:.0f}" y="{y:.0f}" width="{w:.0f}" height="{h}" fill="{colour}"><title>{_e(tip)}</title></rect>'
    if not labelled:
        return box
    ink = "#1d1d1d" if status is None else "#fff"
    return f'{box}<text x="{x + 4:.0f}" y="{y + 14:.0f}" fill="{ink}" class="port">{_e(link)}{measured}</text>'


def _e(text: object) -> str:
    return html.escape(clean(text), quote=True)
