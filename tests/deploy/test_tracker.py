"""The event tracker folds ansible-runner events into the recap a person reads."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from racfg.connection import NO_OVERRIDES
from racfg.playbook import PlaybookTracker

REPO = Path(__file__).resolve().parents[2]


def ev(kind: str, **data: object) -> dict[str, object]:
    return {"event": kind, "event_data": data}


def test_a_task_started_on_a_host_is_in_flight_until_its_result_comes():
    """What a stopped run reports as in flight (maybe partly applied): started, no result yet."""
    t = PlaybookTracker()
    t.handle(ev("playbook_on_task_start", task="Install MLNX_OFED", role="ofed"))
    t.handle(ev("runner_on_start", host="dgx01"))
    t.handle(ev("runner_on_start", host="dgx02"))
    t.handle(ev("runner_on_ok", host="dgx02", task="Install MLNX_OFED", role="ofed", res={"changed": True}))
    assert t.hosts["dgx01"].as_dict()["in_flight"] == "ofed : Install MLNX_OFED"
    assert t.hosts["dgx02"].as_dict()["in_flight"] is None


def test_tracker_counts_and_problems():
    lines: list[str] = []
    t = PlaybookTracker(total_tasks=3, on_line=lines.append)
    t.handle(ev("playbook_on_play_start", play="hosts"))
    t.handle(ev("playbook_on_task_start", task="set mtu", role="fabric"))
    t.handle(ev("runner_on_start", host="dgx01"))
    t.handle(ev("runner_on_ok", host="dgx01", task="set mtu", role="fabric", res={"changed": True,
                "diff": {"before": "mtu 1500\n", "after": "mtu 9000\n"}}))
    t.handle(ev("runner_on_failed", host="dgx02", task="set mtu", role="fabric", res={"msg": "no such device"}))
    t.handle(ev("runner_on_failed", host="dgx02", task="probe", ignore_errors=True, res={"msg": "x"}))
    t.handle(ev("runner_on_unreachable", host="stor01", task="gather", res={"msg": "ssh: timed out"}))
    t.handle(ev("runner_on_skipped", host="dgx01", task="gpu"))
    assert t.tasks_started == 1
    assert t.hosts["dgx01"].changed == 1 and t.hosts["dgx01"].skipped == 1
    assert t.hosts["dgx02"].failed == 1 and t.hosts["dgx02"].ok == 1
    assert t.hosts["dgx02"].problems == ["fabric : set mtu: no such device"]
    assert t.hosts["stor01"].unreachable == 1
    assert "  changed: [dgx01] fabric : set mtu" in lines
    assert any(line.startswith("  UNREACHABLE: [stor01]") for line in lines)
    assert t.diffs and "-mtu 1500" in t.diffs[0].text and "+mtu 9000" in t.diffs[0].text


def verdict(**roles: dict) -> dict[str, object]:
    """A host's verdict as playbooks/read.yml prints it: per role, what its reads found."""
    empty = {"would_change": [], "not_read": False, "left_alone": [], "refused": []}
    return {"msg": {"racfg_verdict": {role: {**empty, **found} for role, found in roles.items()}}}


def test_the_plays_verdicts_fold_into_one_per_host() -> None:
    """A read pass's verdicts (playbooks/read.yml prints one per host; any more add to it): each adds
    its roles' would-change, not-read, left-alone and refused entries to the host's; a verdict that
    refuses fails the host with what and by which role, and its "skipped:" lines are the host's skips
    by role."""
    t = PlaybookTracker()
    task = "Say what a deploy would change, leave alone or refuse on this host"
    t.handle(ev("runner_on_ok", host="dgx01", task=task, res=verdict(
        common={"left_alone": ["skipped: no cpufreq on this host"]},
        fabric={"would_change": ["file /etc/x content"], "not_read": True}, ofed={})))
    t.handle(ev("runner_on_ok", host="dgx01", task=task, res=verdict(gpu={"not_read": True}, nfs_client={})))
    t.handle(ev("runner_on_failed", host="dgx02", task=task, res={**verdict(
        gpu={"refused": ["Expected: 8 NVIDIA GPUs Actual: none on the PCI bus"]},
        nfs_client={"would_change": ["mount"]}), "failed": True}))
    t.handle(ev("runner_on_ok", host="dgx03", task="a debug", res={"msg": {"other": 1}}))
    assert t.would_change == {"dgx01": {"common": [], "fabric": ["file /etc/x content"], "ofed": [], "gpu": [],
                                        "nfs_client": []}}  # a refused host has no plan
    assert t.not_read == {"dgx01": ["fabric", "gpu"], "dgx02": []}
    assert t.hosts["dgx01"].skips == [{"role": "common", "reason": "no cpufreq on this host"}]
    assert t.hosts["dgx01"].failed == 0 and t.hosts["dgx02"].failed == 1
    assert t.hosts["dgx02"].problems == ["gpu: Expected: 8 NVIDIA GPUs Actual: none on the PCI bus"]
    assert "dgx03" not in t.would_change  # a message that is no verdict says nothing of the reads


def test_stats_event_is_authoritative():
    t = PlaybookTracker()
    t.handle(ev("runner_on_ok", host="dgx01", task="a", res={"changed": False}))
    t.handle(ev("playbook_on_stats", ok={"dgx01": 10, "stor01": 4}, changed={"dgx01": 2},
                failures={}, dark={"stor01": 1}, skipped={"dgx01": 3}))
    assert t.stats_seen
    assert (t.hosts["dgx01"].ok, t.hosts["dgx01"].changed, t.hosts["dgx01"].skipped) == (8, 2, 3)
    assert t.hosts["stor01"].unreachable == 1
    assert t.totals == {"ok": 12, "changed": 2, "failed": 0, "unreachable": 1, "skipped": 3}


def test_loop_failure_names_the_failed_items():
    t = PlaybookTracker()
    t.handle(ev("runner_on_failed", host="dgx02", task="check nics", role="fabric", res={
        "msg": "One or more items failed",
        "results": [{"failed": False, "msg": "ok"}, {"failed": True, "msg": "data NIC data0: not present"}]}))
    assert t.hosts["dgx02"].problems == ["fabric : check nics: data NIC data0: not present"]


def test_skipped_with_reason_lines_are_kept_per_role_and_host():
    """A role's "skipped: why" debug line (each line of a list message, each item of a loop of
    them) becomes a recap entry;
    a task Ansible skipped on a condition, or any other message, does not."""
    t = PlaybookTracker()
    t.handle(ev("runner_on_ok", host="dgx01", task="Say why", role="weka",
                res={"msg": "skipped: no Weka distribution given (software.weka.dist)"}))
    t.handle(ev("runner_on_ok", host="stor01", task="Say where", role="nvme_storage",
                res={"results": [{"msg": "skipped: /dev/nvme0n1 scheduler none: absent"}, {"msg": "fine"}]}))
    t.handle(ev("runner_on_ok", host="stor01", task="Say what is left alone", role="common",
                res={"msg": ["skipped: clock discipline: no CAP_SYS_TIME", "governor performance", 3]}))
    t.handle(ev("runner_on_ok", host="stor01", task="Report", role="ofed", res={"msg": "RDMA devices: mlx5_0"}))
    t.handle(ev("runner_on_skipped", host="stor01", task="gpu"))
    assert t.hosts["dgx01"].as_dict()["skips"] == [
        {"role": "weka", "reason": "no Weka distribution given (software.weka.dist)"}]
    assert t.hosts["stor01"].skips == [{"role": "nvme_storage", "reason": "/dev/nvme0n1 scheduler none: absent"},
                                       {"role": "common", "reason": "clock discipline: no CAP_SYS_TIME"}]


def write_frozen_objects_filter(play_dir: Path) -> None:
    """A filter plugin beside a test play: ``frozen_objects`` is gc.get_freeze_count() of the process
    that templates the task, i.e. of the worker Ansible forked for it (Python's default there: 0)."""
    (play_dir / "filter_plugins").mkdir()
    (play_dir / "filter_plugins" / "frozen.py").write_text(
        "import gc\n\n\nclass FilterModule:\n    def filters(self):\n"
        "        return {'frozen_objects': lambda _: gc.get_freeze_count()}\n")


def test_a_plain_ansible_playbook_run_with_racfgs_config_freezes_what_each_worker_inherits(tmp_path):
    """ansible.cfg enables playbooks/callback_plugins/fork_gc for an operator's own ansible-playbook
    run too, wherever the play lives: each worker starts with the controller's heap frozen."""
    from labsupport import operator_env

    play = tmp_path / "play.yml"
    play.write_text("- hosts: localhost\n  gather_facts: false\n  tasks:\n"
                    "    - name: Count what the worker froze\n      ansible.builtin.debug:\n"
                    "        msg: \"{{ 0 | frozen_objects }}\"\n")
    write_frozen_objects_filter(tmp_path)
    env = operator_env()
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           str(play)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stdout + proc.stderr
    [frozen] = re.findall(r'"msg": "?(\d+)', proc.stdout)  # 2.16-2.18 print the number as a string
    assert int(frozen) > 1000


def test_a_real_playbook_run_records_its_events_and_keeps_no_fact_files(tmp_path):
    """One ansible-runner invocation on the controller itself (local connection, no lab): the
    tracker sees the play through to its recap, the record keeps the events (the hosts' task starts
    aside), and the facts stay in Ansible's memory cache as in a plain ansible-playbook run (no
    per-host JSON files)."""
    import threading

    from racfg.playbook import Playbook, Selection

    (tmp_path / "hosts.yml").write_text("all:\n  hosts:\n    here:\n      ansible_connection: local\n"
                                        "      ansible_python_interpreter: \"{{ ansible_playbook_python }}\"\n")
    playbook = tmp_path / "play.yml"
    playbook.write_text("- hosts: all\n  gather_facts: true\n  gather_subset: [min]\n  tasks:\n"
                        "    - name: Say the kernel\n      ansible.builtin.debug:\n"
                        "        msg: \"{{ ansible_facts['kernel'] }}\"\n"
                        "    - name: Count what the worker froze\n      ansible.builtin.debug:\n"
                        "        msg: \"{{ 0 | frozen_objects }}\"\n"
                        "    - name: Change something\n      ansible.builtin.command: \"true\"\n")
    write_frozen_objects_filter(tmp_path)
    record = tmp_path / "record"
    tracker = PlaybookTracker()
    run = Playbook(str(playbook), tmp_path / "hosts.yml", record, selection=Selection())
    assert run.run(tracker, threading.Event()) is False
    assert tracker.stats_seen and tracker.hosts["here"].failed == 0
    assert tracker.hosts["here"].changes == ["Change something"]
    events = [json.loads(p.read_text()) for p in (record / "artifacts" / "ansible" / "job_events").glob("*.json")]
    kinds = {e["event"] for e in events}
    assert {"playbook_on_start", "playbook_on_task_start", "runner_on_ok", "playbook_on_stats"} <= kinds
    assert "runner_on_start" not in kinds  # each result carries its own start
    assert all({"start", "end", "duration"} <= e["event_data"].keys() for e in events if e["event"] == "runner_on_ok")
    assert not list((record / "artifacts" / "ansible").glob("fact_cache*"))
    # written by racfg's handler (see Playbook._recording): named as ansible-runner names them, whole, owner-only
    files = sorted((record / "artifacts" / "ansible" / "job_events").iterdir())
    assert [p.name for p in files] == sorted(f"{e['counter']}-{e['uuid']}.json" for e in events)
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in files)
    # ansible.cfg's fork_gc reaches a run through ansible-runner (which sets its own callback path)
    [frozen] = [e["event_data"]["res"]["msg"] for e in events
                if e["event"] == "runner_on_ok" and e["event_data"]["task"] == "Count what the worker froze"]
    assert int(frozen) > 1000


def test_the_record_keeps_what_the_tracker_keeps_and_ansible_runner_writes_nothing_itself(tmp_path):
    """The handler given to ansible-runner writes each kept event as ansible-runner would (same name,
    same JSON), and always answers False, so ansible-runner's own (slower) write never runs."""
    from racfg.playbook import Playbook

    run = Playbook("site.yml", tmp_path / "hosts.yml", tmp_path / "record")
    events = tmp_path / "record" / "artifacts" / "ansible" / "job_events"
    events.mkdir(parents=True)
    handler = run._recording(PlaybookTracker().handle)
    ok = {**ev("runner_on_ok", host="dgx01", task="t", res={"changed": False, "msg": "é"}), "uuid": "u1", "counter": 7}
    start = {**ev("runner_on_start", host="dgx01", task="t"), "uuid": "u2", "counter": 6}
    assert handler(ok) is False and handler(start) is False
    assert [p.name for p in events.iterdir()] == ["7-u1.json"]
    assert json.loads((events / "7-u1.json").read_text()) == ok


def test_host_facts_come_from_the_facts_task_result(tmp_path):
    """The baseline takes each host's document from racfg_host_facts's result (no write-out task)."""
    from racfg.baseline.collect import write_host_facts

    t = PlaybookTracker()
    facts = {"host": "dgx01", "kernel": "6.1.0", "os": "Debian 12", "packages": {"chrony": "4.3"}}
    t.handle(ev("runner_on_ok", host="dgx01", task="Read the host's packages", res={"changed": False,
                                                                                   "racfg_host_facts": facts}))
    t.handle(ev("runner_on_ok", host="dgx02", task="other", res={"changed": False, "racfg_host_facts": "not a dict"}))
    assert t.host_facts == {"dgx01": facts}
    (tmp_path / "hosts").mkdir()
    write_host_facts(tmp_path, t.host_facts)
    written = tmp_path / "hosts" / "dgx01.json"
    assert json.loads(written.read_text()) == facts
    assert written.stat().st_mode & 0o777 == 0o600


def test_unchanged_switch_facts_from_the_switch_play_are_the_baseline(tmp_path):
    """A switch the play read and left unchanged is not logged into again for the baseline: its facts
    come from racfg_switch's result. Had racfg read it again, the lab.yaml switch (no lab running, a
    generated lab password) could not be reached and the baseline would name the error."""
    from racfg.baseline.collect import _add_switch_facts
    from racfg.inventory import load_cluster

    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    facts = {"name": "sw1", "platform": "onyx", "version": "3.9", "interfaces": {}, "pfc": {}, "lldp": {}}
    t = PlaybookTracker()
    t.handle(ev("runner_on_ok", host="sw1", task="switch : Configure", res={"changed": False,
                                                                           "racfg_switch_facts": facts}))
    t.handle(ev("runner_on_ok", host="sw2", task="switch : Configure", res={"changed": True,
                                                                           "racfg_switch_facts": None}))
    assert t.switch_facts == {"sw1": facts}
    assert list(cluster.switches) == ["sw1"]
    (tmp_path / "switches").mkdir()
    assert _add_switch_facts(cluster, tmp_path, NO_OVERRIDES, known=t.switch_facts) is None
    assert json.loads((tmp_path / "switches" / "sw1.json").read_text()) == facts
    # without them the switch is read, and here it cannot be: the baseline says why
    assert "switch facts could not be read" in (_add_switch_facts(cluster, tmp_path, NO_OVERRIDES) or "")


def test_a_run_that_may_change_things_cannot_stand_for_the_facts_now():
    """DeployOptions.read_facts (drift's "now") is refused outside check mode, before anything runs:
    a run that changes things read them before it did."""
    from racfg.deploy.deploy_run import DeployOptions, run_deploy
    from racfg.inventory import load_cluster

    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    with pytest.raises(ValueError, match="check mode"):
        run_deploy(cluster, DeployOptions(read_facts=True))


def test_a_cancelled_run_leaves_no_ansible_worker_behind(tmp_path, monkeypatch):
    """Cancelled while two hosts run a long task: ansible-runner kills ansible-playbook's process
    group, but Ansible's workers live in sessions of their own; racfg kills them too. Without that,
    each worker here would live on for its 60 s task (and one blocked on the dead parent, for ever).
    A killed module leaves its AnsiBallZ payload directory in its TMPDIR: here, this test's own."""
    import threading

    monkeypatch.setenv("TMPDIR", str(tmp_path))

    from racfg.playbook import Playbook, Selection

    hosts = "".join(f"    h{i}:\n      ansible_connection: local\n"
                    "      ansible_python_interpreter: \"{{ ansible_playbook_python }}\"\n" for i in (1, 2))
    (tmp_path / "hosts.yml").write_text("all:\n  hosts:\n" + hosts)
    playbook = tmp_path / "play.yml"
    playbook.write_text("- hosts: all\n  gather_facts: false\n  tasks:\n"
                        "    - name: Take a minute\n      ansible.builtin.command: sleep 60\n")
    tracker = PlaybookTracker()
    run = Playbook(str(playbook), tmp_path / "hosts.yml", tmp_path / "record", selection=Selection())
    stop = threading.Event()

    def cancel_once_both_hosts_started() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(tracker.hosts) < 2:
            time.sleep(0.1)
        stop.set()

    threading.Thread(target=cancel_once_both_hosts_started, daemon=True).start()
    marker = f"ANSIBLE_LOCAL_TEMP={tmp_path / 'record' / 'tmp'}".encode()

    def of_this_run(ansible_only: bool) -> list[int]:
        found = []
        for entry in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError):
                if (not ansible_only or b"ansible-playbook" in Path(f"/proc/{entry}/cmdline").read_bytes()) and \
                        marker in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                    found.append(int(entry))
        return found

    started = time.monotonic()
    try:
        assert run.run(tracker, stop) is True
        assert len(tracker.hosts) == 2, "the task did not start on both hosts"
        assert time.monotonic() - started < 45  # stopped, not played to the end
        assert run.stop_leftover_workers() == []  # none left to kill: run() did it
        assert of_this_run(ansible_only=True) == []
    finally:
        # The tasks' own `sleep 60` are left to end on their own by racfg (as a module on a host
        # is); this test does not leave them running.
        for pid in of_this_run(ansible_only=False):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
