"""Apply intended state to a switch: read, plan the minimal changes, push, verify on re-read facts, save.

Onyx and MLNX-OS have no atomic commit: lines go one by one; on the first rejected line racfg
stops and types the undo of every line already applied, so running config is all-old again.
EOS changes go through a config session: the switch's own ``show session-config diffs`` is
kept, and a rejected line aborts the session, leaving running config untouched.
A session that drops or stops answering in the middle of a plan is given up and the switch put
back as it was on a new one (rollback.py): the applied lines undone, or the config session aborted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from racfg.switches import config_sessions
from racfg.switches.drivers import Change, SwitchDriver, get_driver
from racfg.switches.facts import SwitchFacts
from racfg.switches.intent import IntendedSwitch
from racfg.switches.progress import PlanProgress
from racfg.switches.rollback import SESSION_LOST, abandon, lost_cause, lost_outside_plan, rollback, type_undo
from racfg.switches.session import SwitchSession, SwitchTarget
from racfg.switches.switch_errors import SwitchConfigError


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


def push_lines(session: SwitchSession, changes: list[Change], progress: PlanProgress | None = None) -> None:
    """Mellanox: type lines in config mode; on rejection undo what was applied, then raise.

    ``progress`` keeps what the switch acknowledged: a session lost on the way (an error of
    rollback.SESSION_LOST, raised as it comes) is rolled back from it."""
    driver, target = session.driver, session.target
    progress = progress or PlanProgress(changes)
    session.send_line(driver.config_command, driver.config_prompt)

    def send(line: str, change: Change | None = None) -> str:
        progress.sending(line, change)
        out = session.send_line(line, driver.config_prompt)
        if not session.rejected(out):
            progress.acknowledged()
        return out

    current: str | None = None
    try:
        for index, change in enumerate(changes):
            if change.context != current:
                if current is not None:
                    send("exit")
                if change.context is not None:
                    out = send(change.context)
                    if session.rejected(out):
                        raise _Rejected(change.context, session.rejected(out) or "", index)
                current = change.context
            error = session.rejected(send(change.line, change))
            if error:
                raise _Rejected(change.line, error, index)
        if current is not None:
            send("exit")
    except _Rejected as rej:
        undone = _undo(session, progress.done)
        session.conn.exit_config_mode()
        raise _rejection(target, rej.line, rej.error, [c.line for c in progress.done],
                         [c.line for c in changes[rej.index:]], undone) from None
    session.conn.exit_config_mode()


class _Rejected(Exception):
    def __init__(self, line: str, error: str, index: int) -> None:
        super().__init__(line)
        self.line, self.error, self.index = line, error, index


def _undo(session: SwitchSession, applied: list[Change]) -> str:
    """Type the undo lines of ``applied`` in reverse order; say what running config now holds."""
    if not applied:
        return "nothing was applied, running config unchanged"
    failed = type_undo(session, applied)
    if failed:
        return (f"{len(applied)} lines were applied and undoing {len(failed)} failed ({failed[0]!r}): "
                "running config is mixed")
    return f"the {len(applied)} lines applied before it were undone: running config unchanged"


def push_session(session: SwitchSession, changes: list[Change], commit: bool = True,
                 progress: PlanProgress | None = None) -> str:
    """EOS: push inside a ``configure session`` of racfg's own; commit (or abort on rejection / when
    commit=False). ``progress`` keeps the session's name (apply_switch picks one no pending session
    has), so a session lost on the way can be aborted from a new one."""
    driver, target = session.driver, session.target
    progress = progress or PlanProgress(changes)
    name = progress.config_session = progress.config_session or config_sessions.new_name(set())
    session.send_line(f"configure session {name}", driver.config_prompt)
    lines = SwitchDriver.commands(changes)
    for index, line in enumerate(lines):
        progress.sending(line)
        out = session.send_line(line, driver.config_prompt)
        error = session.rejected(out)
        if error:
            session.send_line("abort", driver.enable_prompt)
            raise SwitchConfigError(
                f"switch {target.name}: command {line!r} rejected: {error}; config session {name} aborted, "
                "running config unchanged",
                applied=[], not_applied=lines[index:], rejected=line,
            )
    progress.sending("show session-config diffs")
    diff = session.send_line("show session-config diffs", driver.config_prompt)
    progress.sending("commit" if commit else "abort")
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
        with lost_outside_plan(session, "while reading the switch, before any change: nothing was changed",
                               as_before=True):
            result, changes = planned(driver, target, intended, session.facts())
        if check or not changes:
            return result
        _push(session, intended, result, changes)
        with lost_outside_plan(session, "after the whole plan was applied, before it was verified and saved: "
                                        "running config holds the plan, unsaved (run the deploy again)",
                               as_before=False):
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


def _push(session: SwitchSession, intended: IntendedSwitch, result: ApplyResult, changes: list[Change]) -> None:
    """Push the plan (EOS: in a new config session of racfg's own, after aborting the ones earlier runs
    left); a session lost on the way is given up and the switch put back on a new one (rollback.py)."""
    progress = PlanProgress(changes)
    try:
        if session.driver.platform == "eos":
            pending, notes = config_sessions.abort_stale(session)
            result.warnings += notes
            progress.config_session = config_sessions.new_name(pending)
            result.session_diff = push_session(session, changes, progress=progress)
        else:
            push_lines(session, changes, progress)
    except SESSION_LOST as exc:
        cause = lost_cause(session, exc)
        abandon(session)
        raise rollback(session.target, intended, result.before, progress, cause) from None


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
