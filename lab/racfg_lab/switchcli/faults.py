"""Cutting a lab switch's CLI session in the middle of a plan: a one-shot fault a test arms.

Why: racfg promises that a switch session that drops or stops answering in the middle of a plan
leaves the switch as it was (Onyx: the applied lines undone on a new session; EOS: the config
session never committed). That is tested against the real thing: the switch really executes the
lines it got, then really drops the SSH connection (no disconnect message, as when the
management path goes away) or really stops answering, and racfg finds out as it would on a site.

The fault is a small file in the switch's state directory (the lab API's ``cut_switch_session``
writes it): ``{"after": N, "hang": false}``. Every SSH session counts the lines typed to it in a
configuration mode (the line that enters config mode is not one, nor a blank line). The first session to reach its
N-th config line takes the file (so the fault fires once, and racfg's next session is served
normally), executes that line, and never answers it: it drops the connection, or with ``hang``
keeps it open and ignores whatever comes next until the client goes away. The client cannot
tell whether that last line took effect, as on a real switch.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

CUT_FILE = "session-cut.json"


@dataclass(frozen=True)
class SessionCut:
    after: int  # the config line, counted from 1 in one SSH session, executed and never answered
    hang: bool  # True: keep the connection open and answer nothing more; False: drop the connection


def arm(state_dir: Path, after: int, *, hang: bool = False) -> Path:
    """Arm a cut for the next session to reach its ``after``-th config line (replaces an armed one)."""
    if after < 1:
        raise ValueError(f"a session is cut at a config line counted from 1, not {after}")
    path = state_dir / CUT_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"after": after, "hang": hang}), encoding="utf-8")
    os.replace(tmp, path)
    return path


def disarm(state_dir: Path) -> bool:
    """Remove an armed cut that has not fired; whether there was one."""
    try:
        (state_dir / CUT_FILE).unlink()
    except FileNotFoundError:
        return False
    return True


def take(state_dir: Path, line: int) -> SessionCut | None:
    """The cut armed for a session's ``line``-th config line, taken (the file removed) so it fires
    once; None when none is armed for that line, or another session took it first."""
    path = state_dir / CUT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        after, hang = int(data["after"]), bool(data.get("hang"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if after != line:
        return None
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    return SessionCut(after, hang)
