"""``racfg demo``: the main job end to end on the virtual lab (what `make demo` runs).

The demo tells the whole story a user needs before trusting racfg with a site: the lab is built,
the reference architecture deployed, the result accepted by validate (which includes the
jumbo-frame matrix), measured by a short smoke, and written as one HTML report; the last lines
summarise each step. The lab is reached through the provider (cli/providers.py) like every command;
``racfg demo`` comes with the lab package (racfg-lab): without it, it says how to install it and exits 3.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import typer

from racfg.cli.app import app
from racfg.cli.deploy_cmd import RecapFormat, refuse_policy_errors, report
from racfg.cli.options import INVENTORY_ARG
from racfg.cli.providers import (
    announce_substitutions,
    lab_down,
    lab_installed,
    lab_passwords_for_unset_env,
    lab_up,
    overrides_for,
    register_lab_missing,
)
from racfg.console import say
from racfg.deploy.deploy_run import DeployOptions, DeployOutcome, run_deploy
from racfg.errors import EXIT_CODES_HELP, ExitCode
from racfg.inventory import load_cluster
from racfg.paths import private_files, state_dir
from racfg.results import Report, Status
from racfg.results.render import print_report, write_reports


def demo(
    inventory: Path = INVENTORY_ARG,
    keep: bool = typer.Option(True, "--keep/--down", envvar="RACFG_DEMO_KEEP",
                              help="Leave the lab up afterwards to explore it (default), or remove it."),
    smoke: bool = typer.Option(True, "--smoke/--no-smoke", envvar="RACFG_DEMO_SMOKE",
                               help="Run the short smoke after validate (default), or leave it out."),
) -> None:
    """Build the virtual lab of INVENTORY, deploy the reference architecture, validate it, smoke it, report.

    Runs `racfg lab up`, `racfg deploy --yes`, `racfg validate` and a short `racfg smoke`, writes one
    HTML report of validate and smoke, and ends with a summary. Safe to run again: the lab is reused
    and the deploy changes nothing. What the lab replaces (inbox OFED for MLNX_OFED, unchecked drive
    models, Ethernet stand-ins for InfiniBand NICs) is printed before the deploy and kept in its run record.
    """
    from racfg.smoke.smoke_run import SmokeOptions, run_smoke  # iperf3 plumbing and pytest: only here
    from racfg.validate.validate_run import ValidateOptions, run_validate

    cluster = load_cluster(inventory)
    refuse_policy_errors(cluster, force=False)
    steps = 4 if smoke else 3
    say(f"== 1/{steps} lab up {inventory}")
    built = lab_up(inventory, progress=lambda text: say(f"lab: {text}"))
    say(f"lab {cluster.name}: " + ("built" if built else "already up, reused"))
    password_lines, exports = lab_passwords_for_unset_env(cluster)
    overrides = overrides_for(cluster)
    overrides = replace(overrides, substitutions=(*overrides.substitutions, *password_lines))
    announce_substitutions(overrides)
    with private_files():  # the steps that write records: 0600 files (the lab above keeps its modes)
        say(f"== 2/{steps} deploy {inventory}")
        outcome = run_deploy(cluster, DeployOptions(), overrides=overrides)
        report(outcome, RecapFormat.table, show_diff=False)
        reports: list[Report] = []
        if outcome.exit_code == ExitCode.OK:
            say(f"== 3/{steps} validate {inventory}")
            validated, _ = run_validate(cluster, ValidateOptions(None, [], []), overrides)
            _show(validated)
            reports.append(validated)
            if smoke:
                say(f"== 4/{steps} smoke {inventory} (short: the lab's line rate, a few seconds per measurement)")
                out = state_dir() / "demo" / cluster.name / "smoke"
                out.mkdir(parents=True, exist_ok=True)
                measured = run_smoke(cluster, overrides, SmokeOptions(), out)
                _show(measured)
                reports.append(measured)
        report_dir = _write_report(cluster.name, reports)
    say("")
    for line in summary_lines(outcome, reports):
        say(line)
    if report_dir is not None:
        say(f"report: {report_dir / 'report.html'}")
    _after(inventory, keep, exports)
    codes = [outcome.exit_code, *(r.exit_code() for r in reports)]
    raise typer.Exit(int(max(codes)))


if lab_installed():
    app.command(epilog=EXIT_CODES_HELP)(demo)
else:
    register_lab_missing("demo", "Build the virtual lab of INVENTORY, deploy the reference architecture, validate "
                         "it, smoke it, report.")


def _show(rep: Report) -> None:
    """A clean step in one line (its skips, each with its reason, are in the report); a failing one in full."""
    if rep.exit_code() == ExitCode.OK:
        say(f"{rep.command}: {rep.summary_line()}; every result, each skip with its reason, in the report")
    else:
        print_report(rep)


def _write_report(site: str, reports: list[Report]) -> Path | None:
    """One report of validate and smoke together (``.racfg/demo/SITE/report.html`` and its siblings)."""
    if not reports:
        return None
    merged = Report(command="demo", site=site, results=[r for rep in reports for r in rep.results],
                    elapsed=sum(r.elapsed for r in reports),
                    notes=[n for rep in reports for n in rep.notes],
                    attachments=[a for rep in reports for a in rep.attachments])
    out = state_dir() / "demo" / site
    write_reports(merged, out)
    return out


def summary_lines(outcome: DeployOutcome, reports: list[Report]) -> list[str]:
    """One line per step: deploy counts, validate's verdicts, links against line rate, scaling."""
    totals = outcome.totals
    changes = "no changes" if totals["changed"] == 0 else f"changed={totals['changed']}"
    lines = [f"summary: deploy {changes} failed={totals['failed']} unreachable={totals['unreachable']}"]
    for rep in reports:
        counts = rep.counts()
        lines.append(f"summary: {rep.command}: {counts['pass']} passed, {counts['fail']} failed, "
                     f"{counts['skip']} skipped, {counts['error']} errors")
        if rep.command == "smoke":
            lines += _smoke_figures(rep)
    return lines


def _smoke_figures(rep: Report) -> list[str]:
    shares = [r.data["share_of_line"] for r in rep.results
              if r.status in (Status.PASS, Status.FAIL) and "share_of_line" in r.data]
    efficiency = [m["value"] for r in rep.results for m in r.data.get("metrics", [])
                  if m["name"].startswith("scaling.efficiency.")]
    lines = []
    if shares:
        lines.append(f"summary: links at {min(shares):.1%}-{max(shares):.1%} of line rate ({len(shares)} measured)")
    if efficiency:
        lines.append(f"summary: scaling efficiency {min(efficiency):.2f} at worst "
                     f"({len(efficiency)} steps)")
    return lines


def _after(inventory: Path, keep: bool, exports: list[str]) -> None:
    if keep:
        say(f"the lab stays up: `racfg lab status {inventory}`, `racfg lab exec dgx01 -- ip -br addr`, "
            f"and `racfg lab down {inventory}` (or `make demo-down`) to remove it")
        if exports:
            say("before `racfg validate`, `drift`, `smoke` or `deploy` on this lab, set the switch password "
                "variable(s) the inventory names: " + "; ".join(exports))
    else:
        lab_down(inventory)
        say("lab removed")
