"""Apply intended state to a switch: read, plan the minimal changes, push, verify on re-read facts, save.

Onyx and MLNX-OS have no atomic commit: lines go one by one; on the first rejected line racfg
stops and types the undo of every line already applied, so running config is all-old again.
EOS changes go through a config session: the switch's own ``show session-config diffs`` is
kept, and a rejected line aborts the session, leaving running config untouched.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from racfg.switches.drivers import Change, SwitchDriver, get_driver
from racfg.switches.errors import SwitchConfigError
from racfg.switches.facts import SwitchFacts
from racfg.switches.intent import IntendedSwitch
from racfg.switches.session import SwitchSession, SwitchTarget


@dataclass
class ApplyResult:
    name: str
    changed: bool
    changes: list[str]  # human-readable
    commands: list[str]  # the CLI lines (to be) typed
    before: str  # managed config as observed
    after: str  # managed config as intended
    session_diff: str = ""
    saved: bool = False
    facts: SwitchFacts | None = None
    warnings: list[str] = field(default_factory=list)


def _rejection(target: SwitchTarget, line: str, error: str, applied: list[str], rest: list[str], undone: str
               ) -> SwitchConfigError:
    return SwitchConfigError(
        f"switch {target.name}: command {line!r} rejected: {error}; {undone}",
        applied=applied, not_applied=rest, rejected=line,
    )


def push_lines(session: SwitchSession, changes: list[Change]) -> None:
    """Mellanox: type lines in config mode; on rejection undo what was applied, then raise."""
    driver, target = session.driver, session.target
    session.send_line(driver.config_command, driver.config_prompt)
    applied: list[Change] = []
    current: str | None = None
    try:
        for index, change in enumerate(changes):
            if change.context != current:
                if current is not None:
                    session.send_line("exit", driver.config_prompt)
                if change.context is not None:
                    out = session.send_line(change.context, driver.config_prompt)
                    if session.rejected(out):
                        raise _Rejected(change.context, session.rejected(out) or "", index)
                current = change.context
            out = session.send_line(change.line, driver.config_prompt)
            error = session.rejected(out)
            if error:
                raise _Rejected(change.line, error, index)
            applied.append(change)
        if current is not None:
            session.send_line("exit", driver.config_prompt)
    except _Rejected as rej:
        undone = _undo(session, applied)
        raise _rejection(target, rej.line, rej.error, [c.line for c in applied],
                         [c.line for c in changes[rej.index:]], undone) from None
    finally:
        session.conn.exit_config_mode()


class _Rejected(Exception):
    def __init__(self, line: str, error: str, index: int) -> None:
        super().__init__(line)
        self.line, self.error, self.index = line, error, index


def _undo(session: SwitchSession, applied: list[Change]) -> str:
    """Type the undo lines of ``applied`` in reverse order; say what running config now holds."""
    if not applied:
        return "nothing was applied, running config unchanged"
    driver = session.driver
    undo = [Change(c.context, c.undo, None, "") for c in reversed(applied) if c.undo]
    failed = []
    for line in [ln for ln in SwitchDriver.commands(undo)]:
        out = session.send_line(line, driver.config_prompt)
        if session.rejected(out):
            failed.append(line)
    if failed:
        return (f"{len(applied)} lines were applied and undoing {len(failed)} failed ({failed[0]!r}): "
                "running config is mixed")
    return f"the {len(applied)} lines applied before it were undone: running config unchanged"


def push_session(session: SwitchSession, changes: list[Change], commit: bool = True) -> str:
    """EOS: push inside ``configure session``; commit (or abort on rejection / when commit=False)."""
    driver, target = session.driver, session.target
    name = f"racfg-{os.getpid()}-{int(time.time())}"
    session.send_line(f"configure session {name}", driver.config_prompt)
    lines = SwitchDriver.commands(changes)
    for index, line in enumerate(lines):
        out = session.send_line(line, driver.config_prompt)
        error = session.rejected(out)
        if error:
            session.send_line("abort", driver.enable_prompt)
            raise SwitchConfigError(
                f"switch {target.name}: command {line!r} rejected: {error}; config session {name} aborted, "
                "running config unchanged",
                applied=[], not_applied=lines[index:], rejected=line,
            )
    diff = session.send_line("show session-config diffs", driver.config_prompt)
    answer = session.send_line("commit" if commit else "abort", driver.enable_prompt)
    # A commit can fail after every line was accepted (a port that will not take its link
    # settings): that is an error to report, whatever the re-read switch says afterwards.
    error = session.rejected(answer) if commit else None
    if error:
        raise SwitchConfigError(
            f"switch {target.name}: commit of config session {name} failed: {error}; the running config may "
            "differ from the intent (read it back with racfg validate --category switches)",
            applied=[], not_applied=lines, rejected="commit",
        )
    kept = [ln for ln in diff.splitlines() if not ln.rstrip().endswith(")#")]
    return "\n".join(ln for ln in kept if ln.strip() != "show session-config diffs")


def planned(driver: SwitchDriver, target: SwitchTarget, intended: IntendedSwitch, facts: SwitchFacts
            ) -> tuple[ApplyResult, list[Change]]:
    """What would change on a switch whose facts are ``facts``, and the changes to type."""
    changes = driver.plan(intended, facts)
    result = ApplyResult(
        name=target.name, changed=bool(changes), changes=[c.what for c in changes],
        commands=driver.commands(changes), before=driver.render(intended, facts),
        after=driver.render(intended), facts=facts,
    )
    if intended.os_version and intended.os_version not in facts.version:
        result.warnings.append(f"OS version: Expected: {intended.os_version} Actual: {facts.version}")
    return result, changes


def plan_from_facts(name: str, platform: str, intended: IntendedSwitch, facts: SwitchFacts) -> ApplyResult:
    """What would change on switch ``name`` whose facts were read already (drift's one read), no login."""
    target = SwitchTarget(name=name, platform=platform, host="")
    return planned(get_driver(platform), target, intended, facts)[0]


def apply_switch(target: SwitchTarget, intended: IntendedSwitch, *, check: bool = False, save: bool = True,
                 facts: SwitchFacts | None = None) -> ApplyResult:
    """Make one switch match ``intended`` (check=True: only report what would change).

    ``facts``: the switch as read already in this run (drift reads each switch once for all its
    layers); a check then plans from them without logging in. A change always reads the switch
    it changes, so ``facts`` is for a check only."""
    if facts is not None:
        if not check:
            raise ValueError("facts read earlier plan a check only: a change reads the switch it changes")
        return planned(get_driver(target.platform), target, intended, facts)[0]
    with SwitchSession(target) as session:
        driver = session.driver
        result, changes = planned(driver, target, intended, session.facts())
        if check or not changes:
            return result
        if driver.platform == "eos":
            result.session_diff = push_session(session, changes)
        else:
            push_lines(session, changes)
        # Postcondition on facts read back from the switch, compared with the intent itself (a
        # re-plan would share any blind spot of the planner, e.g. a setting it does not read).
        after = session.facts()
        unmet = driver.unmet(intended, after)
        if unmet:
            raise SwitchConfigError(
                f"switch {target.name}: after applying, the switch is not as intended: {'; '.join(unmet)}",
                applied=result.commands,
            )
        result.facts = after
        if save:
            driver_save(session, driver)
            result.saved = True
        return result


def driver_save(session: SwitchSession, driver: SwitchDriver) -> None:
    """``configuration write`` (in config mode on Mellanox) / ``write memory`` (EOS)."""
    if driver.platform == "eos":
        out = session.send_line(driver.save_command, driver.enable_prompt)
    else:
        session.send_line(driver.config_command, driver.config_prompt)
        out = session.send_line(driver.save_command, driver.config_prompt)
        session.conn.exit_config_mode()
    error = session.rejected(out)
    if error:
        raise SwitchConfigError(f"switch {session.target.name}: saving the config failed: {error}")
