"""One entry point to every renderer: ``render_report(report, fmt)`` and ``write_reports(report, dir)``.

Commands take ``--format`` and ``--output DIR`` and call these two, so adding a format is one
entry in ``RENDERERS`` and every command (check, validate, drift, smoke) gains it at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from racfg.errors import CannotRunError, UsageError
from racfg.results.html import render_html
from racfg.results.junit import render_junit
from racfg.results.markdown import render_markdown
from racfg.results.model import Report
from racfg.results.spreadsheet import render_csv
from racfg.results.table import render_table
from racfg.results.terminal import print_report


def render_json(report: Report) -> str:
    """``Report.as_dict`` with sorted keys and two-space indent: stable, diffable, ``Report.from_dict`` reads it."""
    return json.dumps(report.as_dict(), indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"


RENDERERS: dict[str, Callable[[Report], str]] = {
    "table": render_table,
    "json": render_json,
    "junit": render_junit,
    "md": render_markdown,
    "csv": render_csv,
    "html": render_html,
}
FORMATS = tuple(RENDERERS)

# What ``--output DIR`` leaves behind, file name per format (the table is for the terminal only).
REPORT_FILES = {"json": "results.json", "junit": "report.xml", "md": "report.md", "csv": "report.csv",
                "html": "report.html"}


def render_report(report: Report, fmt: str) -> str:
    """``report`` in format ``fmt`` (one of ``FORMATS``); an unknown format is the caller's mistake (exit 2)."""
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        raise UsageError(f"unknown report format {fmt!r}", hint="one of " + ", ".join(FORMATS)) from None
    return renderer(report)


def write_reports(report: Report, out_dir: Path) -> list[Path]:
    """Write every file report into ``out_dir`` (created if missing) and return their paths."""
    out_dir = Path(out_dir)
    written = []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for fmt, name in REPORT_FILES.items():
            path = out_dir / name
            path.write_text(render_report(report, fmt), encoding="utf-8", newline="")
            written.append(path)
    except OSError as exc:
        raise CannotRunError(f"{exc.filename or out_dir}: cannot write reports ({exc.strerror or exc})",
                             hint="choose another --output directory") from None
    return written


__all__ = ["FORMATS", "REPORT_FILES", "print_report", "render_report", "write_reports"]
