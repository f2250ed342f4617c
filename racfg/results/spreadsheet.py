"""CSV: one row per result, for a spreadsheet or a quick ``pandas.read_csv`` across many runs.

The header is fixed (``target,check,category,status,expected,actual,message,fix,seconds,cause``) so
files from different commands and different days concatenate (``cause``, the id of the problem
that explains the row, came last so older readers' columns keep their places). Rows held by a
problem come first, problem by problem, root first. Values are written as they are (the csv module
quotes commas, quotes and newlines); nothing is cleaned, so the data round-trips.
"""

from __future__ import annotations

import csv
import io

from racfg.results.model import Report
from racfg.results.wording import by_target, problem_views

CSV_COLUMNS = ("target", "check", "category", "status", "expected", "actual", "message", "fix", "seconds", "cause")


def render_csv(report: Report) -> str:
    """The report's results as CSV text: problems' results first, then reading order (``Report.sorted_results``)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    held = [r for view in problem_views(report) for r in view.results]
    rest = [g for group in by_target(report, outside_problems=True) for g in group.results]
    for r in held + rest:
        writer.writerow((r.target, r.check, r.category, str(r.status), r.expected or "", r.actual or "",
                         r.message, r.fix or "", f"{r.seconds:.3f}", r.cause or ""))
    return buffer.getvalue()
