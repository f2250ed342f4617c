"""The site lock's parts without a lab: the holder message, stale detection, and the lock host's
shell scripts run here with real bash and flock (as the lock host runs them over SSH), in
/run/lock under a site name no lab uses, removed afterwards. The SSH path: test_site_lock_lab.py.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from racfg.errors import ExitCode
from racfg.remote_lock import (
    ACQUIRE,
    BREAK,
    BUSY,
    SHELL_NAME,
    SHOW,
    STALE_S,
    Holder,
    holder_info,
    parse_holders,
    refusal,
)

INFO = {"command": "deploy", "mode": "exclusive", "controller": "ctl-b", "user": "ops", "pid": 4242,
        "started": "2026-11-25 16:40:01 UTC", "state_dir": "/home/ops/racfg/.racfg"}


def test_a_refusal_names_the_holder_by_controller_user_pid_and_start():
    holder = parse_holders("dgx01", f"busy\nholder 812 1 2 {json.dumps(INFO)}\n")
    error = refusal("lab", "deploy", "dgx01", holder)
    assert error.exit_code == ExitCode.CANNOT_RUN
    assert error.message == ("another racfg run holds site lab, so this deploy is refused: deploy (exclusive) by "
                             "ops@ctl-b pid 4242, started 2026-11-25 16:40:01 UTC, state /home/ops/racfg/.racfg; "
                             "held on dgx01 by shell pid 812")
    assert "racfg lock break INVENTORY" in str(error) and "/run/lock/racfg-lab.lock on dgx01" in str(error)


def test_a_holder_that_left_no_file_is_still_a_refusal():
    assert "a holder on dgx01 that left no holder file" in refusal("lab", "drift", "dgx01", []).message


def test_unreadable_holder_lines_are_kept_as_far_as_they_go():
    holders = parse_holders("h", "holder 5 0 3 {not json\nnoise\nholder 6 1 0\n")
    assert [(h.shell_pid, h.alive, h.silent_s, h.info) for h in holders] == [(5, False, 3, {}), (6, True, 0, {})]


@pytest.mark.parametrize(("alive", "silent", "controller", "pid", "stale"), [
    (True, 0, "ctl-b", 4242, None),  # another controller, heartbeat fresh: live
    (False, 0, "ctl-b", 4242, "its shell on h is gone"),
    (True, STALE_S + 1, "ctl-b", 4242, "no heartbeat from its controller"),
    (True, 0, "this", "this", None),  # this controller, its pid alive (the test's own, resolved below)
    (True, 0, "this", 2**22 + 1, "on this controller is dead"),  # above pid_max: never alive
], ids=["other-live", "shell-gone", "no-heartbeat", "here-alive", "here-dead"])  # ids the same on every worker
def test_stale_when_the_shell_is_gone_the_heartbeat_stopped_or_the_local_pid_died(alive, silent, controller, pid,
                                                                                   stale):
    controller = socket.gethostname() if controller == "this" else controller  # so xdist workers collect alike
    pid = os.getpid() if pid == "this" else pid
    holder = Holder("h", 9, alive, silent, {**INFO, "controller": controller, "pid": pid})
    if stale is None:
        assert holder.stale_reason is None and "[stale" not in holder.describe()
    else:
        assert stale in (holder.stale_reason or "") and "[stale: " in holder.describe()


def test_holder_info_says_who_and_where_from(tmp_path: Path):
    info = holder_info("drift", True, tmp_path)
    assert (info["command"], info["mode"], info["controller"], info["user"], info["pid"], info["state_dir"]) == (
        "drift", "shared", socket.gethostname(), getpass.getuser(), os.getpid(), str(tmp_path))
    assert time.strptime(info["started"], "%Y-%m-%d %H:%M:%S UTC")


# --- the lock host's scripts, run here -----------------------------------------------------------

@pytest.fixture
def stem() -> Iterator[str]:
    name = f"unit-{uuid.uuid4().hex[:8]}"
    if not os.access("/run/lock", os.W_OK):
        pytest.skip("/run/lock is not writable here (not root)")
    yield name
    for path in Path("/run/lock").glob(f"racfg-{name}.*"):
        path.unlink()


def script(text: str, *args: str) -> list[str]:
    return ["bash", "-c", text, SHELL_NAME, *args]


def acquire(stem: str, mode: str, info: dict, lease: int = 45) -> subprocess.Popen[str]:
    """A holding shell as the lock host runs it; its stdin is the controller's heartbeat."""
    shell = subprocess.Popen(script(ACQUIRE, stem, mode, json.dumps(info), str(lease)), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert shell.stdout is not None
    line = shell.stdout.readline()
    if not line.startswith("locked "):
        out, err = shell.communicate(timeout=10)
        raise AssertionError(f"not locked (exit {shell.returncode}): {line}{out}{err}")
    assert int(line.split()[1]) == shell.pid
    return shell


def release(shell: subprocess.Popen[str]) -> None:
    shell.communicate(timeout=10)  # closes stdin: the end of the controller's session


def show(stem: str) -> list[Holder]:
    done = subprocess.run(script(SHOW, stem), capture_output=True, text=True, timeout=10, check=True)
    return parse_holders("here", done.stdout)


def test_an_exclusive_holder_refuses_the_next_and_the_refusal_lists_it(stem: str):
    first = acquire(stem, "-x", INFO)
    try:
        second = subprocess.run(script(ACQUIRE, stem, "-s", "{}", "45"), capture_output=True, text=True, timeout=10)
        assert second.returncode == BUSY and second.stdout.startswith("busy\n")
        [holder] = parse_holders("here", second.stdout)
        assert (holder.shell_pid, holder.alive, holder.info) == (first.pid, True, INFO)
    finally:
        release(first)
    assert show(stem) == []  # the holder file goes with its shell
    release(acquire(stem, "-x", INFO))  # and the lock is free again


def test_readers_share_and_a_writer_is_refused_beside_them(stem: str):
    readers = [acquire(stem, "-s", {**INFO, "command": "drift", "pid": n}) for n in (1, 2)]
    try:
        assert sorted(h.info["pid"] for h in show(stem)) == [1, 2]
        writer = subprocess.run(script(ACQUIRE, stem, "-x", "{}", "45"), capture_output=True, text=True, timeout=10)
        assert writer.returncode == BUSY and len(parse_holders("here", writer.stdout)) == 2
    finally:
        for reader in readers:
            release(reader)


def test_a_silent_controller_loses_the_lock_when_its_lease_runs_out(stem: str):
    shell = acquire(stem, "-x", INFO, lease=1)
    assert shell.wait(timeout=10) == 0  # no heartbeat for 1 s: it gave the lock up
    release(acquire(stem, "-x", INFO))


def test_break_ends_the_holding_shell_and_removes_leftover_files(stem: str):
    shell = acquire(stem, "-x", INFO)
    leftover = Path(f"/run/lock/racfg-{stem}.{2**22 + 1}.json")  # a shell long gone left its file
    leftover.write_text(json.dumps(INFO))
    holders = show(stem)
    assert {(h.shell_pid, h.alive) for h in holders} == {(shell.pid, True), (2**22 + 1, False)}
    done = subprocess.run(script(BREAK, stem, *(str(h.shell_pid) for h in holders)), capture_output=True,
                          text=True, timeout=10, check=True)
    assert done.stdout.split() == ["ended", str(shell.pid)]
    shell.wait(timeout=10)  # it ended (TimeoutExpired if not)
    assert show(stem) == []
    release(acquire(stem, "-x", INFO))


def test_break_leaves_a_process_that_is_not_a_lock_shell_alone(stem: str):
    other = subprocess.Popen(["sleep", "30"])
    try:
        done = subprocess.run(script(BREAK, stem, str(other.pid)), capture_output=True, text=True, timeout=10)
        assert done.stdout == "" and other.poll() is None
    finally:
        other.kill()
        other.wait()
