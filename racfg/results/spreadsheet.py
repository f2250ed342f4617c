"""CSV: one row per result, for a spreadsheet or a quick ``pandas.read_csv`` across many runs.

The header is fixed (``target,check,category,status,expected,actual,message,fix,seconds``) so
files from different commands and different days concatenate. Values are written as they are
(the csv module quotes commas, quotes and newlines); nothing is cleaned, so the data round-trips.
"""

from __future__ import annotations

import csv
import io

from racfg.results.model import Report

CSV_COLUMNS = ("target", "check", "category", "status", "expected", "actual", "message", "fix", "seconds")


def render_csv(report: Report) -> str:
    """The report's results as CSV text, in reading order (``Report.sorted_results``)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in report.sorted_results():
        writer.writerow((r.target, r.check, r.category, str(r.status), r.expected or "", r.actual or "",
                         r.message, r.fix or "", f"{r.seconds:.3f}"))
    return buffer.getvalue()
