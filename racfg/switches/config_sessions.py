"""EOS configuration sessions: the ones racfg opens, finds pending, and aborts.

Why: EOS applies nothing typed in a ``configure session`` until ``commit``, so a plan cut short
before its commit never reaches running-config. But the session does not go away with the CLI
that opened it: EOS keeps it pending until it is committed or aborted, it times out (24 hours)
or the switch reboots, and a switch holds only a few pending sessions (five by default). So racfg
names its sessions ``racfg-<time>-<random>`` (never one that exists), aborts its own on a new
connection when a session was cut, and, before each change, aborts every pending ``racfg-``
session that no CLI is in (left by a run that died). It never commits a session it did not open
in the same connection, and never touches a session of another name, nor one a CLI is in now
(another run at work).
"""

from __future__ import annotations

import json
import secrets
import time

from racfg.switches.session import SwitchSession
from racfg.switches.switch_errors import SwitchConfigError

PREFIX = "racfg-"
# ``detail``: each pending session with its instances (the CLIs in it now)
LIST_COMMAND = "show configuration sessions detail | json"


def pending(session: SwitchSession) -> dict[str, bool]:
    """The switch's pending config sessions: name -> whether a CLI is in it now."""
    text = session.show(LIST_COMMAND)
    try:
        sessions = json.loads(text).get("sessions") or {}
    except (ValueError, AttributeError):
        raise SwitchConfigError(f"switch {session.target.name}: {LIST_COMMAND!r} did not answer JSON: "
                                f"{text.strip()[:120]!r}") from None
    return {str(name): bool(info.get("instances")) for name, info in sessions.items()
            if isinstance(info, dict) and info.get("state") == "pending"}


def new_name(existing: set[str] | dict[str, bool]) -> str:
    """A name for racfg's next session that no session on the switch has."""
    while True:
        name = f"{PREFIX}{int(time.time())}-{secrets.token_hex(3)}"
        if name not in existing:
            return name


def abort(session: SwitchSession, name: str) -> None:
    """Enter session ``name`` and abort it: ``abort`` typed in the session's own mode, as EOS documents
    it (and Ansible's eos plugin does it); its changes are discarded, running-config is untouched."""
    driver = session.driver
    out = session.send_line(f"configure session {name}", driver.config_prompt)
    error = session.rejected(out)
    if not error:
        error = session.rejected(session.send_line("abort", driver.enable_prompt))
    if error:
        raise SwitchConfigError(f"switch {session.target.name}: aborting config session {name} failed: {error}",
                                hint=f"abort it by hand: configure session {name}, then abort")


def abort_stale(session: SwitchSession) -> tuple[dict[str, bool], list[str]]:
    """Abort the pending racfg sessions nobody is in. (the sessions still pending, what was aborted)"""
    sessions = pending(session)
    aborted = []
    for name, in_use in sorted(sessions.items()):
        if name.startswith(PREFIX) and not in_use:
            abort(session, name)
            aborted.append(name)
    for name in aborted:
        del sessions[name]
    notes = [f"aborted config session {name}, left pending by an earlier racfg run (never committed)"
             for name in aborted]
    return sessions, notes
