"""EOS apply: a commit the switch answers with an error is a failure, never a success.

A real EOS commit can fail after every line of the session was accepted (link settings a port
will not take); the lab CLI prints the same ``%`` line. This table drives ``push_session`` with
what the switch prints for each line, so the case is covered without a switch that can be made
to fail its commit on demand.
"""

from __future__ import annotations

import pytest

from racfg.switches.apply import push_session
from racfg.switches.drivers import Change, get_driver
from racfg.switches.session import SwitchSession, SwitchTarget
from racfg.switches.switch_errors import SwitchConfigError


class ScriptedSession(SwitchSession):
    """A session whose switch answers ``commit`` with ``commit_answer``; every other line is accepted."""

    def __init__(self, commit_answer: str) -> None:
        super().__init__(SwitchTarget("sw1", "eos", "192.0.2.1", username="admin", password="x"))
        self.commit_answer = commit_answer
        self.sent: list[str] = []

    def send_line(self, line: str, expect: str) -> str:
        self.sent.append(line)
        return self.commit_answer if line == "commit" else f"{line}\nsw1(config-s)#"


CHANGES = [Change("interface Ethernet1/1", "mtu 9214", "no mtu", "Ethernet1/1 mtu 1500 -> 9214")]


@pytest.mark.parametrize(("answer", "fails"), [
    ("sw1#", False),
    ("% Failed to apply some link settings: Ethernet1/1: mtu 9214\nsw1#", True),
    ("% Commit failed: session is stale\nsw1#", True),
])
def test_commit_error_is_reported(answer: str, fails: bool) -> None:
    session = ScriptedSession(answer)
    assert get_driver("eos").platform == session.driver.platform
    if not fails:
        push_session(session, CHANGES)
        assert session.sent[-1] == "commit"
        return
    with pytest.raises(SwitchConfigError) as caught:
        push_session(session, CHANGES)
    assert "commit of config session" in str(caught.value)
    assert answer.splitlines()[0] in str(caught.value)
    assert caught.value.rejected == "commit" and "mtu 9214" in caught.value.not_applied


def test_check_mode_abort_is_not_a_commit() -> None:
    session = ScriptedSession("% would fail\nsw1#")
    push_session(session, CHANGES, commit=False)
    assert session.sent[-1] == "abort"
