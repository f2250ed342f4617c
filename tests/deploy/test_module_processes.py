"""A stopped run's module processes, found by its marker and awaited, then stopped: the look
(racfg.playbook.marked) runs here on real processes, in this process and as the script sent to a
host over SSH; what deploy reports of a stop. On the lab's hosts: test_site_lock_lab.py.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from racfg.inventory import load_cluster
from racfg.playbook.module_processes import (
    MARKER,
    RUN_ID,
    Leftovers,
    _local_look,
    hosts_in_scope,
    parse_look,
    run_env,
    settle,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts; whatever is left of them (each a session: what they started too) is killed."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def marked(procs: list[subprocess.Popen[str]], command: str, *, env_marker: bool = True) -> subprocess.Popen[str]:
    """A process of this run, as a module is: the marker in its environment (or, like Ansible's
    ``/bin/sh -c 'RACFG_RUN=... python3'``, only in its command line)."""
    env = {**os.environ, MARKER: RUN_ID} if env_marker else dict(os.environ)
    proc = subprocess.Popen(["bash", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    procs.append(proc)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    if command.endswith("exec sleep 300"):
        until(lambda: Path(f"/proc/{proc.pid}/cmdline").read_bytes().startswith(b"sleep\x00300"))  # exec done
    return proc


def until(done: Callable[[], object], limit_s: float = 20.0) -> None:
    """Wait for ``done`` (a process's exec, its child's start), which the machine's load can delay."""
    deadline = time.monotonic() + limit_s
    while not done():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.02)


def test_the_look_finds_the_run_by_environment_and_command_line_and_nothing_else(started):
    child = marked(started, "sleep 300 & echo ready; wait")  # the marker is inherited by what it starts
    line = marked(started, f"exec bash -c ': {MARKER}={RUN_ID}; echo ready; read x'", env_marker=False)
    other = marked(started, f"echo ready; exec env {MARKER}=someone-else sleep 300", env_marker=False)
    until(lambda: any(command.startswith("sleep 300") for command in _local_look("list").values()))
    found = _local_look("list")
    assert child.pid in found and line.pid in found and other.pid not in found
    assert any(command.startswith("sleep 300") for command in found.values())  # the inherited child
    # the same file, sent whole to a host as `python3 -c SOURCE RUN_ID MODE`, finds the same
    source = (REPO / "racfg" / "playbook" / "marked.py").read_text()
    remote = subprocess.run(["python3", "-c", source, RUN_ID, "list"], capture_output=True, text=True, check=True)
    assert parse_look(remote.stdout) == found
    assert run_env() == {"racfg_run_env": {MARKER: RUN_ID}}


def test_the_look_leaves_other_pid_namespaces_to_their_own_look(started):
    """A container on the machine (the lab's hosts are containers on the controller) is looked at
    from inside, over SSH, as any host: the controller's look does not reach into it."""
    if os.geteuid() != 0:
        pytest.skip("a PID namespace needs root")
    inside = marked(started, "unshare --pid --fork --mount-proc bash -c 'echo ready; exec sleep 300'")
    found = _local_look("list")
    assert inside.pid in found  # unshare itself runs here, in this namespace
    assert not any(command.startswith("sleep 300") for command in found.values())  # its child does not


def test_a_process_that_ends_while_awaited_is_reported_as_ended_not_stopped(started):
    proc = marked(started, "echo ready; read x")
    said: list[str] = []

    def say(text: str) -> None:  # called once the wait starts: the process ends on its own now
        said.append(text)
        assert proc.stdin is not None
        proc.stdin.close()

    left = settle("here", _local_look, 60, lambda: False, say)
    assert left.ended == [proc.pid] and left.stopped == left.killed == left.left == []
    assert said[0].startswith("here: waiting up to 60 s for 1 module process(es) of this run to end")
    assert left.describe().startswith("here: ended by itself while awaited (") and f"pid {proc.pid} (" in \
        left.describe()


def test_past_the_wait_what_remains_is_stopped_and_what_ignores_sigterm_is_killed(started):
    polite = marked(started, "echo ready; exec sleep 300")
    stubborn = marked(started, "trap '' TERM; echo ready; read x")
    left = settle("here", _local_look, 0, lambda: False, lambda _text: None)
    assert polite.wait(timeout=30) == -signal.SIGTERM and stubborn.wait(timeout=30) == -signal.SIGKILL
    assert polite.pid in left.stopped and stubborn.pid in left.killed and left.left == [] and not left.ended
    assert _local_look("list") == {}
    text = left.describe()
    assert f"stopped (SIGTERM): pid {polite.pid} (sleep 300" in text and "killed (SIGKILL): " in text


def test_a_second_ctrl_c_stops_waiting(started):
    proc = marked(started, "echo ready; exec sleep 300")
    left = settle("here", _local_look, 3600, lambda: True, lambda _text: None)
    assert proc.wait(timeout=30) == -signal.SIGTERM and left.stopped == [proc.pid]


def test_nothing_running_is_nothing_to_report():
    left = settle("dgx01", lambda _mode: {}, 60, lambda: False, lambda _text: None)
    assert left == Leftovers("dgx01") and left.describe() == "dgx01: no module process of this run was running"
    assert Leftovers("dgx02", error="dgx02: cannot reach root@x").describe() == (
        "dgx02: could not look for module processes of this run: dgx02: cannot reach root@x")


@pytest.mark.parametrize(("limit", "seen", "hosts"), [
    (None, set(), ["dgx01", "dgx02", "stor01", "stor02"]),
    ("dgx01", set(), ["dgx01"]),
    ("storage:!stor02", set(), ["stor01", "stor02"]),  # an exclusion is ignored: a host too many is harmless
    ("dgx0*", {"stor01"}, ["dgx01", "dgx02", "stor01"]),  # and a host the events named is always looked at
    ("~stor0[2]", set(), ["stor02"]),
    ("@hosts.txt", set(), ["dgx01", "dgx02", "stor01", "stor02"]),
    ("sw1", set(), []),
])
def test_the_hosts_a_stopped_run_looks_at(limit, seen, hosts):
    assert hosts_in_scope(load_cluster(REPO / "inventory" / "lab.yaml"), limit, seen) == hosts


def test_a_stopped_deploy_says_what_it_applied_what_was_in_flight_and_what_it_stopped(tmp_path: Path):
    from racfg.cli.deploy_cmd import stop_lines
    from racfg.deploy.deploy_run import DeployOutcome
    from racfg.errors import ExitCode
    from racfg.run_record import RunRecord

    record = RunRecord(tmp_path, "deploy")
    from racfg.playbook import HostProgress

    hosts = [HostProgress("dgx01", changed=1, changes=["common : Write /etc/hosts"],
                          running="ofed : Install MLNX_OFED").as_dict(), HostProgress("dgx02", ok=3).as_dict()]
    left = Leftovers("dgx01", found={41: "/usr/bin/python3", 42: "mlnxofedinstall"}, stopped=[41], killed=[42],
                     waited_s=60)
    outcome = DeployOutcome(record, hosts, ExitCode.CANNOT_RUN, interrupted=True, stop_reason="Ctrl-C",
                            leftovers=[left])
    assert stop_lines(outcome) == [
        "stopped: what each host applied before the stop, and what was in flight then:",
        "  dgx01: applied 1 change(s): common : Write /etc/hosts",
        "  dgx01: in flight, may be partly applied: ofed : Install MLNX_OFED",
        "  dgx02: applied no change",
        "  not applied: every task after these; `racfg deploy` again converges the rest",
        "  dgx01: stopped (SIGTERM) after 60 s: pid 41 (/usr/bin/python3); killed (SIGKILL): pid 42 (mlnxofedinstall)",
    ]
    outcome.stopped_reading, outcome.leftovers = True, []
    assert stop_lines(outcome) == [
        "stopped while reading the hosts (that pass changes nothing): nothing was applied",
        "  no module process of this run was left running on any host"]
    document = outcome.as_dict()
    assert (document["stop_reason"], document["module_processes"], document["lock_lost"]) == ("Ctrl-C", [], None)
