"""A switch session lost in the middle of a plan: the bookkeeping of how far the plan got, the order
of the rollback, what racfg reports, and EOS config sessions left pending.

The pure parts are tables; where a switch is needed it is the lab's switch CLI started on
127.0.0.1 (real SSH, real netmiko, no lab): tests/switches/conftest.py. The whole path on lab
switches with their veths is tests/switches/test_session_cut_lab.py.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from netmiko.exceptions import ReadTimeout

from racfg.deploy.deploy_run import _exit_code
from racfg.errors import ExitCode
from racfg.playbook import PlaybookTracker
from racfg.switches import IntendedPort, IntendedSwitch, SwitchSession, SwitchTarget, apply_switch, get_driver
from racfg.switches.apply import push_lines, push_session
from racfg.switches.drivers import Change, SwitchDriver
from racfg.switches.progress import PlanProgress, by_hand, still_applied, undo_plan
from racfg.switches.rollback import rollback
from racfg.switches.switch_errors import SwitchSessionLost
from racfg_lab.switchcli import faults
from tests.switches.conftest import MODELS, PASSWORD, EmulatedSwitch

C1 = Change("interface ethernet 1/1", "description dgx01:data0", "no description", "1/1 description")
C2 = Change("interface ethernet 1/1", "mtu 9000 force", "mtu 1500 force", "1/1 mtu 1500 -> 9000")
C3 = Change("interface ethernet 1/2", "mtu 9000 force", "mtu 1500 force", "1/2 mtu 1500 -> 9000")
C4 = Change("interface ethernet 1/2", "no shutdown", "shutdown", "1/2 up")
PLAN = [C1, C2, C3, C4]  # typed: 1/1, C1, C2, exit, 1/2, C3, C4, exit


def typed_up_to(progress: PlanProgress, count: int) -> None:
    """Feed ``progress`` the plan's first ``count`` lines as push_lines types them, the last one unanswered."""
    lines: list[tuple[str, Change | None]] = []
    current = None
    for change in progress.changes:
        if change.context != current:
            if current is not None:
                lines.append(("exit", None))
            lines.append((change.context or "", None))
            current = change.context
        lines.append((change.line, change))
    for index, (line, change) in enumerate(lines[:count], start=1):
        progress.sending(line, change)
        if index < count:
            progress.acknowledged()


# --- bookkeeping ---------------------------------------------------------------------------------

def test_progress_keeps_acknowledged_changes_and_the_line_in_flight():
    progress = PlanProgress(PLAN)
    assert progress.total == 8 and progress.where() == "before the first line of the plan"
    typed_up_to(progress, 6)  # C3 typed, never answered
    assert progress.done == [C1, C2] and progress.in_flight == C3
    assert progress.touched() == [C1, C2, C3]
    assert progress.where() == "at line 6 of 8 of the plan ('mtu 9000 force')"
    typed_up_to(progress := PlanProgress(PLAN), 5)  # a mode line in flight: nothing more may be applied
    assert progress.touched() == [C1, C2] and progress.in_flight is None


def test_undo_is_last_change_first_each_in_its_mode_the_line_in_flight_included():
    progress = PlanProgress(PLAN)
    typed_up_to(progress, 6)
    assert SwitchDriver.commands(undo_plan(progress.touched())) == [
        "interface ethernet 1/2", "mtu 1500 force", "exit",
        "interface ethernet 1/1", "mtu 1500 force", "no description", "exit"]
    removed = Change(None, "no router bgp 65000", None, "BGP process removed")  # no undo can rebuild it
    assert undo_plan([C1, removed]) == [Change(C1.context, "no description", None, "undo 1/1 description")]


def test_still_applied_are_the_touched_changes_a_new_plan_no_longer_needs():
    replanned = [C2, Change(C3.context, C3.line, "mtu 1500 force", C3.what)]  # 1/1 and 1/2 MTU still to do
    assert still_applied([C1, C2, C3], replanned) == [C1]
    assert by_hand(get_driver("onyx"), [C1]) == ["configure terminal", "interface ethernet 1/1", "no description",
                                                 "exit"]
    assert by_hand(get_driver("onyx"), []) == []


class LosingSession(SwitchSession):
    """A session whose switch answers every line until the ``lose_at``-th line of the plan (counted
    after the line that enters config mode), which raises what netmiko raises when no answer comes."""

    def __init__(self, platform: str, lose_at: int, lose: str = "") -> None:
        super().__init__(SwitchTarget("sw1", platform, "192.0.2.1", username="admin", password="x"))
        self.lose_at, self.lose, self.sent, self.left_config = lose_at, lose, [], False
        self.conn = self

    def send_line(self, line: str, expect: str) -> str:
        self.sent.append(line)
        if line == self.lose or len(self.sent) - 1 == self.lose_at:
            raise ReadTimeout("Pattern not detected")
        return f"{line}\nsw1 (config) #"

    def exit_config_mode(self) -> None:
        self.left_config = True


def test_push_lines_lost_mid_plan_stops_and_keeps_how_far_it_got():
    session, progress = LosingSession("onyx", lose_at=6), PlanProgress(PLAN)
    with pytest.raises(ReadTimeout):
        push_lines(session, PLAN, progress)
    assert session.sent[-1] == "mtu 9000 force" and len(session.sent) == 7  # configure terminal + 6
    assert progress.done == [C1, C2] and progress.in_flight == C3
    assert not session.left_config  # nothing more is typed on a lost session (it would wait again)


def test_push_session_lost_at_the_commit_names_its_session_and_the_commit():
    eos = [Change("interface Ethernet1", "mtu 9000", "mtu 1500", "Ethernet1 mtu 1500 -> 9000")]
    session, progress = LosingSession("eos", lose_at=99, lose="commit"), PlanProgress(eos)
    with pytest.raises(ReadTimeout):
        push_session(session, eos, progress=progress)
    assert progress.config_session and session.sent[0] == f"configure session {progress.config_session}"
    assert progress.line == "commit" and progress.where() == "at 'commit', after all 3 lines of the plan were typed"


def test_deploy_exits_3_when_a_switch_could_not_be_worked_on():
    """The switch module marks a session lost (or a switch unreachable) racfg_cannot_run; deploy then
    says it could not run (3), not that it found something (1)."""
    def run(res: dict[str, Any]) -> ExitCode:
        tracker = PlaybookTracker()
        tracker.handle({"event": "runner_on_failed", "event_data": {"host": "sw1", "task": "switch", "res": res}})
        tracker.handle({"event": "playbook_on_stats", "event_data": {"failures": {"sw1": 1}}})
        return _exit_code(tracker, interrupted=False)

    assert run({"msg": "switch sw1: the SSH session dropped ...", "racfg_cannot_run": True}) == ExitCode.CANNOT_RUN
    assert run({"msg": "switch sw1: command 'mtu 9500' rejected"}) == ExitCode.FINDINGS


# --- against the switch CLI (127.0.0.1) ------------------------------------------------------------

def target(sw: EmulatedSwitch, command_timeout: float = 60.0, port: int | None = None) -> SwitchTarget:
    return SwitchTarget(sw.name, sw.platform, "127.0.0.1", port or sw.port, "admin", PASSWORD, timeout=10,
                        known_hosts=sw.known_hosts, command_timeout=command_timeout)


def intent(platform: str, *ports: str) -> IntendedSwitch:
    model, count, _ = MODELS[platform]
    return IntendedSwitch("sw1", platform, model, count, 8 if platform == "eos" else 0,
                          {p: IntendedPort(p, f"dgx01:data{i}", 9000, None) for i, p in enumerate(ports)})


def operator(sw: EmulatedSwitch) -> Any:
    """A netmiko session of the test's own (the driver's, whose Mellanox login reads to the prompt)."""
    conn = get_driver(sw.platform).open_connection(host="127.0.0.1", port=sw.port, username="admin",
                                                   password=PASSWORD, secret=PASSWORD, fast_cli=True, timeout=10)
    conn.enable()
    return conn


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_eos_commit_in_flight_is_reported_as_applied_not_as_rolled_back(switch_factory):
    """The switch commits and the session drops before its answer: nothing is pending to abort, the
    switch holds the whole plan; racfg says so (exit 3: not verified, not saved), never "rolled back"."""
    sw = switch_factory("eos")
    want = intent("eos", "Ethernet1/1")
    plan = apply_switch(target(sw), want, check=True).commands
    faults.arm(sw.config.parent / "state", len(plan) + 2)  # the plan's lines, show session-config diffs, commit
    with pytest.raises(SwitchSessionLost) as caught:
        apply_switch(target(sw, command_timeout=5), want)
    error = caught.value
    assert error.exit_code == ExitCode.CANNOT_RUN and not error.as_before
    assert "the SSH session dropped (no answer within 5 s) at 'commit'" in str(error), error
    assert "went through before the session was lost: the whole plan is in running-config, not saved" in str(error)
    assert not apply_switch(target(sw), want, check=True).changed


def test_rollback_that_cannot_reach_the_switch_names_what_remains_and_what_to_type():
    progress = PlanProgress(PLAN)
    typed_up_to(progress, 6)
    unreachable = SwitchTarget("sw1", "onyx", "127.0.0.1", closed_port(), "admin", "x", timeout=3)
    error = rollback(unreachable, intent("onyx", "1/1", "1/2"), "", progress, "the SSH session dropped")
    assert error.exit_code == ExitCode.CANNOT_RUN and not error.as_before
    assert error.remaining == ["description dgx01:data0", "mtu 9000 force", "mtu 9000 force"]
    assert error.by_hand == ["configure terminal", "interface ethernet 1/2", "mtu 1500 force", "exit",
                             "interface ethernet 1/1", "mtu 1500 force", "no description", "exit"]
    message = str(error)
    assert message.startswith("switch sw1: the SSH session dropped at line 6 of 8 of the plan ('mtu 9000 force'); "
                              "rolling back failed: switch sw1: cannot reach 127.0.0.1:")
    assert "remain applied (the last one unconfirmed): 'interface ethernet 1/1: description dgx01:data0'" in message
    assert "type on sw1: 'configure terminal' / 'interface ethernet 1/2' / 'mtu 1500 force'" in message


def test_rollback_the_switch_refuses_reports_the_lines_left_on_it(switch_factory):
    """An undo the switch refuses (Onyx takes no MTU change on an enabled port without ``force``): read
    again, the switch still holds the change, and racfg names it and what would take it back."""
    sw = switch_factory("onyx")
    want = intent("onyx", "1/1")
    with SwitchSession(target(sw)) as session:
        before = get_driver("onyx").render(want, session.facts())
    conn = operator(sw)
    try:
        conn.send_config_set(["interface ethernet 1/1 mtu 9000 force"])
    finally:
        conn.disconnect()
    bad_undo = Change("interface ethernet 1/1", "mtu 9000 force", "mtu 1500", "1/1 mtu 1500 -> 9000")
    progress = PlanProgress([bad_undo])
    typed_up_to(progress, 3)
    progress.acknowledged()
    error = rollback(target(sw), want, before, progress, "the SSH session dropped")
    assert not error.as_before and error.remaining == ["mtu 9000 force"]
    assert error.by_hand == ["configure terminal", "interface ethernet 1/1", "mtu 1500", "exit"]
    assert "(the switch refused 'mtu 1500')" in str(error)
    assert "left these lines of the plan applied (the switch refused 'mtu 1500'): " \
           "'interface ethernet 1/1: mtu 9000 force'" in str(error)


def open_session(conn: Any, name: str, lines: list[str], leave: bool) -> None:
    """Type ``lines`` into config session ``name`` without committing it; ``leave``: then ``end``."""
    for line in [f"configure session {name}", *lines]:
        assert "%" not in conn.send_command(line, expect_string=r"\)#")
    if leave:
        conn.send_command("end", expect_string=r"#")


def test_eos_aborts_only_the_stale_sessions_of_racfg(switch_factory):
    """Pending before an apply: a racfg session nobody is in (a run that died), an operator's own
    session, and a racfg session a CLI is in (another run at work). Only the first is aborted; none
    is committed; racfg's own session is new and gone after its commit."""
    sw = switch_factory("eos")
    dead, live = operator(sw), operator(sw)
    try:
        open_session(dead, "racfg-1-dead", ["interface Ethernet3/1", "description stale"], leave=True)
        open_session(dead, "ops-change", ["interface Ethernet4/1", "description ops"], leave=True)
        dead.disconnect()  # both left pending, nobody in them
        open_session(live, "racfg-2-live", ["interface Ethernet5/1", "description live"], leave=False)
        result = apply_switch(target(sw), intent("eos", "Ethernet1/1"), save=False)
        conn = operator(sw)
        sessions = json.loads(conn.send_command("show configuration sessions detail | json"))["sessions"]
        running = conn.send_command("show running-config")
        conn.disconnect()
    finally:
        live.disconnect()
    assert result.changed and result.warnings == [
        "aborted config session racfg-1-dead, left pending by an earlier racfg run (never committed)"]
    assert sorted(sessions) == ["ops-change", "racfg-2-live"]
    assert all(s["state"] == "pending" for s in sessions.values())
    assert sessions["racfg-2-live"]["instances"] and not sessions["ops-change"]["instances"]
    assert "description dgx01:data0" in running
    assert not any(text in running for text in ("stale", "ops", "live"))


def test_a_cut_fires_once_on_the_session_that_reaches_its_config_line(switch_factory):
    """Lines typed outside config mode do not count; the session that reaches the line takes the cut,
    executes the line and drops; the next session is served as usual."""
    sw = switch_factory("onyx")
    state = sw.config.parent / "state"
    faults.arm(state, 2)
    conn = operator(sw)
    conn.send_command("show version")
    conn.send_command("configure terminal", expect_string=r"\(config\) #")
    conn.send_command("interface ethernet 1/1", expect_string=r"#")
    with pytest.raises(ReadTimeout):
        conn.send_command("description cut-here", expect_string=r"#", read_timeout=2)
    assert not conn.is_alive()
    conn.disconnect()
    assert not (state / faults.CUT_FILE).exists()
    again = operator(sw)
    try:
        shown = again.send_config_set(["interface ethernet 1/1", "mtu 9000 force", "exit"])
        running = again.send_command("show running-config")
    finally:
        again.disconnect()
    assert "%" not in shown
    assert "interface ethernet 1/1 description cut-here" in running  # executed, never answered
