"""``racfg deploy``: configure hosts and switches into the reference architecture."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path

import typer

from racfg.cli import options as opts
from racfg.cli.app import app
from racfg.cli.inventory_cmd import finding_text
from racfg.cli.options import INVENTORY_ARG
from racfg.cli.providers import announce_substitutions, overrides_for
from racfg.console import say
from racfg.deploy.deploy_run import DeployOptions, DeployOutcome, run_deploy
from racfg.deploy.view import print_recap
from racfg.errors import EXIT_CODES_HELP, ExitCode, UsageError
from racfg.inventory import Cluster
from racfg.playbook.module_processes import WAIT_S
from racfg.policy import evaluate


class RecapFormat(StrEnum):
    table = "table"
    json = "json"


def refuse_policy_errors(cluster: Cluster, force: bool) -> None:
    errors = [f for f in evaluate(cluster) if f.severity == "error"]
    if not errors:
        return
    for f in errors:
        typer.echo(f"ERROR   {finding_text(cluster, f)}", err=True)
    if not force:
        typer.echo(f"racfg: {len(errors)} policy error(s): deploy refused (fix them, or --force)", err=True)
        raise typer.Exit(int(ExitCode.FINDINGS))
    typer.echo(f"racfg: deploying despite {len(errors)} policy error(s) (--force)", err=True)


def confirm(cluster: Cluster, options: DeployOptions, yes: bool) -> None:
    if yes or options.check:
        return
    if not sys.stdin.isatty():
        raise UsageError("deploy changes hosts and switches; confirm with --yes when not on a terminal")
    scope = options.limit or "all hosts and switches"
    if not typer.confirm(f"Deploy site {cluster.name} ({scope}, {len(cluster.hosts)} hosts, "
                         f"{len(cluster.switches)} switches)?"):
        raise typer.Exit(int(ExitCode.USAGE))


def report(outcome: DeployOutcome, fmt: RecapFormat, show_diff: bool) -> None:
    if fmt is RecapFormat.json:
        typer.echo(json.dumps(outcome.as_dict(), indent=2))
        return
    if show_diff and outcome.diffs:
        for d in outcome.diffs:
            say(f"--- diff [{d['host']}] {d['task']}")
            say(d["diff"].rstrip())
    if outcome.could_not_run:  # no task ran: Ansible's own words, not a recap of zeros
        say(f"deploy: could not run: {outcome.could_not_run}", "red")
        say(f"run record: {outcome.record.path} (Ansible's whole output: artifacts/*/stdout)")
        return
    print_recap(outcome.hosts)
    totals = outcome.totals
    problems = [(h["host"], p) for h in outcome.hosts for p in h["problems"]]
    for host, problem in problems:
        say(f"  {host}: {problem}", "red")
    if outcome.interrupted:
        verdict = f"STOPPED ({outcome.stop_reason})" if outcome.stop_reason else "INTERRUPTED"
    elif outcome.exit_code == ExitCode.OK:
        verdict = "no changes" if totals["changed"] == 0 else f"{totals['changed']} change(s)"
    else:
        verdict = "FAILED"
    skips = sum(len(h.get("skips", [])) for h in outcome.hosts)
    if skips and outcome.exit_code == ExitCode.OK:
        verdict += f", {skips} skipped with reason (the inventory allows it; listed above)"
    for line in stop_lines(outcome):
        say(line, "yellow")
    say(f"deploy: {verdict}: ok={totals['ok']} changed={totals['changed']} failed={totals['failed']} "
        f"unreachable={totals['unreachable']}", "green" if outcome.exit_code == ExitCode.OK else "red")
    if outcome.lock_lost:
        say(f"deploy: the site lock was lost ({outcome.lock_lost}): the run stopped there, as on Ctrl-C; "
            "another run may have started beside it (`racfg lock show`)", "red")
    baseline_lines(outcome)
    say(f"run record: {outcome.record.path}")


def baseline_lines(outcome: DeployOutcome) -> None:
    """What the run did with the baseline: recorded (for which targets), or why not, target by target."""
    verdict = outcome.baseline_verdict
    for line in verdict.lines() if verdict else []:
        say(line, "red")
    if outcome.baseline:
        renewed = f" (new facts of {', '.join(verdict.recorded)})" if verdict and verdict.recorded else ""
        say(f"baseline recorded in {outcome.baseline}{renewed}")
    elif outcome.baseline_error:
        say(f"baseline NOT recorded, the previous one stays: {outcome.baseline_error}", "yellow")
    elif verdict and verdict.note:
        say(f"baseline: {verdict.note}")


def stop_lines(outcome: DeployOutcome) -> list[str]:
    """What a stopped run applied and did not, host by host, and what became of its module processes."""
    if not outcome.interrupted:
        return []
    if outcome.stopped_reading:
        lines = ["stopped while reading the hosts (that pass changes nothing): nothing was applied"]
    else:
        lines = ["stopped: what each host applied before the stop, and what was in flight then:"]
        for h in outcome.hosts:
            done = f"{len(h['changes'])} change(s): {'; '.join(h['changes'])}" if h["changes"] else "no change"
            lines.append(f"  {h['host']}: applied {done}")
            if h.get("in_flight"):
                lines.append(f"  {h['host']}: in flight, may be partly applied: {h['in_flight']}")
        lines.append("  not applied: every task after these; `racfg deploy` again converges the rest")
    lines += [f"  {left.describe()}" for left in outcome.leftovers]
    if not outcome.leftovers:
        lines.append("  no module process of this run was left running on any host")
    return lines


def deploy_options(limit: str | None, tags: str | None, skip_tags: str | None, check: bool, diff: bool,
                   forks: int, verbose: bool, allow_reboot: bool, stop_wait: float = WAIT_S) -> DeployOptions:
    return DeployOptions(limit=limit, tags=tags, skip_tags=skip_tags, check=check, diff=diff, forks=forks,
                         verbose=verbose, allow_reboot=allow_reboot, stop_wait=stop_wait)


@app.command(epilog=EXIT_CODES_HELP + " Stopped (Ctrl-C, SIGTERM, the site lock lost): 3, the run record is kept.")
def deploy(
    inventory: Path = INVENTORY_ARG,
    limit: str | None = typer.Option(None, "--limit", "-l", envvar="RACFG_LIMIT",
                                     help="Only these hosts or groups (Ansible pattern: dgx01,storage)."),
    tags: str | None = typer.Option(None, "--tags", "-t", envvar="RACFG_TAGS",
                                    help="Only these roles: common,fabric,ofed,gpu,nfs_client,nvme_storage,weka,"
                                    "switch (an unknown name is refused)."),
    skip_tags: str | None = typer.Option(None, "--skip-tags", envvar="RACFG_SKIP_TAGS", help="Skip these roles."),
    check: bool = typer.Option(False, "--check", envvar="RACFG_CHECK", help="Plan only: change nothing."),
    diff: bool = typer.Option(False, "--diff", envvar="RACFG_DIFF", help="Show what changes (or would change)."),
    forks: int = typer.Option(20, "--forks", min=1, max=500, envvar="RACFG_FORKS", help="Hosts in parallel."),
    yes: bool = typer.Option(False, "--yes", "-y", envvar="RACFG_YES", help="Do not ask for confirmation."),
    fmt: RecapFormat = typer.Option(RecapFormat.table, "--format", "-f", envvar="RACFG_FORMAT",
                                    help="Recap format: table, or json for automation."),
    verbose: bool = typer.Option(False, "--verbose", "-v", envvar="RACFG_VERBOSE", help="Show task output."),
    force: bool = typer.Option(False, "--force", envvar="RACFG_FORCE", help="Deploy despite policy errors."),
    allow_reboot: bool = typer.Option(False, "--allow-reboot", envvar="RACFG_ALLOW_REBOOT",
                                      help="Let roles reboot or restart drivers when an install needs it."),
    stop_wait: float = typer.Option(WAIT_S, "--stop-wait", min=0, envvar="RACFG_STOP_WAIT",
                                    help="A stopped run (Ctrl-C, SIGTERM, the site lock lost) waits this many seconds "
                                    "for its module processes on the hosts to end, then stops them, before it "
                                    "releases the site lock. A second Ctrl-C stops them at once."),
) -> None:
    """Configure the inventory's hosts and switches into the reference architecture.

    Checks the inventory (refuses policy errors unless --force), renders it, and runs
    playbooks/site.yml through ansible-runner with a live view. A second run changes nothing.
    Every run leaves `.racfg/runs/TIME-deploy/` (full log, events, rendered inventory,
    results.json).

    The baseline `racfg drift` compares against is a good state: a full run (no --limit, --tags or
    --skip-tags) records the facts of each host and switch it changed (or that the baseline lacks)
    only when the run succeeded there and it then passes validate's checks (run on those targets
    only); one that fails keeps its last good facts, and the recap names it with its problem and
    fix. A run that changed nothing keeps the baseline it has and runs no validate; a --limit,
    --tags or --skip-tags run records none.

    Ctrl-C, SIGTERM or a lost site lock stop the run: no task starts after it, the run's module
    processes still running on the hosts are awaited (--stop-wait), then stopped, and only then is
    the site lock released; the recap says what was applied, what was in flight, and what was stopped.
    """
    opts.tags("deploy", "--tags", tags)
    opts.tags("deploy", "--skip-tags", skip_tags)
    cluster = opts.inventory("deploy", inventory)
    opts.limit("deploy", "--limit", limit, cluster)
    refuse_policy_errors(cluster, force)
    options = deploy_options(limit, tags, skip_tags, check, diff, forks, verbose, allow_reboot, stop_wait)
    options.progress_to_stderr = fmt is RecapFormat.json
    overrides = overrides_for(cluster)
    announce_substitutions(overrides, to_stderr=fmt is RecapFormat.json)
    confirm(cluster, options, yes)
    outcome = run_deploy(cluster, options, overrides=overrides)
    report(outcome, fmt, diff)
    raise typer.Exit(int(outcome.exit_code))
