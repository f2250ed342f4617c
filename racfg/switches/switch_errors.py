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


class SwitchSessionLost(CannotRunError):
    """A switch session dropped or stopped answering while racfg changed the switch. The message says
    how far the plan got and what the switch holds now; ``as_before``: nothing of the plan is on the
    switch (it never got there, or it was rolled back); ``remaining``: the plan's lines the switch
    may still hold; ``by_hand``: the CLI lines that would take them back."""

    def __init__(self, message: str, *, hint: str | None = None, as_before: bool,
                 remaining: list[str] | None = None, by_hand: list[str] | None = None) -> None:
        super().__init__(message, hint=hint)
        self.as_before = as_before
        self.remaining = remaining or []
        self.by_hand = by_hand or []
