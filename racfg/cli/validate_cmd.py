"""``racfg validate``: the post-install acceptance test, derived from the inventory."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path

import typer

from racfg.cli import options as opts
from racfg.cli.app import app
from racfg.cli.options import FORMAT_OPTION, INVENTORY_ARG, LIMIT_OPTION, OUTPUT_OPTION, VERBOSE_OPTION, ResultFormat
from racfg.cli.providers import overrides_for
from racfg.cli.reporting import emit
from racfg.console import is_tty
from racfg.validate import CATEGORIES

CATEGORY_HELP = "Only these categories: " + ", ".join(CATEGORIES) + "; repeatable."


class ReadVia(StrEnum):
    ssh = "ssh"
    slurm = "slurm"


VALIDATE_EXIT = ("Exit codes: 0 every check passed or was skipped with its reason; 1 a check failed; "
                 "2 bad command line or invalid inventory; 3 some checks could not run (unreachable "
                 "host or switch) and none failed.")


@app.command(epilog=VALIDATE_EXIT)
def validate(
    inventory: Path = INVENTORY_ARG,
    limit: str = LIMIT_OPTION,
    check: list[str] = typer.Option(None, "--check", "-k", envvar="RACFG_CHECK",
                                    help="Only checks whose id matches this glob (e.g. `*/network/mtu*`); repeatable."),
    category: list[str] = typer.Option(None, "--category", "-c", envvar="RACFG_CATEGORY",
                                       help=CATEGORY_HELP),
    fmt: ResultFormat = FORMAT_OPTION,
    output: Path = OUTPUT_OPTION,
    verbose: bool = VERBOSE_OPTION,
    show_skips: bool = typer.Option(False, "--show-skips", envvar="RACFG_SHOW_SKIPS",
                                    help="List each skipped check (by default skips are one line per reason)."),
    deep: bool = typer.Option(False, "--deep", envvar="RACFG_DEEP",
                              help="GPU servers: DCGM's level-2 diagnostic (minutes) instead of level 1 (seconds)."),
    read_via: ReadVia = typer.Option(ReadVia.ssh, "--read-via", envvar="RACFG_READ_VIA", case_sensitive=False,
                                     help="How hosts are read: `ssh` (one session per host) or `slurm` (one job "
                                          "step per partition, through the site's scheduler: for sites of "
                                          "hundreds of nodes; a node Slurm cannot run a job on is read over SSH, "
                                          "and the report says why)."),
) -> None:
    """Check that every host, NIC, cable and switch port is what the inventory says.

    Hosts are checked over SSH by the pytest-testinfra validators (one connection per host,
    all hosts at once); switches through the switch drivers' facts; cables from both ends with
    LLDP. Failures are grouped into problems, one per root cause (a port shut, a NIC down, lldpd
    stopped, an address moved, an MTU), each with its evidence, the failures it explains and one
    fix. Read-only: nothing is changed on any host or switch.
    """
    from racfg.validate.validate_run import ValidateOptions, run_validate  # pytest and paramiko: only here

    cluster = opts.inventory("validate", inventory)
    opts.limit("validate", "--limit", limit, cluster)
    opts.categories("validate", "--category", list(category or []))
    opts.check_globs("validate", "--check", list(check or []), cluster)
    opts.writable_dir("validate", "--output", output)
    overrides = overrides_for(cluster)
    live = is_tty(sys.stderr)

    def progress(target: str, status: str) -> None:
        if live:
            typer.echo(f"  {status:8} {target}", err=True)

    report, record = run_validate(cluster, ValidateOptions(limit, list(check or []), list(category or []), deep,
                                                           read_via.value),
                                  overrides,
                                  on_progress=progress)
    raise typer.Exit(emit(report, fmt, output, record.path, verbose, show_skips))
