"""A switch session lost in the middle of a plan: the switch put back as it was, and said so.

Why: a plan is several config lines, and the SSH session that types them can drop (the management
path goes away, the switch's CLI restarts) or stop answering (netmiko then waits for a prompt that
never comes) at any line. Half a plan is a switch nobody intended: a port at the new MTU beside one
at the old. So the session is given up (the dead one cannot be trusted to take anything back),
and on a new session:

- Onyx / MLNX-OS (no transactions): the undo of every line the switch acknowledged, and of the line
  in flight (it may have taken effect), is typed last first;
- EOS: the plan never left its config session unless the commit was in flight, so that session,
  left pending by the dead CLI, is aborted (racfg's own, by its name: config_sessions.py);

then the switch is read again and compared with what it held before the plan. The error raised
(exit 3, could not run) names the switch, how far the plan got, and either that the switch is as
it was, or exactly which lines of the plan it still holds and what to type to take them back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from netmiko.exceptions import ReadException, ReadTimeout, WriteException

from racfg.errors import RacfgError
from racfg.ssh.hostkeys import SshProtocolError
from racfg.switches import config_sessions
from racfg.switches.drivers import Change, SwitchDriver, get_driver
from racfg.switches.facts import SwitchFacts
from racfg.switches.intent import IntendedSwitch
from racfg.switches.progress import PlanProgress, by_hand, still_applied, undo_plan
from racfg.switches.session import SwitchSession, SwitchTarget
from racfg.switches.switch_errors import SwitchSessionLost

# What a session that dropped or stopped answering raises: netmiko's read timeout (a closed channel
# reads as one too) and read/write errors, paramiko's, and the socket's.
SESSION_LOST: tuple[type[BaseException], ...] = (ReadException, WriteException, SshProtocolError, OSError,
                                                 EOFError)


def lost_cause(session: SwitchSession, exc: BaseException) -> str:
    """What happened to the session, for people: it dropped, or it stopped answering."""
    if isinstance(exc, ReadTimeout):
        alive = False
        with contextlib.suppress(Exception):  # netmiko's own check: a NUL written, the transport asked
            alive = bool(session.conn.is_alive())
        waited = f"no answer within {session.target.command_timeout:g} s"
        return f"the switch stopped answering ({waited})" if alive else f"the SSH session dropped ({waited})"
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"the SSH session dropped ({reason})"


def abandon(session: SwitchSession) -> None:
    """Close a lost session's transport without the CLI's goodbye: netmiko's disconnect first leaves
    config mode and says ``exit``, waiting for prompts a hung switch never sends."""
    if session.conn is not None:
        with contextlib.suppress(Exception):
            session.conn.paramiko_cleanup()
        session.conn = None


@contextlib.contextmanager
def lost_outside_plan(session: SwitchSession, when: str, *, as_before: bool) -> Iterator[None]:
    """A session lost while racfg reads the switch, before or after its plan (nothing to roll back):
    the error that says so, instead of netmiko's. ``as_before``: nothing of the plan was typed yet."""
    try:
        yield
    except SESSION_LOST as exc:
        cause = lost_cause(session, exc)
        abandon(session)
        raise SwitchSessionLost(f"switch {session.target.name}: {cause} {when}", as_before=as_before) from None


def type_undo(session: SwitchSession, changes: list[Change]) -> list[str]:
    """In config mode: type the undo of ``changes``, last first (progress.undo_plan); the lines the
    switch rejected."""
    prompt = session.driver.config_prompt
    return [line for line in SwitchDriver.commands(undo_plan(changes))
            if session.rejected(session.send_line(line, prompt))]


def rollback(target: SwitchTarget, intended: IntendedSwitch, before: str, progress: PlanProgress,
             cause: str) -> SwitchSessionLost:
    """Put the switch back on a new session and read it again; the error that reports it all."""
    head = f"switch {target.name}: {cause} {progress.where()}"
    eos = progress.config_session is not None
    driver = get_driver(target.platform)
    try:
        with SwitchSession(target, driver) as session:
            if eos:
                aborted = _abort_own(session, progress)
                rejected: list[str] = []
            else:
                session.send_line(driver.config_command, driver.config_prompt)
                rejected = type_undo(session, progress.touched())
                session.conn.exit_config_mode()
            after = session.facts()
    except (RacfgError, *SESSION_LOST) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return _not_put_back(target, head, progress, reason)
    if driver.render(intended, after) == before:
        name = progress.config_session
        what = _undone(progress) if not eos else (
            f"on a new session racfg aborted its config session {name} (never committed)" if aborted
            else f"its config session {name} was not pending (never opened)")
        return SwitchSessionLost(f"{head}; {what}; read again, the switch is as before the plan: rolled back, "
                                 "nothing saved", hint="run the deploy again to apply the whole plan", as_before=True)
    if eos and not driver.unmet(intended, after):
        return SwitchSessionLost(f"{head}; the commit of config session {progress.config_session} went through "
                                 "before the session was lost: the whole plan is in running-config, not saved",
                                 hint="run the deploy again to verify and save it", as_before=False)
    return _still_there(target, driver, intended, head, progress, after, rejected, before)


def _abort_own(session: SwitchSession, progress: PlanProgress) -> bool:
    """Abort racfg's own config session of the cut push if the switch still has it pending."""
    name = progress.config_session or ""
    if name not in config_sessions.pending(session):
        return False
    config_sessions.abort(session, name)
    return True


def _undone(progress: PlanProgress) -> str:
    done, flight = len(progress.done), progress.in_flight is not None
    if not done:
        return "on a new session the change in flight was undone" if flight else "nothing of the plan had been applied"
    flight_too = " and the one in flight" if flight else ""
    return f"on a new session the {done} change(s) the switch had acknowledged{flight_too} were undone, last first"


def _shown(changes: list[Change]) -> str:
    return ", ".join(repr(f"{c.context}: {c.line}" if c.context else c.line) for c in changes)


def _typed(lines: list[str]) -> str:
    return " / ".join(repr(line) for line in lines)


def _not_put_back(target: SwitchTarget, head: str, progress: PlanProgress, reason: str) -> SwitchSessionLost:
    """The new session could not be had (or was lost too): what the switch may still hold."""
    if progress.config_session is not None:
        name = progress.config_session
        committed = "whether its commit went through is unknown (read the switch: racfg validate)" \
            if progress.line == "commit" else "running-config is unchanged (nothing was committed)"
        lines = [f"configure session {name}", "abort"]
        return SwitchSessionLost(
            f"{head}; rolling back failed: {reason}; {committed}; config session {name} stays pending until "
            f"racfg's next change on {target.name} aborts it, or by hand: {_typed(lines)}",
            as_before=False, by_hand=lines)
    touched = progress.touched()
    if not touched:
        return SwitchSessionLost(f"{head}; nothing had been applied, but the switch could not be read again: {reason}",
                                 as_before=False)
    lines = by_hand(get_driver(target.platform), touched)
    unsure = " (the last one unconfirmed)" if progress.in_flight is not None else ""
    return SwitchSessionLost(
        f"{head}; rolling back failed: {reason}; these lines of the plan remain applied{unsure}: {_shown(touched)}; "
        f"to finish the rollback, type on {target.name}: {_typed(lines)}",
        as_before=False, remaining=[c.line for c in touched], by_hand=lines)


def _still_there(target: SwitchTarget, driver: SwitchDriver, intended: IntendedSwitch, head: str,
                 progress: PlanProgress, after: SwitchFacts, rejected: list[str], before: str) -> SwitchSessionLost:
    """Read again after the rollback, the switch is not as before the plan: say what it still holds."""
    still = still_applied(progress.touched(), driver.plan(intended, after))
    refused = f" (the switch refused {_typed(rejected)})" if rejected else ""
    if still:
        lines = by_hand(driver, still)
        return SwitchSessionLost(
            f"{head}; rolling back on a new session left these lines of the plan applied{refused}: {_shown(still)}; "
            f"to finish the rollback, type on {target.name}: {_typed(lines)}",
            as_before=False, remaining=[c.line for c in still], by_hand=lines)
    now = driver.render(intended, after).splitlines()
    was = before.splitlines()
    diff = [f"-{line}" for line in was if line not in now] + [f"+{line}" for line in now if line not in was]
    return SwitchSessionLost(f"{head}; after the rollback the switch does not read as before the plan{refused}: "
                             f"{_typed(diff)}", as_before=False)

