"""How validate, drift and smoke print a ``Report`` (their options are declared in options.py):
a table on the terminal (or another format on stdout), every report file under ``--output DIR``,
and always a copy in the run record.
"""

from __future__ import annotations

from pathlib import Path

import typer

from racfg.cli.options import ResultFormat
from racfg.console import say
from racfg.results import Report
from racfg.results.render import print_report, render_report, write_reports


def emit(report: Report, fmt: ResultFormat, output: Path | None, record_dir: Path | None,
         verbose: bool = False, show_skips: bool = False) -> int:
    """Print the report, write its files (run record, --output) and return its exit code."""
    if record_dir is not None:
        write_reports(report, record_dir)
    if output is not None:
        write_reports(report, output)
    if fmt is ResultFormat.table:
        print_report(report, verbose=verbose, show_skips=show_skips)
        if output is not None:
            say(f"reports written to {output}/ (report.html opens in a browser)")
    else:
        typer.echo(render_report(report, str(fmt)), nl=False)
    return int(report.exit_code())
