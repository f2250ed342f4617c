"""The site lock's parts without a lab: the holder message, stale detection, the lock host's
shell scripts run here with real bash and flock (as the lock host runs them over SSH) in a lock
directory of the test's own, and what a lost lock does to a run. The SSH path: test_site_lock_lab.py.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import stat
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from racfg.connection import NO_OVERRIDES
from racfg.errors import ExitCode
from racfg.lock.local import Stop
from racfg.lock.scripts import ACQUIRE, BREAK, BUSY, SHELL_NAME, SHOW, UNSAFE
from racfg.lock.site_lock import STALE_S, Holder, holder_info, parse_holders, refusal

INFO = {"command": "deploy", "mode": "exclusive", "controller": "ctl-b", "user": "ops", "pid": 4242,
        "started": "2026-11-25 16:40:01 UTC", "state_dir": "/home/ops/racfg/.racfg"}


def line(pid: int, alive: int, silent: int, content: str, path: str = "/run/lock/racfg/lab.812.json") -> str:
    return f"holder\t{pid}\t{alive}\t{silent}\t{path}\t{content}\n"


def test_a_refusal_names_the_holder_by_controller_user_pid_and_start():
    holder = parse_holders("dgx01", "busy\n" + line(812, 1, 2, json.dumps(INFO)))
    error = refusal("lab", "deploy", "dgx01", holder)
    assert error.exit_code == ExitCode.CANNOT_RUN
    assert error.message == ("another racfg run holds site lab, so this deploy is refused: deploy (exclusive) by "
                             "ops@ctl-b pid 4242, started 2026-11-25 16:40:01 UTC, state /home/ops/racfg/.racfg; "
                             "held on dgx01 by shell pid 812")
    assert "racfg lock break INVENTORY" in str(error) and "/run/lock/racfg/lab.lock on dgx01" in str(error)


def test_a_holder_that_left_no_file_is_still_a_refusal():
    assert "a holder on dgx01 that left no holder file" in refusal("lab", "drift", "dgx01", []).message


def test_torn_and_planted_holder_files_are_reported_as_such_never_an_internal_error():
    text = (line(5, 0, 3, '{"command": "dep') + line(6, 1, 0, "") + line(7, 1, 0, "[1, 2]")
            + "bad\t/run/lock/racfg/lab.12.json\ta symbolic link (to /etc/shadow)\n"
            + "bad\t/run/lock/racfg/lab.x?y.json\tits name is not lab.PID.json\n"
            + "holder\tnot-a-pid\t1\t0\t/x\t{}\nnoise\n")
    torn, empty, listed, link, stray = parse_holders("h", text)
    assert (torn.shell_pid, torn.alive, torn.info, torn.planted) == (5, False, {}, False)
    assert torn.describe().startswith("unreadable holder file /run/lock/racfg/lab.812.json: not JSON (")
    assert "torn or cut short); held on h by shell pid 5 [stale: its shell on h is gone" in torn.describe()
    assert empty.problem == "empty" and empty.stale_reason is None  # a live shell whose file is empty
    assert listed.problem == "not a JSON object (a list)"
    assert link.planted and link.describe() == (
        "unreadable holder file /run/lock/racfg/lab.12.json on h: a symbolic link (to /etc/shadow) (racfg did not "
        "write it: remove it by hand once you know who put it there)")
    assert stray.planted and "its name is not lab.PID.json" in stray.describe()
    assert "unreadable holder file /run/lock/racfg/lab.12.json" in refusal("lab", "deploy", "h", [link]).message


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
def lockdir(tmp_path: Path) -> Path:
    """The lock directory the scripts make and check (root's alone, so root runs these tests)."""
    if os.geteuid() != 0:
        pytest.skip("the lock directory must be root's: run as root")
    return tmp_path / "racfg"


@pytest.fixture
def stem() -> str:
    return f"unit-{uuid.uuid4().hex[:8]}"


def script(text: str, *args: str) -> list[str]:
    return ["bash", "-c", text, SHELL_NAME, *args]


def acquire(lockdir: Path, stem: str, mode: str, info: dict, lease: int = 45) -> subprocess.Popen[str]:
    """A holding shell as the lock host runs it; its stdin is the controller's heartbeat."""
    shell = subprocess.Popen(script(ACQUIRE, str(lockdir), stem, mode, json.dumps(info), str(lease)),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert shell.stdout is not None
    first = shell.stdout.readline()
    if not first.startswith("locked "):
        out, err = shell.communicate(timeout=10)
        raise AssertionError(f"not locked (exit {shell.returncode}): {first}{out}{err}")
    assert int(first.split()[1]) == shell.pid
    return shell


def release(shell: subprocess.Popen[str]) -> str:
    """Close its stdin (the end of the controller's session); what it said after "locked"."""
    out, _err = shell.communicate(timeout=10)
    return out


def show(lockdir: Path, stem: str) -> list[Holder]:
    done = subprocess.run(script(SHOW, str(lockdir), stem), capture_output=True, text=True, timeout=10, check=True)
    return parse_holders("here", done.stdout)


def try_acquire(lockdir: Path, stem: str, mode: str = "-x") -> subprocess.CompletedProcess[str]:
    return subprocess.run(script(ACQUIRE, str(lockdir), stem, mode, "{}", "45"), capture_output=True, text=True,
                          timeout=10, stdin=subprocess.DEVNULL)


def test_an_exclusive_holder_refuses_the_next_and_the_refusal_lists_it(lockdir: Path, stem: str):
    first = acquire(lockdir, stem, "-x", INFO)
    try:
        second = try_acquire(lockdir, stem, "-s")
        assert second.returncode == BUSY and second.stdout.startswith("busy\n")
        [holder] = parse_holders("here", second.stdout)
        assert (holder.shell_pid, holder.alive, holder.info) == (first.pid, True, INFO)
    finally:
        release(first)
    assert show(lockdir, stem) == []  # the holder file goes with its shell
    release(acquire(lockdir, stem, "-x", INFO))  # and the lock is free again


def test_readers_share_and_a_writer_is_refused_beside_them(lockdir: Path, stem: str):
    readers = [acquire(lockdir, stem, "-s", {**INFO, "command": "drift", "pid": n}) for n in (1, 2)]
    try:
        assert sorted(h.info["pid"] for h in show(lockdir, stem)) == [1, 2]
        writer = try_acquire(lockdir, stem)
        assert writer.returncode == BUSY and len(parse_holders("here", writer.stdout)) == 2
    finally:
        for reader in readers:
            release(reader)


def test_a_silent_controller_loses_the_lock_when_its_lease_runs_out(lockdir: Path, stem: str):
    shell = acquire(lockdir, stem, "-x", INFO, lease=1)
    assert shell.wait(timeout=10) == 0  # no heartbeat for 1 s: it gave the lock up
    said = release(shell)
    assert "ended: no heartbeat from the controller for 1 s (the lease ran out)" in said  # why, for the controller
    assert "ended:" not in release(acquire(lockdir, stem, "-x", INFO))  # a release racfg asked for says nothing


def test_a_holding_shell_ended_by_a_signal_says_so(lockdir: Path, stem: str):
    shell = acquire(lockdir, stem, "-x", INFO)
    shell.terminate()
    assert shell.wait(timeout=10) == 0
    assert "ended: it got SIGTERM or SIGHUP (racfg lock break, or someone on the lock host)" in release(shell)
    assert show(lockdir, stem) == []  # its holder file went with it


def test_break_ends_the_holding_shell_and_removes_leftover_files(lockdir: Path, stem: str):
    shell = acquire(lockdir, stem, "-x", INFO)
    leftover = lockdir / f"{stem}.{2**22 + 1}.json"  # a shell long gone left its file
    leftover.write_text(json.dumps(INFO))
    holders = show(lockdir, stem)
    assert {(h.shell_pid, h.alive) for h in holders} == {(shell.pid, True), (2**22 + 1, False)}
    done = subprocess.run(script(BREAK, str(lockdir), stem, *(str(h.shell_pid) for h in holders)), capture_output=True,
                          text=True, timeout=10, check=True)
    assert done.stdout.split() == ["ended", str(shell.pid)]
    shell.wait(timeout=10)  # it ended (TimeoutExpired if not)
    assert show(lockdir, stem) == []
    release(acquire(lockdir, stem, "-x", INFO))


def test_break_leaves_a_process_that_is_not_a_lock_shell_alone(lockdir: Path, stem: str):
    release(acquire(lockdir, stem, "-x", INFO))  # the directory exists: BREAK gets to its loop
    other = subprocess.Popen(["sleep", "30"])
    try:
        done = subprocess.run(script(BREAK, str(lockdir), stem, str(other.pid)), capture_output=True, text=True,
                              timeout=10)
        assert done.stdout == "" and other.poll() is None
    finally:
        other.kill()
        other.wait()


# --- the lock directory is root's alone; planted files are named, never followed ---------------

def test_the_lock_directory_is_made_root_only_and_the_lock_file_lives_in_it(lockdir: Path, stem: str):
    release(acquire(lockdir, stem, "-x", INFO))
    info = lockdir.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o700)
    assert (lockdir / f"{stem}.lock").is_file()


@pytest.mark.parametrize(("make", "said"), [
    ("mode", "has mode 755, not 700 (root's alone)"),
    ("owner", "is owned by uid 65534, not root"),
    ("link", "is a symbolic link (to "),
    ("file", "is not a directory"),
], ids=["wider-mode", "other-owner", "symlink", "a-file"])
def test_a_lock_directory_not_roots_alone_is_refused_naming_it(lockdir: Path, stem: str, tmp_path: Path,
                                                               make: str, said: str):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    if make == "mode":
        lockdir.mkdir()
        lockdir.chmod(0o755)
    elif make == "owner":
        lockdir.mkdir(mode=0o700)
        os.chown(lockdir, 65534, 65534)
    elif make == "link":
        lockdir.symlink_to(elsewhere)
    else:
        lockdir.write_text("")
    for text in (ACQUIRE, SHOW, BREAK):
        args = (str(lockdir), stem, *(("-x", "{}", "45") if text is ACQUIRE else ()))
        done = subprocess.run(script(text, *args), capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == UNSAFE and done.stderr.strip().startswith(str(lockdir)), done.stderr
        assert said in done.stderr
    assert list(elsewhere.iterdir()) == []  # nothing written through the link


def test_a_planted_lock_file_link_is_refused(lockdir: Path, stem: str, tmp_path: Path):
    release(acquire(lockdir, stem, "-x", INFO))
    target = tmp_path / "target"
    target.write_text("keep\n")
    (lockdir / f"{stem}.lock").unlink()
    (lockdir / f"{stem}.lock").symlink_to(target)
    done = try_acquire(lockdir, stem)
    assert done.returncode == UNSAFE and "lock is a symbolic link, not racfg's lock file" in done.stderr
    assert target.read_text() == "keep\n"


def test_show_names_each_planted_or_torn_holder_file_and_follows_no_link(lockdir: Path, stem: str, tmp_path: Path):
    release(acquire(lockdir, stem, "-x", INFO))
    secret = tmp_path / "secret"
    secret.write_text('{"command": "SECRET-CONTENT"}')
    (lockdir / f"{stem}.101.json").symlink_to(secret)
    (lockdir / f"{stem}.102.json").write_text('{"command": "deploy", "us')  # torn
    (lockdir / f"{stem}.103.json").write_text(json.dumps(INFO))
    os.chown(lockdir / f"{stem}.103.json", 65534, 65534)
    (lockdir / f"{stem}.evil.json").write_text("{}")
    os.mkfifo(lockdir / f"{stem}.104.json")  # reading it would block: never read
    shell = acquire(lockdir, stem, "-x", INFO)
    try:
        listed = {h.path.rsplit("/", 1)[-1]: h for h in show(lockdir, stem)}
        busy = try_acquire(lockdir, stem)
    finally:
        release(shell)
    assert "SECRET-CONTENT" not in json.dumps([h.info for h in listed.values()])
    assert listed[f"{stem}.101.json"].problem == f"a symbolic link (to {secret})"
    assert listed[f"{stem}.102.json"].problem.startswith("not JSON (") and not listed[f"{stem}.102.json"].planted
    assert listed[f"{stem}.103.json"].problem == "owned by uid 65534, not root"
    assert listed[f"{stem}.104.json"].problem == "not a regular file"
    assert listed[f"{stem}.evil.json"].problem == f"its name is not {stem}.PID.json"
    assert listed[f"{stem}.{shell.pid}.json"].info == INFO
    assert busy.returncode == BUSY  # and a refused run lists them all, each as what it is
    refused = refusal("x", "deploy", "here", parse_holders("here", busy.stdout)).message
    assert refused.count("unreadable holder file") == 5 and "SECRET-CONTENT" not in refused


# --- a lost lock stops the run ----------------------------------------------------------------

def test_a_lost_lock_requests_every_registered_stop_and_says_why():
    from racfg.lock.local import LockLostError, SiteLock, Stop

    lock, stop = SiteLock("lab", "deploy", shared=False, host="dgx01", reports_loss=True), Stop()
    with lock.stopping(stop):
        lock.lose("the holding shell on dgx01 was killed")
        lock.lose("a second report changes nothing")
    assert stop.reason == "the site lock was lost: the holding shell on dgx01 was killed" and not stop.insisted
    assert lock.stops == []  # unregistered after the block
    error = lock.error()
    assert error.exit_code == ExitCode.CANNOT_RUN
    assert "the site lock of lab was lost during this deploy (the holding shell on dgx01 was killed)" in str(error)
    late = Stop()
    with lock.stopping(late):  # a Stop registered after the loss is requested at once
        assert late.is_set()
    # drift's check-mode deploy inside drift (the lock is drift's, which does not report a loss in an
    # outcome of its own): once its play has stopped, the loss ends drift too
    drift, inner = SiteLock("lab", "drift", shared=True, host="dgx01"), Stop()
    with pytest.raises(LockLostError, match="lost during this drift"), drift.stopping(inner):
        drift.lose("the holding shell on dgx01 was killed")
        assert inner.is_set()


def test_a_lost_lock_interrupts_a_run_that_registered_no_stop_as_ctrl_c_does():
    """drift and smoke register no Stop: the loss reaches them as SIGINT (KeyboardInterrupt), and
    racfg.lock.local turns that into the loss's own error (exit 3) saying that a reader changed nothing."""
    import threading

    from racfg.lock.local import SiteLock

    lock = SiteLock("lab", "drift", shared=True, host="dgx01")
    with pytest.raises(KeyboardInterrupt):
        threading.Thread(target=lock.lose, args=("the SSH session to dgx01 that held it dropped",)).start()
        threading.Event().wait(60)  # the signal ends this wait
    message = lock.error().message
    assert "lost during this drift (the SSH session to dgx01 that held it dropped)" in message
    assert "it changes nothing (it reads), so nothing was changed" in message


def test_sigterm_stops_a_run_as_ctrl_c_does_and_says_which():
    import signal

    from racfg.lock.local import stop_on_signals

    with stop_on_signals() as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.wait(10) and stop.reason == "SIGTERM"


def test_a_second_signal_insists():
    from racfg.lock.local import Stop

    stop = Stop()
    stop.request("Ctrl-C")
    assert (stop.is_set(), stop.insisted) == (True, False)
    stop.request("Ctrl-C")
    assert stop.insisted and stop.reason == "Ctrl-C"


def test_each_heartbeat_is_answered_so_the_controller_knows_the_lock_host_hears_it(lockdir: Path, stem: str):
    shell = acquire(lockdir, stem, "-x", INFO)
    assert shell.stdin is not None and shell.stdout is not None
    for _ in range(2):
        shell.stdin.write("\n")
        shell.stdin.flush()
        assert shell.stdout.readline() == "beat\n"
    release(shell)


class _Channel:
    """What _Watch reads (through racfg.ssh.channels.Stream) of a paramiko channel, with the holding
    shell's output given here."""

    def __init__(self, said: bytes = b"", status: int | None = None) -> None:
        self.said, self.status, self.closed = said, status, False

    def recv_ready(self) -> bool:
        return bool(self.said)

    def recv(self, size: int) -> bytes:
        out, self.said = self.said[:size], self.said[size:]
        return out

    def exit_status_ready(self) -> bool:
        return self.status is not None

    @property
    def exit_status(self) -> int:
        return -1 if self.status is None else self.status

    def get_transport(self) -> object:
        return type("Transport", (), {"is_active": lambda self: True})()


def test_the_watch_tells_why_the_lock_is_gone():
    """The holding shell's own words when it let go; a kill; and a lock host that stopped answering
    heartbeats, counted lost before the lock host's lease could have ended it."""
    from racfg.lock.site_lock import ANSWER_S, LEASE_S, _Watch
    from racfg.ssh.channels import Stream

    assert ANSWER_S < LEASE_S
    watch = _Watch(Stream(_Channel(b"beat\n")), "dgx01")
    assert watch.why_gone() is None
    watch.answered -= ANSWER_S + 1  # as if the last answer came that long ago
    assert watch.why_gone() == f"no answer from dgx01 for {ANSWER_S + 1:.0f} s (it ends a holder it has not heard " \
                               f"from for {LEASE_S} s)"
    said = b"beat\nended: no heartbeat from the controller for 45 s (the lease ran out)\n"
    ended = _Watch(Stream(_Channel(said, 0)), "h")
    assert ended.why_gone() == "the holding shell on h ended: no heartbeat from the controller for 45 s (the lease " \
                               "ran out)"
    killed = _Watch(Stream(_Channel(status=-1)), "h").why_gone()
    assert killed == "the holding shell on h was killed (racfg lock break --force, or someone on h)"


def test_a_run_that_held_the_lock_ends_with_the_losses_error_whatever_it_was_doing(monkeypatch, tmp_path: Path):
    """site_change_lock: the SSH part (held_on_site, lab-tested) stands in here for the lock host, so
    that the loss comes when the test says: the interrupt it causes becomes the loss's exit-3 error,
    and a run that finished its block regardless still ends with it; deploy (reports_loss) does not."""
    import threading
    from contextlib import contextmanager

    import racfg.lock.site_lock
    from racfg.inventory import load_cluster
    from racfg.lock.local import LockLostError, site_change_lock

    losses: list = []

    @contextmanager
    def held(cluster, overrides, what, *, shared, state_dir, on_lost):
        losses.append(on_lost)
        yield "dgx01"

    monkeypatch.setattr(racfg.lock.site_lock, "held_on_site", held)
    monkeypatch.setenv("RACFG_STATE_DIR", str(tmp_path))
    cluster = load_cluster(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")
    smoke = site_change_lock(cluster, NO_OVERRIDES, holder="smoke")
    with pytest.raises(LockLostError, match=r"lost during this smoke \(shell killed\), so it stopped"), smoke:
        threading.Thread(target=losses[-1], args=("shell killed",)).start()
        threading.Event().wait(60)  # interrupted by the loss's SIGINT
    drift = site_change_lock(cluster, NO_OVERRIDES, shared=True, holder="drift")
    with pytest.raises(LockLostError, match="lost during this drift"), drift as lock:
        lock.stops.append(Stop())  # a run that stops by itself: no SIGINT
        losses[-1]("session dropped")
        lock.stops.clear()
    with site_change_lock(cluster, NO_OVERRIDES, holder="deploy", reports_loss=True) as lock:
        lock.stops.append(Stop())
        losses[-1]("session dropped")
        lock.stops.clear()
    assert lock.lost == "session dropped"  # deploy's outcome says it: no error here
