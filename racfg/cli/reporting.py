"""The result options every result-printing command shares: ``--format``, ``--output``, ``--verbose``.

validate, drift and smoke print a ``Report`` the same way: a table on the terminal (or another
format on stdout), every report file under ``--output DIR``, and always a copy in the run record.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from racfg.console import say
from racfg.results import Report
from racfg.results.render import print_report, render_report, write_reports


class ResultFormat(StrEnum):
    table = "table"
    json = "json"
    junit = "junit"
    md = "md"
    csv = "csv"


FORMAT_OPTION = typer.Option(ResultFormat.table, "--format", "-f", envvar="RACFG_FORMAT",
                             help="Results on stdout as a table, JSON, JUnit XML, Markdown or CSV.")
OUTPUT_OPTION = typer.Option(None, "--output", "-o", envvar="RACFG_OUTPUT",
                             help="Also write results.json, report.xml, report.md, report.csv and a "
                                  "self-contained report.html into this directory.")
LIMIT_OPTION = typer.Option(None, "--limit", "-l", envvar="RACFG_LIMIT",
                            help="Hosts, switches or groups (dgx, storage, switches), comma separated; globs.")
VERBOSE_OPTION = typer.Option(False, "--verbose", "-v", envvar="RACFG_VERBOSE", help="List passing checks too.")


def emit(report: Report, fmt: ResultFormat, output: Path | None, record_dir: Path | None,
         verbose: bool = False) -> int:
    """Print the report, write its files (run record, --output) and return its exit code."""
    if record_dir is not None:
        write_reports(report, record_dir)
    if output is not None:
        write_reports(report, output)
    if fmt is ResultFormat.table:
        print_report(report, verbose=verbose)
        if output is not None:
            say(f"reports written to {output}/ (report.html opens in a browser)")
    else:
        typer.echo(render_report(report, str(fmt)), nl=False)
    return int(report.exit_code())
