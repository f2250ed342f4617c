"""Errors of the measurement layer, distinct from a below-reference result."""

from __future__ import annotations

from racfg.errors import CannotRunError


class MeasurementError(CannotRunError):
    """A measurement could not be made (a host lost, a tool missing, a tool that failed)."""
