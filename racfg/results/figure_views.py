"""The report's places for figures judged against peers and over time: the heat map and the trends.

Issue 54 has smoke judge each node's and link's figure against its peers' median (point 3) and
``racfg history`` read the runs' key figures over time (point 5). Their computations live with them;
the HTML report only draws what they leave in ``Report.meta``, and shows nothing where they left
nothing (as every report does today):

- ``meta["peer_heatmap"]``: ``{"figures": [name, ...], "nodes": {node: [ratio or None, ...]}}``, each
  ratio the node's figure over its peers' median (1.0 the median), one per figure;
- ``meta["trends"]``: ``{figure: {"unit": str, "points": [[run label, value], ...]}}``, oldest first.
"""

from __future__ import annotations

import html
from typing import Any

from racfg.results.wording import clean


def heatmap_html(meta: dict[str, Any]) -> str:
    """Node x figure, each cell the node's share of its peers' median; the lowest nodes first."""
    data = meta.get("peer_heatmap")
    if not isinstance(data, dict) or not data.get("nodes"):
        return ""
    figures = list(data.get("figures", []))
    nodes = sorted(data["nodes"].items(), key=lambda item: min([r for r in item[1] if r is not None] or [1.0]))
    head = "<tr><th>node</th>" + "".join(f"<th><span>{_e(f)}</span></th>" for f in figures) + "</tr>"
    rows = "".join(f"<tr><th>{_e(node)}</th>" + "".join(_ratio_cell(r) for r in ratios) + "</tr>"
                   for node, ratios in nodes)
    return ('<section class="heatmap" aria-label="Against the peers"><h2>Against the peers<span class="tally">'
            "each figure as a share of its peers' median</span></h2>"
            f'<table class="matrix heat"><thead>{head}</thead><tbody>{rows}</tbody></table></section>')


def _ratio_cell(ratio: float | None) -> str:
    if ratio is None:
        return "<td></td>"
    shade = "p" if ratio >= 0.97 else "e" if ratio >= 0.9 else "f"
    return f'<td class="{shade}" title="{ratio * 100:.1f}% of the median">{ratio * 100:.0f}</td>'


def trends_html(meta: dict[str, Any]) -> str:
    """One small line per key figure over the earlier runs, its last value beside it."""
    data = meta.get("trends")
    if not isinstance(data, dict) or not data:
        return ""
    items = "".join(_trend(name, series) for name, series in data.items() if isinstance(series, dict))
    return f'<section class="trends" aria-label="Trends"><h2>Trends</h2><div class="trends">{items}</div></section>'


def _trend(name: str, series: dict[str, Any]) -> str:
    points = [(str(label), float(value)) for label, value in series.get("points", [])]
    if not points:
        return ""
    low, high = min(v for _, v in points), max(v for _, v in points)
    span = (high - low) or 1.0
    step = 150 / max(len(points) - 1, 1)
    line = " ".join(f"{5 + i * step:.1f},{31 - (v - low) / span * 26:.1f}" for i, (_, v) in enumerate(points))
    unit = _e(series.get("unit", ""))
    tip = _e("; ".join(f"{label}: {value:g}" for label, value in points))
    return (f'<figure class="trend"><svg width="160" height="36" role="img"><title>{tip}</title>'
            f'<polyline points="{line}" fill="none" stroke="#1565c0" stroke-width="1.5"/></svg>'
            f"<figcaption>{_e(name)}: {points[-1][1]:g} {unit}</figcaption></figure>")


def _e(text: object) -> str:
    return html.escape(clean(text), quote=True)
