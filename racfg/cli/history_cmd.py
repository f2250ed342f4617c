"""``racfg history``: a site's smoke figures over time, from its run records; reads, never writes one."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from racfg.cli import options as opts
from racfg.cli.app import app
from racfg.cli.options import INVENTORY_ARG
from racfg.errors import CannotRunError, UsageError
from racfg.paths import state_dir

if TYPE_CHECKING:
    from racfg.history.figure_table import History

HISTORY_EXIT = ("Exit codes: 0 the figures were listed; 2 bad command line, invalid inventory, a --figure "
                "no run measured, a --since leaving no run, a --plot not a .png or in a directory that cannot "
                "be written; 3 no smoke run of the site is recorded (or none can be read), or the plot failed.")


class HistoryFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


@app.command(epilog=HISTORY_EXIT)
def history(
    inventory: Path = INVENTORY_ARG,
    figure: list[str] = typer.Option(
        None, "--figure", "-F", envvar="RACFG_FIGURE", show_default=False,
        help="Only figures matching this glob, per-item ones included (e.g. `scaling.*`, `link.read.*`); "
             "repeatable or comma separated."),
    every: bool = typer.Option(False, "--all",
                               help="Every figure of each run, each link and host, not only the key ones."),
    since: str | None = typer.Option(
        None, "--since", show_default=False,
        help="Runs from this run (its name) or date on (2026-11-28, 2026-11-28T09:00; UTC)."),
    last: int | None = typer.Option(None, "--last", "-n", min=1, show_default=False, help="Only the last N runs."),
    fmt: HistoryFormat = typer.Option(HistoryFormat.table, "--format", "-f",
                                      help="A table, JSON (runs and figures), or CSV (one line per run and figure)."),
    plot: Path | None = typer.Option(None, "--plot", show_default=False,
                                     help="Also draw each figure over the runs into this PNG file."),
) -> None:
    """List the site's smoke runs over time and their key figures, from the run records.

    The runs are the smoke records of the inventory's site under `.racfg/runs/` (`$RACFG_STATE_DIR`),
    oldest first, each with its time, name and outcome. The key figures are the site-wide ones
    (each scaling step's aggregate T(n) and efficiency E(n), storage throughput and IOPS per step,
    the spine crossing, NCCL bus bandwidth per step, the benchmark's figure) and, for each per-item
    family (links per direction, RDMA per tool, NCCL per node, storage per host), its worst item and
    median; `--all` adds every per-item figure. Each figure shows its value in every run and the
    change from the first run. A record that cannot be read is skipped with a warning naming it.
    Reads the records only: it writes no run record and changes nothing.
    """
    from racfg.history.figure_table import as_csv, as_json, as_text, build_history, pick_runs
    from racfg.history.run_figures import read_site_runs

    globs = [part for value in figure or [] for part in opts.split_list(value)]
    if plot is not None and plot.suffix.lower() != ".png":
        opts.refuse("history", "--plot", plot, "draws a PNG: give a file name ending in .png")
    if plot is not None:
        opts.writable_dir("history", "--plot", plot.parent)
    cluster = opts.inventory("history", inventory)
    runs_dir = state_dir() / "runs"
    found = read_site_runs(runs_dir, cluster.name)
    for skipped in found.skipped:
        typer.echo(f"racfg history: warning: skipped {skipped}", err=True)
    if not found.runs:
        others = f"; {found.other_sites} smoke run(s) of other sites are there" if found.other_sites else ""
        raise CannotRunError(f"history: no smoke run of site {cluster.name} is recorded under {runs_dir}{others}",
                             hint=f"run 'racfg smoke {inventory}' first, or point RACFG_STATE_DIR at the "
                                  "project's state directory")
    runs = pick_runs(found.runs, since, last)
    if not runs:
        raise UsageError(f"history: --since {since}: none of the {len(found.runs)} smoke run(s) of site "
                         f"{cluster.name} started then or later (the last: {found.runs[-1].name})")
    table = build_history(cluster.name, runs, globs, every)
    render = {HistoryFormat.table: as_text, HistoryFormat.json: as_json, HistoryFormat.csv: as_csv}[fmt]
    typer.echo(render(table).rstrip("\n"))
    if plot is not None:
        _draw(plot, table)


def _draw(path: Path, table: History) -> None:
    from racfg.history.history_plot import plot_history

    try:
        _, left_out = plot_history(path, table)
    except OSError as exc:
        raise CannotRunError(f"history: --plot {path}: cannot be written ({exc.strerror or exc})") from None
    note = f" ({left_out} more figures left out: pick them with --figure)" if left_out else ""
    typer.echo(f"racfg history: plot {path}{note}", err=True)
