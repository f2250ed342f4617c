"""One result model (``Result``, ``Report``) and its renderers, shared by check, validate, drift and smoke."""

from racfg.results.model import STATUS_ORDER, Report, Result, Status, expected_actual

__all__ = ["STATUS_ORDER", "Report", "Result", "Status", "expected_actual"]
