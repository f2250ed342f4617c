"""The one exception every host-fact parser raises on output it cannot read."""

from __future__ import annotations

from racfg.errors import CannotRunError


class ParseError(CannotRunError):
    """The output is not what ``tool`` prints (wrong command, an error message, a cut-off capture).

    A :class:`~racfg.errors.CannotRunError` because a check whose output cannot be read could not be
    checked (exit 3, status ERROR), which is different from a cluster that is wrong.
    """

    def __init__(self, tool: str, reason: str) -> None:
        super().__init__(f"{tool}: {reason}")
        self.tool = tool
        self.reason = reason
