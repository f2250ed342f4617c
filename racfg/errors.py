"""Exit codes and the error types that map onto them.

Every command exits with one of four codes (documented in README and ``--help``), so scripts
and CI can tell "the cluster is wrong" from "you called me wrong" from "I could not run".
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes shared by every racfg command."""

    OK = 0
    FINDINGS = 1  # policy errors, failed checks, drift, below-reference performance
    USAGE = 2  # bad command line or invalid inventory
    CANNOT_RUN = 3  # unreachable, missing prerequisite, internal error


EXIT_CODES_HELP = (
    "Exit codes: 0 all good; 1 findings (policy errors, failed checks, drift, "
    "below-reference performance); 2 bad command line or invalid inventory; "
    "3 could not run (unreachable, missing prerequisite, internal error)."
)


class RacfgError(Exception):
    """An error meant for a human: printed without a traceback, with an exit code."""

    exit_code: ExitCode = ExitCode.CANNOT_RUN

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message} (hint: {self.hint})"
        return self.message


class UsageError(RacfgError):
    """The user asked for something that cannot be done as asked (exit 2)."""

    exit_code = ExitCode.USAGE


class CannotRunError(RacfgError):
    """A prerequisite is missing or a target could not be reached (exit 3)."""

    exit_code = ExitCode.CANNOT_RUN
