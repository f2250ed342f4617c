"""How far a plan got on a switch, and what takes it back: the bookkeeping of a push.

Why: Onyx and MLNX-OS apply each config line the moment it is typed, so a session that drops or
stops answering in the middle of a plan leaves the lines before it in running config. To put the
switch back racfg must know exactly which lines the switch acknowledged, and that the line in
flight when the session went may or may not have taken effect (the switch executed it or not;
its answer never came). Pure data: nothing here talks to a switch (rollback.py does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from racfg.switches.drivers import Change, SwitchDriver


@dataclass
class PlanProgress:
    """One push of ``changes``: the CLI lines typed so far and the changes the switch acknowledged."""

    changes: list[Change]
    done: list[Change] = field(default_factory=list)  # acknowledged, in the order typed
    in_flight: Change | None = None  # typed, its answer not seen: it may or may not be applied
    sent: int = 0  # lines of the plan typed so far (SwitchDriver.commands), the one in flight included
    line: str = ""  # the last line typed
    config_session: str | None = None  # EOS: the config session the plan goes into

    @property
    def total(self) -> int:
        """Lines in the plan, as typed (mode lines and ``exit`` included)."""
        return len(SwitchDriver.commands(self.changes))

    def sending(self, line: str, change: Change | None = None) -> None:
        """``line`` is about to be typed; ``change``: the change it makes (None: a mode line or ``exit``)."""
        self.sent += 1
        self.line, self.in_flight = line, change

    def acknowledged(self) -> None:
        """The switch answered the line in flight without an error."""
        if self.in_flight is not None:
            self.done.append(self.in_flight)
        self.in_flight = None

    def touched(self) -> list[Change]:
        """Every change that may be on the switch now: those acknowledged, then the one in flight."""
        return [*self.done, *([self.in_flight] if self.in_flight is not None else [])]

    def where(self) -> str:
        """How far the plan got, for people: "at line 7 of 9 of the plan ('mtu 9000 force')"."""
        if self.sent == 0:
            return "before the first line of the plan"
        if self.sent > self.total:
            return f"at {self.line!r}, after all {self.total} lines of the plan were typed"
        return f"at line {self.sent} of {self.total} of the plan ({self.line!r})"


def undo_plan(changes: list[Change]) -> list[Change]:
    """The changes that take ``changes`` back: each one's undo line in its mode, the last change first
    (a later line may depend on an earlier one: an address on a port made routed, a neighbour of a
    BGP process). A change without an undo (a removed BGP process) has none here."""
    return [Change(c.context, c.undo, None, f"undo {c.what}") for c in reversed(changes) if c.undo]


def still_applied(touched: list[Change], replanned: list[Change]) -> list[Change]:
    """Of the changes ``touched`` by a cut push, those the switch holds now: the ones a new plan,
    made from the switch's state re-read after the rollback, no longer needs."""
    pending = {(c.context, c.line) for c in replanned}
    return [c for c in touched if (c.context, c.line) not in pending]


def by_hand(driver: SwitchDriver, changes: list[Change]) -> list[str]:
    """The CLI lines that take ``changes`` back, typed from the enable prompt: what a person types to
    finish a rollback racfg could not finish."""
    return [driver.config_command, *SwitchDriver.commands(undo_plan(changes))] if changes else []
