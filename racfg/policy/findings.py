"""A policy finding: one way an inventory departs from the reference architecture."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from racfg.inventory.source import Loc, format_path

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """A rule's verdict on one place of the inventory.

    ``loc`` points into the file (so the message can name ``file:line path``); ``subject``
    names the expanded object when the place is a range (``dgx05``), since one line of a
    compact inventory stands for many hosts.
    """

    severity: Severity
    rule: str
    loc: Loc
    message: str
    hint: str | None = None
    subject: str | None = None
    expected: str | None = None
    actual: str | None = None

    @property
    def path(self) -> str:
        return format_path(self.loc)
