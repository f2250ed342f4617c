"""Switch errors, each meant to be read by a person (and mapped to racfg's exit codes)."""

from __future__ import annotations

from racfg.errors import CannotRunError, RacfgError, UsageError


class SwitchUnreachable(CannotRunError):
    """No SSH session could be opened (address, port, timeout in the message)."""


class SwitchAuthError(CannotRunError):
    """The switch refused the credentials."""


class SwitchCredentialsError(UsageError):
    """The password could not be found where the inventory says it is."""


class SwitchConfigError(RacfgError):
    """The switch rejected a command, or its state after a change is not the intended one."""

    def __init__(self, message: str, *, hint: str | None = None, applied: list[str] | None = None,
                 not_applied: list[str] | None = None, rejected: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.applied = applied or []
        self.not_applied = not_applied or []
        self.rejected = rejected
