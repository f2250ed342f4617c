"""One result model (``Result``, ``Report``) and its renderers, shared by check, validate, drift and smoke."""

from racfg.results.model import STATUS_ORDER, Report, Result, Status, expected_actual
from racfg.results.render import FORMATS, print_report, render_report, write_reports

__all__ = ["FORMATS", "STATUS_ORDER", "Report", "Result", "Status", "expected_actual", "print_report",
           "render_report", "write_reports"]
