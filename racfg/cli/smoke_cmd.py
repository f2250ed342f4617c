"""``racfg smoke``: link saturation and linear scaling, measured, judged, the bottleneck named."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import typer

from racfg.cli import options as opts
from racfg.cli.app import app
from racfg.cli.options import FORMAT_OPTION, INVENTORY_ARG, OUTPUT_OPTION, VERBOSE_OPTION, ResultFormat
from racfg.cli.providers import overrides_for
from racfg.cli.reporting import emit
from racfg.console import is_tty, say
from racfg.errors import ExitCode, UsageError
from racfg.results import Report
from racfg.run_record import RunRecord

SMOKE_EXIT = ("Exit codes: 0 every measurement met its reference; 1 something did not (a link below its share "
              "of line rate, scaling not linear, an outlier, drops on a switch port, a benchmark off its "
              "reference); 2 bad command line or invalid inventory; 3 could not measure (unreachable host, a "
              "deploy holding the site lock, interrupted). --compare: 1 when a metric got worse beyond the "
              "tolerance. --accept, --accept-run: 1 when the run is not a passing full run (the reason named), "
              "nothing recorded.")


class _Progress:
    """A bar over the whole run with the current step on a terminal; plain lines otherwise (CI logs)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar = None
        self.task = None

    def __call__(self, done: int, total: int, text: str) -> None:
        if not self.enabled:
            return
        if not is_tty(sys.stderr):
            typer.echo(f"smoke [{min(done + 1, total)}/{total}] {text}", err=True)
            return
        if self.bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("smoke"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                TextColumn("{task.description}"), console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(text, total=total)
        self.bar.update(self.task, completed=done, description=text)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@app.command(epilog=SMOKE_EXIT)
def smoke(
    inventory: Path | None = typer.Argument(None, help=INVENTORY_ARG.help, show_default=False),
    hosts: str | None = typer.Option(None, "--hosts", envvar="RACFG_HOSTS",
                                     help="Only these dgx hosts, comma separated (default: all)."),
    skip: str | None = typer.Option(None, "--skip", envvar="RACFG_SKIP",
                                    help="Leave out phases: links,scaling,storage,rdma,benchmark,nccl."),
    remeasure: int | None = typer.Option(
        None, "--remeasure", min=0, max=10, envvar="RACFG_REMEASURE", show_default=False,
        help="Measure a link, step or figure below its mark again up to N times before it fails; the best "
             "reading decides and the report lists every reading (default 2; 0: one reading decides)."),
    compare: tuple[str, str] | None = typer.Option(
        None, "--compare", help="Compare two runs (run directories or names under .racfg/runs): RUN_A RUN_B."),
    tolerance: float = typer.Option(0.05, "--tolerance", min=0, envvar="RACFG_TOLERANCE",
                                    help="--compare: a change within this share is 'same'."),
    accept: bool = typer.Option(False, "--accept", help="Keep this run's figures as the site's performance "
                                "baseline when it passes in full (no --skip, no --hosts); the earlier one is kept."),
    accept_run: str | None = typer.Option(
        None, "--accept-run", metavar="RUN", show_default=False,
        help="Keep a finished run (a run directory or its name under .racfg/runs) as the site's performance "
             "baseline, measuring nothing; it must have passed in full."),
    fmt: ResultFormat = FORMAT_OPTION,
    output: Path | None = OUTPUT_OPTION,
    verbose: bool = VERBOSE_OPTION,
) -> None:
    """Measure whether the cluster is fit for a benchmark campaign, on one screen.

    Every dgx data link with iperf3 in both directions (storage hosts send for reads), against its line
    rate and the TCP ceiling at its MTU; scaling from 1 to N clients at once, judged linear when every
    E(n) = T(n)/(n T(1)) meets acceptance.scaling_efficiency, else the knee and the bottleneck (storage
    links, a slow client, a client's CPU) with its utilisation; outliers below 93% of the best link;
    switch port drops and errors; fio reads (read-only); RDMA perftest where hosts have RDMA; the
    inventory's user benchmark; NCCL all-reduce bus bandwidth per node and per step against the GPUs'
    NVLink and the data NICs, a slow step's node named by pairwise runs (acceptance.smoke.nccl; skipped
    without GPUs where none are required). Where the inventory declares Slurm, iperf3 and fio run as job
    steps (srun) in a job holding the measured nodes; a node Slurm would not give is measured over SSH.
    Holds the site's deploy lock while it measures; changes nothing on hosts or switches. Each run is kept
    under `.racfg/runs/TIME-smoke/` with its plots. A clean full run (no --skip, no --hosts) can be kept as
    the site's performance baseline: --accept, or later --accept-run RUN without measuring again.
    """
    opts.writable_dir("smoke", "--output", output)
    if compare is not None:
        raise typer.Exit(_compare(compare, tolerance, fmt, output, verbose))
    if accept_run is not None:
        raise typer.Exit(_accept_run(accept_run))
    if inventory is None:
        raise UsageError("smoke: give an inventory file (or --compare RUN_A RUN_B, or --accept-run RUN)")
    _full_run_for_accept(accept, skip, hosts)
    from racfg.smoke.smoke_run import PHASES, SmokeOptions, run_smoke

    skipped = frozenset(opts.split_list(skip))
    opts.one_of("smoke", "--skip", sorted(skipped), PHASES, "phase")
    cluster = opts.inventory("smoke", inventory)
    opts.hosts_of_role("smoke", "--hosts", opts.split_list(hosts), cluster, "dgx")
    overrides = overrides_for(cluster)
    if fmt is ResultFormat.table:
        for line in overrides.substitutions:
            say(f"lab: {line}")
    record = RunRecord.create("smoke")
    progress = _Progress(enabled=True)
    options = SmokeOptions(hosts=opts.split_list(hosts) or None, skip=skipped,
                           progress=progress)
    if remeasure is not None:
        options.remeasure = remeasure
    try:
        report = run_smoke(cluster, overrides, options, record.path)
    except KeyboardInterrupt:
        progress.stop()
        typer.echo(f"racfg smoke: interrupted; every remote iperf3/fio was stopped; record {record.path}", err=True)
        raise typer.Exit(int(ExitCode.CANNOT_RUN)) from None
    finally:
        progress.stop()
    report.meta["run_record"] = str(record.path)
    report.meta["substitutions"] = list(overrides.substitutions)
    if output is not None:
        output.mkdir(parents=True, exist_ok=True)
        report.attachments = [str(shutil.copy2(p, output / Path(p).name)) for p in report.attachments]
    code = emit(report, fmt, output, record.path, verbose)
    if fmt is ResultFormat.table:
        say(f"run record: {record.path}")
    raise typer.Exit(_baseline_step(report, str(record.path), accept, code))


def _full_run_for_accept(accept: bool, skip: str | None, hosts: str | None) -> None:
    """--accept with --skip or --hosts is refused before anything is measured: it could not be kept."""
    if accept and (skip or hosts):
        raise UsageError("smoke: --accept keeps a full run only; leave out --skip and --hosts",
                         hint="a baseline holds every figure of the site, measured together")


def _baseline_step(report: Report, run: str, accept: bool, code: int) -> int:
    """After a run: with --accept, keep it as the performance baseline (or say why not, exit 1 at least);
    without, a clean full run says how to keep it without measuring again. Returns the exit code."""
    from racfg.baseline.performance import record_performance_baseline, why_not_baseline

    reasons = why_not_baseline(report)
    if accept and reasons:
        typer.echo(f"racfg smoke: not accepted as the performance baseline: {'; '.join(reasons)}", err=True)
        return code or int(ExitCode.FINDINGS)
    if accept:
        _recorded(report.site, record_performance_baseline(report, run))
    elif not reasons:
        typer.echo(f"a clean full run: keep its figures as the performance baseline of site {report.site} with: "
                   f"racfg smoke --accept-run {Path(run).name}", err=True)
    return code


def _accept_run(ref: str) -> int:
    """``--accept-run RUN``: a finished run as the performance baseline (1 and why, when it cannot be one)."""
    from racfg.baseline.performance import record_performance_baseline, why_not_baseline
    from racfg.smoke.compare import load_report

    with opts.refusals_of("smoke"):
        path, report = load_report(ref, option="--accept-run")
    reasons = why_not_baseline(report)
    if reasons:
        typer.echo(f"racfg smoke: {path.parent.name} not accepted as the performance baseline: {'; '.join(reasons)}",
                   err=True)
        return int(ExitCode.FINDINGS)
    _recorded(report.site, record_performance_baseline(report, str(path.parent)))
    return int(ExitCode.OK)


def _recorded(site: str, where: Path) -> None:
    from racfg.baseline.performance import list_performance_baselines

    kept = list_performance_baselines(site)
    earlier = f"; {len(kept) - 1} earlier kept in {where.name}.history" if len(kept) > 1 else ""
    # stderr, beside "reports written to": stdout carries the report (--format json reads it whole)
    typer.echo(f"performance baseline recorded: {where}{earlier}", err=True)


def _compare(runs: tuple[str, str], tolerance: float, fmt: ResultFormat, output: Path | None, verbose: bool) -> int:
    from racfg.smoke.compare import compare_reports, load_report

    with opts.refusals_of("smoke"):
        path_a, a = load_report(runs[0])
        path_b, b = load_report(runs[1])
    report = compare_reports(a, b, tolerance, (str(path_a.parent), str(path_b.parent)))
    return emit(report, fmt, output, None, verbose=True if fmt is ResultFormat.table else verbose)
