"""PNG plots of a smoke run, readable at a glance.

``links.png``: every dgx link's read and write figure as a share of its line rate, with the line
rate, the TCP ceiling at the link's MTU and the pass mark drawn across, and outliers in red.
``scaling.png``: aggregate throughput against the number of clients, with the ideal line
(n x T(1)), the reference band (between the floor and ideal), the budget's prediction and the knee.
``benchmark.png``: the same for the user's benchmark figure when there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display: must be set before pyplot is imported
import matplotlib.pyplot as plt

COLORS = {"read": "#1f77b4", "write": "#ff7f0e", "bad": "#d62728", "ideal": "#2ca02c", "budget": "#9467bd"}


def plot_links(path: Path, site: str, rows: Sequence[dict], floor: float, outliers: set[str]) -> Path:
    """``rows``: {link, direction, share, ceiling, measured_text}; one bar per link and direction."""
    links = list(dict.fromkeys(r["link"] for r in rows))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(links) + 2), 4.6))
    width = 0.38
    for d_index, direction in enumerate(("read", "write")):
        for i, link in enumerate(links):
            row = next((r for r in rows if r["link"] == link and r["direction"] == direction), None)
            if row is None:
                continue
            x = i + (d_index - 0.5) * width
            bad = row["share"] < floor or f"{direction}:{link}" in outliers
            ax.bar(x, row["share"] * 100, width, color=COLORS["bad"] if bad else COLORS[direction],
                   label=("below pass mark / outlier" if bad else direction) if i == 0 or bad else None,
                   edgecolor="black", linewidth=0.4)
            ax.text(x, row["share"] * 100 + 1, row["measured_text"], ha="center", va="bottom", fontsize=7,
                    rotation=90 if len(links) > 6 else 0)
    ceiling = min(r["ceiling"] for r in rows) * 100
    ax.axhline(100, color="black", linewidth=1.2, label="line rate (100%)")
    ax.axhline(ceiling, color="grey", linestyle="--", linewidth=1, label=f"TCP ceiling ({ceiling:.1f}%)")
    ax.axhline(floor * 100, color=COLORS["bad"], linestyle=":", linewidth=1.2, label=f"pass mark ({floor:.0%})")
    many = len(links) > 4
    ax.set_xticks(range(len(links)), links, rotation=30 if many else 0, ha="right" if many else "center")
    ax.set_ylabel("measured / line rate (%)")
    ax.set_ylim(0, 135)
    ax.set_title(f"{site}: link saturation per dgx link (iperf3 TCP)")
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    ax.legend(unique.values(), unique.keys(), loc="upper center", fontsize=8, ncols=3)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_scaling(path: Path, title: str, steps: Sequence[int], measured: Sequence[float], unit: str, floor: float,
                 predicted: Sequence[float] | None = None, knee: int | None = None,
                 reference: Sequence[tuple[int, float, float | None, float | None]] = (),
                 capacity: tuple[str, float] | None = None) -> Path:
    """Measured aggregate per step against ideal n x T(1), the floor band, the budget and the knee."""
    fig, ax = plt.subplots(figsize=(7.0, 4.6))
    base = measured[steps.index(1)] if 1 in steps else measured[0] / steps[0]
    xs = list(range(0, max(steps) + 1))
    ideal = [n * base for n in xs]
    ax.fill_between(xs, [floor * v for v in ideal], ideal, color=COLORS["ideal"], alpha=0.15,
                    label=f"linear band (E >= {floor:g})")
    ax.plot(xs, ideal, color=COLORS["ideal"], linestyle="--", linewidth=1.2, label="ideal n x T(1)")
    if predicted:
        ax.plot(steps, predicted, color=COLORS["budget"], linestyle="-.", marker="s", markersize=4,
                label="budget prediction")
    if capacity is not None:
        ax.axhline(capacity[1], color="black", linestyle=":", linewidth=1.2,
                   label=f"{capacity[0]} ({capacity[1]:.4g} {unit})")
    for n, value, low, high in reference:
        ax.errorbar([n], [value], yerr=[[value - (low if low is not None else value)],
                                        [(high if high is not None else value) - value]],
                    fmt="D", color="black", capsize=4, markersize=5,
                    label="reference" if n == reference[0][0] else None)
    ax.plot(steps, measured, color=COLORS["read"], marker="o", linewidth=2, label="measured")
    for n, value in zip(steps, measured, strict=True):
        ax.annotate(f"{value:.4g}", (n, value), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    if knee is not None:
        value = measured[steps.index(knee)]
        ax.annotate(f"knee: n={knee}", (knee, value), textcoords="offset points", xytext=(10, -25),
                    color=COLORS["bad"], fontsize=9, arrowprops={"arrowstyle": "->", "color": COLORS["bad"]})
        ax.plot([knee], [value], "o", color=COLORS["bad"], markersize=9, fillstyle="none", markeredgewidth=2)
    ax.set_xlabel("clients (n)")
    ax.set_ylabel(f"aggregate ({unit})")
    ax.set_xticks(steps)
    ax.set_xlim(0, max(steps) + 0.5)
    ax.set_ylim(0, max([*ideal, *measured, *(predicted or []), capacity[1] if capacity else 0]) * 1.15)
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
