"""``racfg drift``: what changed since the last good state, as a plan to read before a benchmark."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from racfg.cli import options as opts
from racfg.cli.app import app
from racfg.cli.options import FORMAT_OPTION, INVENTORY_ARG, LIMIT_OPTION, OUTPUT_OPTION, ResultFormat
from racfg.cli.providers import overrides_for
from racfg.connection import ConnectionOverrides
from racfg.console import is_tty, print_table, say
from racfg.drift.drift_run import LAYERS, READ_LAYERS, DriftOptions, accept, list_baselines, run_drift
from racfg.drift.plan_text import render_plan
from racfg.errors import CannotRunError, ExitCode, UsageError
from racfg.inventory import Cluster
from racfg.results.render import render_report, write_reports

DRIFT_EXIT = ("Exit codes: 0 no drift; 1 drift (config, state or environment) or, with --performance, a figure "
              "dropped beyond its noise; 2 bad command line or invalid inventory; 3 could not run (a deploy holds "
              "the site, a host unreachable, facts unreadable).")


@app.command(epilog=DRIFT_EXIT)
def drift(
    inventory: Path = INVENTORY_ARG,
    limit: str = LIMIT_OPTION,
    baseline: str = typer.Option(None, "--baseline", envvar="RACFG_BASELINE",
                                 help="Compare against this older baseline (see --history) instead of the current."),
    history: bool = typer.Option(False, "--history", help="List the site's baselines and exit."),
    accept_now: bool = typer.Option(False, "--accept", help="Make the facts read now the new baseline "
                                    "(after showing what it accepts); the previous one is kept."),
    yes: bool = typer.Option(False, "--yes", "-y", envvar="RACFG_YES", help="Do not ask (required off a terminal)."),
    fmt: ResultFormat = FORMAT_OPTION,
    output: Path = OUTPUT_OPTION,
    forks: int = typer.Option(20, "--forks", min=1, max=500, envvar="RACFG_FORKS",
                              help="Parallel hosts for the Ansible layers."),
    full_check: bool = typer.Option(False, "--full-check", envvar="RACFG_FULL_CHECK",
                                    help="config layer: run every role in check mode (as deploy --check --diff) "
                                    "instead of the roles' reads; also plans what the reads do not compare "
                                    "(the GPU driver, the array mount, Weka, MLNX_OFED, the IPoIB mode)."),
    performance: bool = typer.Option(False, "--performance", help="Add the performance layer: measure every item "
                                     "of the site's performance baseline (racfg smoke --accept) now, with smoke's "
                                     "tools. It loads the fabric: run it when no job does."),
    quick: bool = typer.Option(False, "--quick", help="With --performance: every item briefly (loads of half "
                               "the length, scaling at 1 and N clients, no user benchmark)."),
    layer: list[str] = typer.Option(None, "--layer", metavar="LAYER", help="Run only this layer (repeatable): "
                                    "config, state, environment or performance."),
) -> None:
    """Show what changed since the last good deploy, on three layers, read-only.

    **config**: what a deploy would change now, per host and switch, from the roles' own reads
    (one module run per host and play) with each file's diff; `--full-check` runs every role in
    check + diff mode instead;
    **state**: the validate checks that fail now; **environment**: facts now (packages, kernel,
    OFED, NICs, drives, GPU driver, switch OS and ports; on a leaf-spine site also the ISLs, BGP
    sessions and routes, each change with its cause) against the baseline the last successful
    deploy recorded, read by the config layer's run on its way (each host and switch read once).
    **performance** (`--performance`, opt-in because it loads the fabric): each item of the site's
    performance baseline (each link each way, scaling steps, storage figures, RDMA ports, NCCL steps,
    the benchmark) measured now with smoke's own tools, an item below its baseline measured again,
    and each drop beyond the item's noise tied to what the other layers found on its host, NIC,
    switch port or path.
    Output reads like `terraform plan`, with the fix for each target.
    Nothing is changed on any host or switch.
    """
    cluster = opts.inventory("drift", inventory)
    opts.limit("drift", "--limit", limit, cluster)
    if baseline is not None:
        opts.one_of("drift", "--baseline", [baseline], [b["id"] for b in list_baselines(cluster.name)],
                    "baseline", f"baselines of site {cluster.name}")
    opts.writable_dir("drift", "--output", output)
    layers = _layers(layer, performance, quick)
    if history:
        _print_history(cluster)
        raise typer.Exit(0)
    overrides = overrides_for(cluster)
    live = is_tty(sys.stderr)

    def progress(text: str) -> None:
        if live:
            typer.echo(f"  drift {text}", err=True)

    options = DriftOptions(limit=limit, baseline_id=baseline, forks=forks, full_check=full_check, quick=quick)
    if accept_now:
        _accept(cluster, options, overrides, progress, yes)
        return
    if "performance" in layers and limit:
        opts.refuse("drift", "--limit", limit, "the performance layer measures the whole site (its baseline's items)")
    _refuse_what_cannot_be_read(cluster, limit, overrides, environment_only=not set(layers) & {"config", "state"})
    run = run_drift(cluster, options, overrides, progress, layers=layers)
    write_reports(run.report, run.record.path)
    (run.record.path / "plan.txt").write_text(render_plan(run.report))
    if output is not None:
        write_reports(run.report, output)
        (output / "plan.txt").write_text(render_plan(run.report))
    if fmt is ResultFormat.table:
        typer.echo(render_plan(run.report), nl=False)
    else:
        typer.echo(render_report(run.report, str(fmt)), nl=False)
    raise typer.Exit(int(run.report.exit_code()))


def _print_history(cluster: Cluster) -> None:
    rows = [[b["id"] + (" (current)" if b["current"] else ""), b["recorded"], b["source"]]
            for b in list_baselines(cluster.name)]
    if not rows:
        say(f"no baseline for site {cluster.name} yet: a full, successful `racfg deploy` records one")
    else:
        print_table(f"Baselines of site {cluster.name}", ["id", "recorded", "source"], rows)


def _layers(layer: list[str] | None, performance: bool, quick: bool) -> tuple[str, ...]:
    """The layers asked for, in their order: --layer's, else the three read-only ones; --performance adds its own."""
    opts.one_of("drift", "--layer", layer or [], LAYERS, "layer")
    wanted = {*(layer or READ_LAYERS), *(["performance"] if performance else [])}
    if quick and "performance" not in wanted:
        raise UsageError("drift: --quick is the performance layer's brief form: add --performance")
    return tuple(name for name in LAYERS if name in wanted)


def _refuse_what_cannot_be_read(cluster: Cluster, limit: str | None, overrides: ConnectionOverrides,
                                environment_only: bool) -> None:
    """Before any connection: what the run would lack on this machine (a switch's password, the
    OFED source the check-mode deploy plans with). A lab inventory with no lab up lands here: its
    switches' passwords come from the running lab. Drift is read-only, so this is "could not run"
    (exit 3), never a deploy's refusal."""
    from racfg.deploy.deploy_run import DeployOptions, switches_in_scope
    from racfg.deploy.preflight import preflight_problems, switch_credential_problems

    switches = switches_in_scope(cluster, DeployOptions(limit=limit, check=True))
    problems = (switch_credential_problems(cluster, switches, overrides) if environment_only
                else preflight_problems(cluster, switches, overrides))
    if problems:
        raise CannotRunError("drift: could not run, nothing was read:\n  " + "\n  ".join(problems))


def _accept(cluster, options: DriftOptions, overrides, progress, yes: bool) -> None:
    """Read the facts now, show the environment changes they bring, ask, and keep them."""
    if options.limit:
        raise UsageError("--accept records the whole site's facts; it takes no --limit")
    # Off a terminal nobody can answer the question below: refuse before reading every host and
    # switch, not after (plain `racfg drift` shows what --accept would take).
    if not yes and not sys.stdin.isatty():
        raise UsageError("--accept replaces the baseline; confirm with --yes when not on a terminal",
                         hint="racfg drift shows the changes --accept would take")
    _refuse_what_cannot_be_read(cluster, None, overrides, environment_only=True)
    run = run_drift(cluster, options, overrides, progress, layers=("environment",))
    if run.facts_now is None:
        typer.echo(render_plan(run.report), nl=False)
        raise typer.Exit(int(ExitCode.CANNOT_RUN))
    typer.echo(render_plan(run.report), nl=False)
    if not yes and not typer.confirm(f"Accept these facts as the new baseline of site {cluster.name}?"):
        raise typer.Exit(int(ExitCode.USAGE))
    path = accept(cluster, run)
    say(f"accepted: {path} is the new baseline; the previous one is in the history (racfg drift --history)")
