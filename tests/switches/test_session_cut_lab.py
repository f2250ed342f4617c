"""A switch session cut in the middle of a plan, on the lab's Onyx and EOS switches: afterwards the
switch is exactly as before the plan (running config, and its ports' MTU and admin state on the
real veths), racfg says what happened (exit 3, could not run, naming the switch, how far the plan
got, that it was rolled back), and a normal deploy then applies the whole plan.

One lab for the module (tests/switches/cutlab.yaml, site cutlab: cutonyx and cuteos, dgx01 cabled
twice to each; 198.18.58.0/24). Each test first puts the two cabled ports of its switch at MTU
1500, no description, the first up and the second shut, so racfg's plan is five changes in nine
lines (both ports: description, MTU; the second: no shutdown). The lab cuts the session at line 7
(racfg_lab.cut_switch_session): the switch executes the second port's MTU line, so that port's
veth really goes to MTU 9000, and never answers it; it drops the connection, or stays silent
until racfg's command timeout. On Onyx the rollback must undo that unanswered line too.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import labsupport as testing
import pytest

import racfg_lab
from racfg.errors import ExitCode
from racfg.switches import SwitchTarget, apply_switch, get_driver
from racfg.switches.intent import intended_for
from racfg.switches.switch_errors import SwitchSessionLost

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / ".venv" / "bin"
INVENTORY = Path(__file__).with_name("cutlab.yaml")
SITE = "cutlab"
PORTS = {"cutonyx": ("1/1", "1/2"), "cuteos": ("Ethernet1", "Ethernet2")}
NICS = {"cutonyx": ("dgx01:data0", "dgx01:data1"), "cuteos": ("dgx01:data2", "dgx01:data3")}  # the ports' descriptions
CUT_AT = 7  # port 1: mode, description, MTU, exit; port 2: mode, description, [MTU], no shutdown, exit
TIMEOUT = 5  # seconds racfg waits for a config line's answer here (a lab switch answers in milliseconds)
BEFORE = {  # the two cabled ports as each test starts: MTU 1500, no description, the first up, the second shut
    "cutonyx": [f"interface ethernet {port} {line}" for port, shut in (("1/1", "no shutdown"), ("1/2", "shutdown"))
                for line in ("mtu 1500 force", "no description", shut)],
    "cuteos": [line for port, shut in (("Ethernet1", "no shutdown"), ("Ethernet2", "shutdown"))
               for line in (f"interface {port}", "mtu 1500", "no description", shut, "exit")],
}


@dataclass(frozen=True)
class SwitchNow:
    """What a switch holds: its running config (less Onyx's "Generated at" stamp), its two cabled
    ports' veths as (MTU, admin up), and (EOS) its pending config sessions."""

    running: str
    veths: dict[str, tuple[int, bool]]
    pending: tuple[str, ...]


@pytest.fixture(scope="module")
def cutlab() -> Iterator[testing.LabHandle]:
    with testing.running_lab(INVENTORY) as handle:
        yield handle


@pytest.fixture(scope="module")
def rendered(cutlab: testing.LabHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return testing.render(INVENTORY, tmp_path_factory.mktemp("cutlab-rendered"))


def target(lab: testing.LabHandle, name: str, command_timeout: float = 60.0) -> SwitchTarget:
    sw = lab.cluster.switches[name]
    return SwitchTarget(name, sw.platform, sw.spec.mgmt, 22, sw.spec.credentials.username,
                        racfg_lab.switch_password(lab.site, name), timeout=10, known_hosts=lab.known_hosts,
                        command_timeout=command_timeout)


def operator(lab: testing.LabHandle, name: str, lines: list[str] | None = None) -> SwitchNow:
    """The test's own SSH session: type ``lines`` in config mode, then read what the switch holds."""
    t = target(lab, name)
    conn = get_driver(t.platform).open_connection(host=t.host, username=t.username, password=t.password,
                                                  secret=t.password, fast_cli=True, timeout=10)
    try:
        conn.enable()
        if lines:
            out = str(conn.send_config_set(lines))
            assert "%" not in out, out
        running = str(conn.send_command("show running-config"))
        pending: tuple[str, ...] = ()
        if t.platform == "eos":
            pending = tuple(json.loads(conn.send_command("show configuration sessions detail | json"))["sessions"])
    finally:
        conn.disconnect()
    running = re.sub(r"^## Generated at .*$", "", running, flags=re.M)
    return SwitchNow(running, {port: veth(lab, name, port) for port in PORTS[name]}, pending)


def veth(lab: testing.LabHandle, switch: str, port: str) -> tuple[int, bool]:
    """(MTU, admin up) of the veth that is switch port ``port``, read in the switch's namespace."""
    state = lab.state
    cable = next(c for c in state.cables if c.switch == switch and c.port == port)
    out = subprocess.run(["ip", "-n", state.switches[switch].netns, "-j", "link", "show", cable.switch_ifname],
                         check=True, capture_output=True, text=True).stdout
    link = json.loads(out)[0]
    return int(link["mtu"]), "UP" in link["flags"]


def cut_fired(lab: testing.LabHandle, name: str, how: str) -> bool:
    """The switch's own log says it cut a session at CUT_AT (so a pass is never a cut that did not happen)."""
    log = Path(lab.state.switches[name].config).parent / "cli.log"
    return f"session cut at config line {CUT_AT} ({how})" in log.read_text(errors="replace")


def deploy(name: str) -> subprocess.CompletedProcess[str]:
    """A normal ``racfg deploy`` of the switch alone."""
    return subprocess.run([str(BIN / "racfg"), "deploy", str(INVENTORY), "--tags", "switch", "--limit", name, "--yes"],
                          capture_output=True, text=True, timeout=300)


def assert_whole_plan_applied(lab: testing.LabHandle, name: str) -> None:
    now = operator(lab, name)
    assert now.veths == dict.fromkeys(PORTS[name], (9000, True)), now.veths
    assert all(nic in now.running for nic in NICS[name]), now.running
    assert now.pending == ()


@pytest.mark.parametrize("name", ["cutonyx", "cuteos"])
def test_dropped_session_mid_plan_leaves_the_switch_as_it_was(cutlab, rendered, name):
    """The switch drops the connection at line 7 of 9. Through the switch role as an operator runs it
    (ansible-playbook switches.yml): the task fails with what happened and racfg_cannot_run (racfg
    deploy exits 3 on it: test_session_cut.py), the switch is as before; a normal deploy applies it all."""
    before = operator(cutlab, name, BEFORE[name])
    assert before.veths == {PORTS[name][0]: (1500, True), PORTS[name][1]: (1500, False)}
    plan = apply_switch(target(cutlab, name), intended_for(cutlab.cluster, name), check=True).commands
    assert len(plan) == 9 and plan[CUT_AT - 1].startswith("mtu 9000"), plan
    racfg_lab.cut_switch_session(SITE, name, CUT_AT)
    run = testing.run_playbook(rendered, "switches.yml", "--limit", name, "-e", f"switch_command_timeout={TIMEOUT}",
                               timeout=300, overrides=racfg_lab.connection_overrides(SITE))
    after = operator(cutlab, name)
    assert cut_fired(cutlab, name, "drop")
    assert run.rc != 0 and run.recap[name]["failed"] == 1, run.output[-3000:]
    undone = ("the 3 change(s) the switch had acknowledged and the one in flight were undone, last first"
              if name == "cutonyx" else "racfg aborted its config session racfg-")
    assert (f"switch {name}: the SSH session dropped (no answer within {TIMEOUT} s) at line 7 of 9 of the plan "
            f"('{plan[CUT_AT - 1]}'); on a new session {undone}") in run.output, run.output[-3000:]
    assert "read again, the switch is as before the plan: rolled back, nothing saved" in run.output
    assert '"racfg_cannot_run": true' in run.output and '"as_before": true' in run.output
    assert "Traceback" not in run.output
    assert after == before
    done = deploy(name)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert_whole_plan_applied(cutlab, name)


@pytest.mark.parametrize("name", ["cutonyx", "cuteos"])
def test_silent_switch_mid_plan_is_rolled_back_on_a_new_session(cutlab, name):
    """The switch stops answering at line 7 of 9 (the connection stays up): after the command timeout
    racfg gives the session up, puts the switch back on a new one and raises exit 3 saying so."""
    before = operator(cutlab, name, BEFORE[name])
    intended = intended_for(cutlab.cluster, name)
    racfg_lab.cut_switch_session(SITE, name, CUT_AT, hang=True)
    with pytest.raises(SwitchSessionLost) as caught:
        apply_switch(target(cutlab, name, command_timeout=TIMEOUT), intended)
    after = operator(cutlab, name)
    assert cut_fired(cutlab, name, "hang")
    error = caught.value
    assert error.exit_code == ExitCode.CANNOT_RUN and error.as_before and not error.remaining
    assert str(error).startswith(f"switch {name}: the switch stopped answering (no answer within {TIMEOUT} s) "
                                 "at line 7 of 9 of the plan"), error
    assert after == before
    result = apply_switch(target(cutlab, name), intended)
    assert result.changed and result.saved and not result.warnings
    assert_whole_plan_applied(cutlab, name)
