"""The site lock across checkouts, on a lab of its own (tests/deploy/locklab.yaml): runs from two
state directories (two checkouts, as far as racfg can tell) see each other's lock because it is
held on the site's first host, not in either checkout.

Each racfg here runs as a user runs it: the CLI in a subprocess, from its own working directory
(so its own ``.racfg/``). Order: a deploy refused beside a deploy; a held lock that goes stale
and is broken; two drifts that share it; a deploy stopped by Ctrl-C, then one whose lock is lost
(its holding shell killed on the lock host), each while a module runs on a host for as long as it
is let (a planted ``ip`` that never ends, which the common role's probe runs): when the lock is
free again, no process of that run is left on any host; planted holder files, named.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from labsupport import LabHandle, running_lab

pytestmark = pytest.mark.lab

INVENTORY = Path(__file__).resolve().parent / "locklab.yaml"
LOCK_HOST = "lk-dgx01"
LOCK_DIR = "/run/lock/racfg"
HOLDERS = f"{LOCK_DIR}/locklab.*.json"


@pytest.fixture(scope="module")
def locklab() -> Iterator[LabHandle]:
    with running_lab(INVENTORY) as handle:
        yield handle


def env() -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k != "RACFG_STATE_DIR"}  # each run: its cwd's .racfg
    return {**clean, "RACFG_PLAIN": "1"}


def racfg(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "racfg", *args], capture_output=True, text=True, env=env(),
                          cwd=cwd, timeout=timeout)


def start(cwd: Path, *args: str, **more_env: str) -> subprocess.Popen[str]:
    cwd.mkdir(exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "racfg", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**env(), **more_env}, cwd=cwd, start_new_session=True)


def holder_files(lab: LabHandle) -> list[str]:
    """The holder files on the lock host, one JSON document per line."""
    out = lab.ssh(LOCK_HOST, f"cat {HOLDERS} 2>/dev/null; true").stdout
    return [line for line in out.splitlines() if line.strip()]


def wait_for(what: str, condition, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def stop(process: subprocess.Popen[str]) -> None:
    """Kill a run started here with its whole process group (SIGKILL: nothing of it cleans up)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)


def test_a_second_deploy_from_another_checkout_is_refused_naming_the_first(locklab: LabHandle, tmp_path: Path):
    first = start(tmp_path / "a", "deploy", str(INVENTORY), "--yes")
    try:
        wait_for("the first deploy to hold the site lock", lambda: first.poll() is not None
                 or any(f'"pid": {first.pid}' in line for line in holder_files(locklab)))
        assert first.poll() is None, first.communicate()
        refused = racfg(tmp_path / "b", "deploy", str(INVENTORY), "--yes")
        assert refused.returncode == 3, refused.stdout[-2000:] + refused.stderr[-2000:]
        assert "another racfg run holds site locklab" in refused.stderr
        who = f"deploy (exclusive) by {getpass.getuser()}@{socket.gethostname()} pid {first.pid}, started "
        assert who in refused.stderr, refused.stderr
        assert f"state {tmp_path / 'a' / '.racfg'}" in refused.stderr
        assert f"held on {LOCK_HOST}" in refused.stderr
        runs = tmp_path / "b" / ".racfg" / "runs"
        assert not runs.exists() or not any(runs.iterdir())  # refused before its run began
    finally:
        stop(first)  # SIGKILL: the holder's SSH session dies with it, and so does its flock
    wait_for("the killed holder's lock to be released",
             lambda: "lock free" in racfg(tmp_path, "lock", "show", str(INVENTORY)).stdout, timeout=30)
    assert holder_files(locklab) == []


HOLD = """
import sys, time
from racfg.cli.providers import overrides_for
from racfg.inventory import load_cluster
from racfg.lock.local import site_change_lock
cluster = load_cluster(sys.argv[1])
with site_change_lock(cluster, overrides_for(cluster), holder="deploy"):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_frozen_holder_goes_stale_and_break_says_what_it_ended(locklab: LabHandle, tmp_path: Path):
    """A holder whose controller froze (SIGSTOP: its SSH session stays open, its heartbeat stops)."""
    (tmp_path / "c").mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(INVENTORY)], stdout=subprocess.PIPE, text=True,
                              env=env(), cwd=tmp_path / "c", start_new_session=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        shown = racfg(tmp_path, "lock", "show", str(INVENTORY))
        assert shown.returncode == 0 and f"pid {holder.pid}," in shown.stdout and "stale" not in shown.stdout
        live = racfg(tmp_path, "lock", "break", str(INVENTORY))
        assert live.returncode == 3 and "not broken, still live" in live.stderr, live.stdout + live.stderr
        os.kill(holder.pid, signal.SIGSTOP)
        wait_for("the frozen holder to be reported stale",
                 lambda: "[stale: no heartbeat" in racfg(tmp_path, "lock", "show", str(INVENTORY)).stdout, timeout=40)
        broken = racfg(tmp_path, "lock", "break", str(INVENTORY))
        assert broken.returncode == 0, broken.stdout + broken.stderr
        line = next(line for line in broken.stdout.splitlines() if line.startswith("broke: "))
        assert f"{getpass.getuser()}@{socket.gethostname()} pid {holder.pid}, started " in line
        assert "ended its shell pid " in line and f" on {LOCK_HOST}" in line
        assert "lock free" in racfg(tmp_path, "lock", "show", str(INVENTORY)).stdout
        assert holder_files(locklab) == []
    finally:
        stop(holder)


def test_drifts_share_the_lock_and_a_deploy_beside_them_is_refused(locklab: LabHandle, tmp_path: Path):
    """Two drifts from two checkouts hold the lock at once; each holds it once (its check-mode deploy
    inside does not take it again); a deploy beside them is refused naming both."""
    drifts = [start(tmp_path / name, "drift", str(INVENTORY)) for name in ("d1", "d2")]
    pids, most, refused = {d.pid for d in drifts}, 0, None
    try:
        deadline = time.monotonic() + 600
        while any(d.poll() is None for d in drifts):
            assert time.monotonic() < deadline, "the drifts did not end"
            held = Counter(json.loads(line)["pid"] for line in holder_files(locklab))
            most = max(most, *held.values(), 0)
            if refused is None and set(held) == pids:
                assert all('"mode": "shared"' in line for line in holder_files(locklab))
                refused = racfg(tmp_path / "e", "deploy", str(INVENTORY), "--yes")
            time.sleep(0.3)
        outputs = [d.communicate(timeout=60) for d in drifts]
    finally:
        for d in drifts:
            stop(d)
    assert refused is not None, "the two drifts never held the lock at the same time"
    assert refused.returncode == 3, refused.stdout[-2000:] + refused.stderr[-2000:]
    for pid in pids:
        assert f"drift (shared) by {getpass.getuser()}@{socket.gethostname()} pid {pid}," in refused.stderr
    assert most == 1, f"a drift held the lock {most} times at once"
    for d, (out, err) in zip(drifts, outputs, strict=True):
        # drift of a site never fully deployed finds drift (1); what matters: it ran, not refused (3)
        assert d.returncode in (0, 1), out[-2000:] + err[-2000:]


# --- a stopped deploy: its module processes on the hosts end before the lock is free -----------

SLOW_PIDS = "/run/racfg-test-slow.pids"
SLOW_TOOL = "/usr/local/sbin/ip"
# The common role's probe runs `ip -j addr show` first thing, in every pass that runs it (a deploy's
# read pass, its apply pass, drift's read); /usr/local/sbin comes first in the PATH sshd gives it. Run
# by a module of a racfg run (RACFG_RUN set), this `ip` writes its parent's pid (the probe's module
# process) and its own, then never ends: the module runs until it is stopped. Run by anything else
# (the tests' own commands, validate's probes beside drift's), it is the real one.
SLOW_IP = f"""#!/bin/sh
[ -n "$RACFG_RUN" ] || PATH=/usr/sbin:/usr/bin:/sbin:/bin exec ip "$@"
echo "$PPID $$" > {SLOW_PIDS}
exec sleep 86400
"""


@pytest.fixture
def slow_module(locklab: LabHandle) -> Iterator[None]:
    plant = f"cat > {SLOW_TOOL} <<'EOF'\n{SLOW_IP}EOF\nchmod 755 {SLOW_TOOL}"
    locklab.ssh(LOCK_HOST, f"rm -f {SLOW_PIDS}; {plant}")
    try:
        yield
    finally:
        locklab.ssh(LOCK_HOST, f"rm -f {SLOW_TOOL}; [ -f {SLOW_PIDS} ] && kill -KILL $(cat {SLOW_PIDS}) "
                               f"2>/dev/null; rm -f {SLOW_PIDS}; true")
        live = holding_shells(locklab)  # a failed test's killed shell leaves its holder file: not the next one's
        locklab.ssh(LOCK_HOST, "for f in " + HOLDERS + "; do case $f in " + "".join(f"*.{p}.json) ;; " for p in live)
                    + '*) rm -f "$f";; esac; done')


def module_started(lab: LabHandle, deploy: subprocess.Popen[str]) -> tuple[int, int]:
    """(the probe's module process, the tool it runs) on the lock host, once the slow tool runs."""
    found: list[str] = []

    def started() -> bool:
        found[:] = lab.ssh(LOCK_HOST, f"cat {SLOW_PIDS} 2>/dev/null; true").stdout.split()
        return deploy.poll() is not None or len(found) == 2
    wait_for("the probe to run the slow ip", started, timeout=240)
    assert deploy.poll() is None, deploy.communicate()
    return int(found[0]), int(found[1])


def run_ids(lab: LabHandle) -> set[tuple[str, str]]:
    """(host, RACFG_RUN value) of every process on the lab's hosts that carries a run's marker."""
    look = r"""for f in /proc/[0-9]*/environ; do tr '\0' '\n' < $f 2>/dev/null | grep '^RACFG_RUN='; done; true"""
    out = set()
    for host in ("lk-dgx01", "lk-stor01"):
        out |= {(host, line) for line in lab.ssh(host, look).stdout.splitlines()}
    return out


def alive(lab: LabHandle, *pids: int) -> list[int]:
    """Those of ``pids`` still running on the lock host (a zombie has ended: only its parent has not looked)."""
    look = "for p in " + " ".join(map(str, pids)) + r"""; do
      s=$(awk '/^State:/ {print $2}' /proc/$p/status 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ] && echo $p
    done; true"""
    return [int(p) for p in lab.ssh(LOCK_HOST, look).stdout.split()]


def assert_stopped(lab: LabHandle, document: dict, module: int, tool: int, before: set[tuple[str, str]]) -> None:
    """racfg found the module and its tool on the lock host and stopped them; nothing of the run is left."""
    [there] = [m for m in document["module_processes"] if m["host"] == LOCK_HOST]
    assert {str(module), str(tool)} <= set(there["found"]), there
    assert {module, tool} <= set(there["stopped"]) | set(there["killed"]), there
    assert alive(lab, module, tool) == []
    assert run_ids(lab) - before == set()  # no process of this run on any host


def test_ctrl_c_ends_the_runs_module_processes_on_the_hosts_before_the_lock_is_free(
        locklab: LabHandle, tmp_path: Path, slow_module: None):
    """Ctrl-C while a pass that changes the host runs (the common role, one pass): the module is
    awaited for --stop-wait, then stopped, and only then is the lock free; the recap says what was
    in flight."""
    before = run_ids(locklab)
    deploy = start(tmp_path / "s", "deploy", str(INVENTORY), "--yes", "--format", "json", "--tags", "common",
                   "--limit", LOCK_HOST, RACFG_STOP_WAIT="2")
    try:
        module, tool = module_started(locklab, deploy)
        deploy.send_signal(signal.SIGINT)
        out, err = deploy.communicate(timeout=180)
    finally:
        stop(deploy)
    assert deploy.returncode == 3, out[-2000:] + err[-3000:]
    document = json.loads(out)
    assert (document["interrupted"], document["stop_reason"], document["stopped_reading"]) == (True, "Ctrl-C", False)
    assert re.search(rf"racfg: {LOCK_HOST}: waiting up to 2 s for \d+ module process\(es\) of this run to end "
                     rf"\(Ctrl-C again: stop them now\): .*pid {module} \(", err), err
    [host] = document["hosts"]
    assert host["host"] == LOCK_HOST and host["in_flight"].startswith("common : "), host
    [there] = [m for m in document["module_processes"] if m["host"] == LOCK_HOST]
    assert not {module, tool} & set(there["ended"]), there  # they never end by themselves: stopped, not awaited out
    assert "lock free" in racfg(tmp_path, "lock", "show", str(INVENTORY)).stdout
    assert_stopped(locklab, document, module, tool, before)
    assert locklab.ssh(LOCK_HOST, f"stat -c '%u %a %F' {LOCK_DIR}").stdout.strip() == "0 700 directory"


def test_a_lost_lock_stops_the_deploy_with_exit_3_and_ends_its_module_processes(
        locklab: LabHandle, tmp_path: Path, slow_module: None):
    before = run_ids(locklab)
    deploy = start(tmp_path / "l", "deploy", str(INVENTORY), "--yes", "--format", "json")
    try:
        module, tool = module_started(locklab, deploy)
        kill_holding_shell(locklab)  # the flock goes with it
        out, err = deploy.communicate(timeout=180)
    finally:
        stop(deploy)
    assert deploy.returncode == 3, out[-2000:] + err[-3000:]
    document = json.loads(out)
    why = f"the holding shell on {LOCK_HOST} was killed"
    assert document["lock_lost"].startswith(why), document["lock_lost"]
    assert document["stop_reason"] == f"the site lock was lost: {document['lock_lost']}"
    assert f"racfg: the site lock of locklab was lost ({why}" in err
    # stopped in the read pass, which changes nothing: its modules stopped at once, not awaited
    assert re.search(rf"racfg: {LOCK_HOST}: stopping \d+ module process\(es\) of this run: .*pid {module} \(", err)
    assert_stopped(locklab, document, module, tool, before)
    # SIGKILL left the holder file behind: shown stale, and broken
    shown = racfg(tmp_path, "lock", "show", str(INVENTORY)).stdout
    assert "lock on lk-dgx01 held by" in shown and "[stale: its shell on lk-dgx01 is gone" in shown
    broken = racfg(tmp_path, "lock", "break", str(INVENTORY))
    assert broken.returncode == 0 and f"removed its leftover holder file on {LOCK_HOST}" in broken.stdout
    assert holder_files(locklab) == []


def holding_shells(lab: LabHandle) -> list[int]:
    """The shells holding the site lock on the lock host now (by their holder files' names)."""
    look = f"""for f in {HOLDERS}; do [ -e "$f" ] || continue; p=${{f%.json}}; p=${{p##*.}}
      grep -qa racfg-lock "/proc/$p/cmdline" 2>/dev/null && echo "$p"; done; true"""
    return [int(pid) for pid in lab.ssh(LOCK_HOST, look).stdout.split()]


def kill_holding_shell(lab: LabHandle) -> None:
    """End the lock's holding shell on the lock host as someone there would (SIGKILL: no trap runs)."""
    [shell] = holding_shells(lab)
    lab.ssh(LOCK_HOST, f"kill -KILL {shell}")


def test_a_drift_whose_lock_is_lost_stops_too_changing_nothing_and_reporting_nothing(
        locklab: LabHandle, tmp_path: Path, slow_module: None):
    """A reader chooses as a writer does: it stops, exit 3, saying it changed nothing; no findings."""
    before = run_ids(locklab)
    drift = start(tmp_path / "dl", "drift", str(INVENTORY))
    try:
        module, tool = module_started(locklab, drift)
        kill_holding_shell(locklab)
        out, err = drift.communicate(timeout=180)
    finally:
        stop(drift)
    assert drift.returncode == 3, out[-2000:] + err[-3000:]
    assert (f"racfg: error: the site lock of locklab was lost during this drift (the holding shell on {LOCK_HOST} "
            "was killed") in err
    assert "it changes nothing (it reads), so nothing was changed; its findings are not reported" in err
    assert "FAIL" not in out and "PASS" not in out  # no verdict printed
    assert alive(locklab, module, tool) == [] and run_ids(locklab) - before == set()
    racfg(tmp_path, "lock", "break", str(INVENTORY))  # the killed shell's leftover holder file


def test_planted_holder_files_are_named_not_read_and_left_by_break(locklab: LabHandle, tmp_path: Path):
    planted = f"{LOCK_DIR}/locklab.999999.json"
    torn = f"{LOCK_DIR}/locklab.999998.json"
    locklab.ssh(LOCK_HOST, f"mkdir -p -m 700 {LOCK_DIR}; ln -sf /etc/shadow {planted}; "
                           f"printf '{{\"command\": \"dep' > {torn}")
    try:
        shown = racfg(tmp_path, "lock", "show", str(INVENTORY))
        assert shown.returncode == 0, shown.stdout + shown.stderr
        assert "site locklab: lock on lk-dgx01 held by" in shown.stdout  # the torn file's shell: gone, stale
        assert (f"unreadable holder file {planted} on {LOCK_HOST}: a symbolic link (to /etc/shadow) (racfg did "
                "not write it") in shown.stdout
        assert f"unreadable holder file {torn}: not JSON (" in shown.stdout and "root:" not in shown.stdout
        broken = racfg(tmp_path, "lock", "break", str(INVENTORY))
        assert broken.returncode == 0 and f"left: unreadable holder file {planted}" in broken.stdout
        assert locklab.ssh(LOCK_HOST, f"ls {HOLDERS}").stdout.split() == [planted]  # the torn one's shell was gone
    finally:
        locklab.ssh(LOCK_HOST, f"rm -f {planted} {torn}")
