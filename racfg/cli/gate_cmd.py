"""``racfg gate``: keep jobs off the nodes racfg finds broken, and give back the ones it repaired."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path

import typer

from racfg.cli import options as opts
from racfg.cli.app import app
from racfg.cli.options import INVENTORY_ARG
from racfg.cli.providers import overrides_for
from racfg.console import is_tty, print_table, say
from racfg.errors import UsageError
from racfg.scheduler.gate_plan import Action

GATE_EXIT = ("Exit codes: 0 no node to drain and none held drained by racfg (nodes resumed, if any); 1 a node is "
             "broken: drained now, kept drained, held back by the circuit breaker, or drained by someone else "
             "with a problem racfg found; 2 bad command line or invalid inventory (no scheduler section); 3 could "
             "not run (the Slurm controller or slurmctld unreachable, a drain or resume Slurm refused, a node "
             "that could not be read or that Slurm does not know, and no broken node).")


class GateFormat(StrEnum):
    table = "table"
    json = "json"


@app.command(epilog=GATE_EXIT)
def gate(
    inventory: Path = INVENTORY_ARG,
    max_drain: str = typer.Option(None, "--max-drain", envvar="RACFG_MAX_DRAIN", metavar="SHARE",
                                  help="The circuit breaker: the largest share of any partition racfg may hold "
                                  "drained, as 0.1 or 10% (never fewer than one node). Default: scheduler.max_drain."),
    dry_run: bool = typer.Option(False, "--dry-run", envvar="RACFG_DRY_RUN",
                                 help="Print the plan; drain and resume nothing."),
    performance: bool = typer.Option(False, "--performance", help="Add drift's quick performance layer (it loads "
                                     "the fabric: run it when no job does)."),
    fmt: GateFormat = typer.Option(GateFormat.table, "--format", "-f", envvar="RACFG_FORMAT", help="table or json."),
    forks: int = typer.Option(20, "--forks", min=1, max=500, envvar="RACFG_FORKS",
                              help="Parallel hosts for drift's Ansible layers."),
) -> None:
    """Drain the Slurm nodes racfg finds broken, resume the ones it drained that are fixed.

    Reads the site as `racfg drift` does (config, state: validate's checks, environment; with
    `--performance` also its quick performance layer), then decides each node of the
    scheduler's partitions: a node with a problem is drained with the reason
    `racfg: PROBLEM-ID fix: FIX` (128 characters at most); a problem on a switch port drains the
    host cabled there, one on a whole switch every host cabled to it; a node racfg drained whose
    problems are gone is resumed. A drain someone else set (any reason not starting `racfg:`) is
    never touched. A node whose read failed is unknown: never drained, never resumed. The
    circuit breaker never lets racfg hold more than `--max-drain` of a partition drained: over
    it, none of that partition's new drains happen, and the run says what it would have drained.
    Slurm is asked with `scontrol` on the controller over SSH (`scheduler.commands: ssh`) or
    where racfg runs (`local`).
    """
    from racfg.scheduler.gate_run import GateOptions, run_gate

    cluster = opts.inventory("gate", inventory)
    if cluster.inventory.scheduler is None:
        raise UsageError(f"gate: {cluster.display} declares no scheduler: nothing to drain",
                         hint="add a scheduler section (type slurm, controller, partitions): see docs/gate.md")
    share = _share(max_drain)
    live = is_tty(sys.stderr)

    def progress(text: str) -> None:
        if live:
            typer.echo(f"  gate {text}", err=True)

    run = run_gate(cluster, GateOptions(share, dry_run, performance, forks), overrides_for(cluster), progress)
    if fmt is GateFormat.json:
        typer.echo(json.dumps(run.as_dict(), indent=2))
    else:
        _print(run)
    raise typer.Exit(int(run.exit_code()))


def _share(text: str | None) -> float | None:
    """``0.1`` or ``10%`` as a share in (0, 1]; anything else is exit 2."""
    if text is None:
        return None
    raw = text.strip()
    try:
        share = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        opts.refuse("gate", "--max-drain", text, "expected a share such as 0.1 or 10%")
    if not 0 < share <= 1:
        opts.refuse("gate", "--max-drain", text, "the share must be above 0 and at most 1 (100%)")
    return share


def _print(run) -> None:
    plan = run.plan
    rows = [[d.node, ",".join(d.partitions), d.state or "-", str(d.action),
             d.reason if d.action in (Action.DRAIN, Action.KEEP, Action.HELD) and d.reason else
             "; ".join([*d.problems, *([d.note] if d.note else [])])]
            for d in plan.decisions]
    title = f"Gate plan ({run.slurm}; breaker {plan.max_drain:.0%} of a partition)"
    print_table(title + (" - dry run, nothing changed" if run.dry_run else ""),
                ["node", "partitions", "slurm state", "action", "reason / problems"], rows)
    for trip in plan.trips:
        say(f"circuit breaker: {trip.sentence()}")
    for where in run.elsewhere:
        say(f"not on a node (nothing drained for it): {where}")
    for failure in run.failed:
        say(f"Slurm refused: {failure}")
    counts = {a: len(plan.of(a)) for a in Action}
    verb = "would drain" if run.dry_run else "drained"
    say(f"gate: {counts[Action.DRAIN]} {verb}, {counts[Action.RESUME]} "
        f"{'would resume' if run.dry_run else 'resumed'}, {counts[Action.KEEP]} kept drained, "
        f"{counts[Action.HELD]} held by the breaker, {counts[Action.OTHERS]} drained by others (untouched), "
        f"{counts[Action.UNKNOWN] + counts[Action.ABSENT]} unknown; record {run.record}")
