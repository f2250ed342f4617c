"""Each figure over time as a PNG: one small panel per figure, drawn as racfg.smoke.plots draws
(matplotlib, Agg, files only).

Read at a glance: each panel is one figure against the runs in time order, its first run's value
dashed across (the figure the site had when the history starts), every point labelled with its
value, a band of +/-5% around the first (smoke --compare's default tolerance), a run that did not
pass drawn red, and the change from the first run in the panel's title, in red when it went the
figure's wrong way beyond that band (a hint to the eye, not a verdict). Every panel has the
same run axis, so a run lines up across them.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display: must be set before pyplot is imported
import matplotlib.pyplot as plt

from racfg.history.figure_table import FigureRow, History, number, percent

MOST_PANELS = 36
BAND = 0.05  # the band drawn around the first run: smoke --compare's default tolerance
COLUMNS = 3
LINE, FIRST, BAD = "#1f77b4", "#7f7f7f", "#d62728"


def plot_history(path: Path, history: History) -> tuple[Path, int]:
    """Draw the first ``MOST_PANELS`` rows; returns the file and how many figures it left out."""
    rows = history.rows[:MOST_PANELS]
    ncols = min(COLUMNS, len(rows))
    nrows = math.ceil(len(rows) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 2.9 * nrows + 0.6), squeeze=False,
                             layout="constrained")
    labels = [run.started.strftime("%m-%d %H:%M") for run in history.runs]
    failed = [run.outcome != "pass" for run in history.runs]
    for ax, row in zip(axes.flat, rows, strict=False):
        _panel(ax, row, failed)
        ax.set_xticks(range(len(labels)), labels, rotation=35 if len(labels) > 3 else 0,
                      ha="right" if len(labels) > 3 else "center", fontsize=7)
    for ax in list(axes.flat)[len(rows):]:
        ax.set_visible(False)
    shown = f" (first {MOST_PANELS} of {len(history.rows)} figures)" if len(history.rows) > MOST_PANELS else ""
    fig.suptitle(f"{history.site}: smoke figures over {len(history.runs)} run(s){shown}\n"
                 f"dashed: first run, band: first run +/-{BAND:.0%}, red point: a run that did not pass, "
                 "red title: changed the wrong way beyond the band",
                 fontsize=11)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path, len(history.rows) - len(rows)


def _panel(ax: plt.Axes, row: FigureRow, failed: list[bool]) -> None:
    points = [(i, v) for i, v in enumerate(row.values) if v is not None]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    ax.plot(xs, ys, color=LINE, linewidth=1.6, marker="o", markersize=4, zorder=2)
    ax.scatter([x for x in xs if failed[x]], [y for x, y in points if failed[x]], color=BAD, zorder=3, s=30)
    ax.axhline(ys[0], color=FIRST, linestyle="--", linewidth=1)
    ax.axhspan(ys[0] * (1 - BAND), ys[0] * (1 + BAND), color=FIRST, alpha=0.12, linewidth=0)
    for x, y in points:
        ax.annotate(number(y), (x, y), textcoords="offset points", xytext=(0, 5), ha="center", fontsize=7)
    low, high = min(ys), max(ys)
    pad = max((high - low) * 0.25, abs(ys[0]) * BAND * 2) or 1.0
    ax.set_ylim(max(0.0, low - pad) if low >= 0 else low - pad, high + pad * 1.6)
    change = row.change
    wrong = change is not None and (change < 0 if row.better == "higher" else change > 0) and abs(change) > BAND
    unit = f" [{row.unit}]" if row.unit else ""
    since_first = f"  {percent(change)}" if change is not None else ""
    ax.set_title(f"{row.name}{unit}{since_first}", fontsize=9, color=BAD if wrong else "black")
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=7)
    ax.set_xlim(-0.5, len(failed) - 0.5)
