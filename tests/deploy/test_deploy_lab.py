"""`racfg deploy` on the real virtual lab, run as a user runs it (the CLI, in a subprocess).

Order matters inside this module: the first test converges a fresh lab; the later ones break
one thing at a time on the converged lab and put it back.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from labsupport import LabHandle
from secretscan import assert_clean

from racfg_lab import lab_exec, start_host, stop_host, switch_password

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
INVENTORY = REPO / "inventory" / "lab.yaml"


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("racfg-state")


def env(state_dir: Path) -> dict[str, str]:
    return {**os.environ, "RACFG_STATE_DIR": str(state_dir), "RACFG_PLAIN": "1"}


def deploy(state_dir: Path, *args: str, timeout: float = 400) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "racfg", "deploy", str(INVENTORY), "--yes", *args],
                          capture_output=True, text=True, env=env(state_dir), cwd=REPO, timeout=timeout)


def recap(result: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    document = json.loads(result.stdout)
    return {h["host"]: h for h in document["hosts"]}


def sh(lab: LabHandle, host: str, command: str) -> str:
    return lab.ssh(host, command).stdout.strip()


def test_fresh_lab_converges_then_changes_nothing(lab: LabHandle, state_dir: Path):
    first = deploy(state_dir, "--format", "json")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    hosts = recap(first)
    assert set(hosts) == {"dgx01", "dgx02", "stor01", "stor02", "sw1"}
    assert all(h["failed"] == 0 and h["unreachable"] == 0 for h in hosts.values())
    assert all(hosts[name]["changed"] > 0 for name in ("dgx01", "stor01", "sw1"))

    # Real state, read over SSH and from the switch's namespace.
    cluster = lab.cluster
    for host in cluster.hosts:
        nic = host.nics[0]
        assert sh(lab, host.name, f"cat /sys/class/net/{nic.name}/mtu") == "9000"
        assert str(nic.address) in sh(lab, host.name, f"ip -br addr show {nic.name}")
        assert sh(lab, host.name, "systemctl is-active chrony") == "active"
        assert sh(lab, host.name, "hostname") == host.name
        for package in ("rdma-core", "ibverbs-utils", "infiniband-diags", "perftest"):
            assert "install ok installed" in sh(lab, host.name, f"dpkg-query -W -f='${{Status}}' {package}")
        # 100G tuning: per-namespace sysctls really applied; all of them persisted (a container
        # cannot change the global ones such as net.core.rmem_max: the role reports those as skipped)
        assert sh(lab, host.name, "sysctl -n net.ipv4.tcp_rmem").split() == ["4096", "87380", "134217728"]
        assert sh(lab, host.name, "sysctl -n net.ipv4.tcp_mtu_probing") == "1"
        assert "net.core.rmem_max = 268435456" in sh(lab, host.name, "cat /etc/sysctl.d/90-racfg.conf")
    switch_ports = lab_exec(lab.site, "sw1", ["ip", "-j", "link"]).stdout
    mtus = {link["ifname"]: link["mtu"] for link in json.loads(switch_ports) if link["ifname"].startswith("swp")}
    assert mtus and set(mtus.values()) == {9000}

    # Jumbo frames end to end: every GPU server to every storage node's data address.
    for dgx in cluster.role("dgx"):
        for storage in cluster.role("storage"):
            ping = lab.ssh(dgx.name, f"ping -M do -c 1 -W 2 -s 8972 {storage.nics[0].address.ip}")
            assert ping.returncode == 0, ping.stdout + ping.stderr

    # The baseline of the good state was recorded: no baseline yet, so every target was validated first.
    state = json.loads(first.stdout)["baseline_state"]
    assert state["validated"] == state["recorded_targets"] == sorted(hosts) and state["refused"] == [], state
    baseline = state_dir / "baseline" / "lab"
    facts = json.loads((baseline / "hosts" / "dgx01.json").read_text())
    assert facts["nics"]["data0"]["mtu"] == 9000 and "rdma-core" in facts["packages"]
    assert facts["nics"]["data0"]["addresses"] == ["198.19.0.11/24"] and facts["nics"]["data0"]["driver"] == "veth"
    switch = json.loads((baseline / "switches" / "sw1.json").read_text())
    assert switch["version"]

    # The lab's key reached the run as an option beside the rendered inventory, and no secret
    # reached the record.
    record = Path(json.loads(first.stdout)["run"])
    command = json.loads((record / "artifacts" / "ansible" / "command").read_text())["command"]
    assert command[command.index("--private-key") + 1] == str(lab.ssh_key)
    assert str(lab.ssh_key) not in (record / "inventory" / "host_vars" / "dgx01.yml").read_text()
    password = switch_password(lab.site, "sw1").encode()
    leaks = [p for p in record.rglob("*") if p.is_file() and password in p.read_bytes()]
    assert leaks == []

    # Second run: nothing changes anywhere; meanwhile a concurrent deploy is refused.
    second = subprocess.Popen([sys.executable, "-m", "racfg", "deploy", str(INVENTORY), "--yes", "--format", "json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(state_dir), cwd=REPO)
    try:
        lock = state_dir / "locks" / "lab-deploy.lock"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (lock.exists() and str(second.pid) in lock.read_text()):
            time.sleep(0.2)
        refused = deploy(state_dir, timeout=60)
        assert refused.returncode == 3
        assert f"another deploy of site lab is running (pid {second.pid}" in refused.stderr
        out, err = second.communicate(timeout=400)
    finally:
        if second.poll() is None:
            second.kill()
    assert second.returncode == 0, out[-3000:] + err[-3000:]
    again = {h["host"]: h for h in json.loads(out)["hosts"]}
    assert {name: h["changed"] for name, h in again.items()} == dict.fromkeys(hosts, 0)

    # The baseline of each run: the first changed the hosts, so facts.yml read them at its end; the
    # second changed nothing and keeps the baseline it has: no facts play, no validate, no new baseline.
    assert (record / "facts" / "artifacts").is_dir()
    second_record = Path(json.loads(out)["run"])
    kept = json.loads(out)["baseline_state"]
    recorded = json.loads((baseline / "meta.json").read_text())["id"]
    assert json.loads(out)["baseline"] is None and not (second_record / "facts").exists()
    assert kept["note"] == f"the run changed nothing: the baseline {recorded} stands", kept
    assert kept["validated"] == [] and kept["validate_run"] is None
    # The first run read, then applied; the second only read: its reads found nothing to do
    # (racfg.deploy.passes), and every host and the switch are in its recap all the same.
    assert (record / "artifacts" / "ansible-apply" / "stdout").is_file()
    assert not (second_record / "artifacts" / "ansible-apply").exists()
    assert json.loads((baseline / "hosts" / "dgx01.json").read_text()) == facts
    # Issue 40: on the re-run (playbooks/read.yml) a converged host ran its one read (a storage host's
    # drives in the same module run) and its verdict: no shared-facts, report, check or include task.
    read = "common : Read the host's state that this role manages"
    verdict = "Say what a deploy would change, leave alone or refuse on this host"
    ran = host_tasks(second_record)
    assert set(ran) == {"dgx01", "dgx02", "stor01", "stor02"}, ran
    assert all(tasks == [read, verdict] for tasks in ran.values()), ran


def test_a_baseline_is_a_good_state(lab: LabHandle, state_dir: Path):
    """Issue 52: a --tags run records no baseline; chrony pointed at a server that does not exist is
    named by its cause (its sources are not the site's); a full deploy that changes stor01 but leaves
    it broken (its cable pulled) keeps stor01's last good baseline and names the host and the
    problem; once stor01 is good again, the next deploy that changes it records its facts, only its."""
    from racfg_lab import api

    baseline = state_dir / "baseline" / "lab"

    def current() -> tuple[str, str, str]:
        meta = json.loads((baseline / "meta.json").read_text())
        hosts = baseline / "hosts"
        return meta["id"], (hosts / "stor01.json").read_text(), (hosts / "dgx01.json").read_text()

    good = current()
    unset = "sysctl -q -w net.ipv4.tcp_mtu_probing=0"  # what deploy repairs: a change on stor01
    sh(lab, "stor01", unset)
    tagged = deploy(state_dir, "--tags", "common", "--format", "json")
    assert tagged.returncode == 0, tagged.stdout[-3000:] + tagged.stderr[-2000:]
    assert recap(tagged)["stor01"]["changed"] >= 1
    assert json.loads(tagged.stdout)["baseline"] is None and current() == good
    assert json.loads(tagged.stdout)["baseline_state"]["note"].startswith("a --limit, --tags or --skip-tags run")

    sh(lab, "stor01", "sed -i 's/^server 198.18.0.1 /server 198.18.0.254 /' /etc/chrony/chrony.conf && "
                      "systemctl restart chrony")
    checked = subprocess.run([sys.executable, "-m", "racfg", "validate", str(INVENTORY), "--limit", "stor01",
                              "--format", "json"], capture_output=True, text=True, env=env(state_dir), cwd=REPO,
                             timeout=300)
    report = json.loads(checked.stdout)
    problems = {p["id"]: p for p in report["problems"]}
    sources = problems.get("time_sources:stor01:chrony")
    assert sources is not None, [(p["id"], p["cause"]) for p in report["problems"]]
    assert sources["cause"] == ("chrony on stor01 is configured with 198.18.0.254, not the site's time sources "
                                "198.18.0.1 (site.time_sources)")
    assert sources["fix"].endswith("--limit stor01 --tags common")
    clock = next(r for r in report["results"] if r["check"] == "stor01/system/clock_synchronised")
    assert clock["status"] == "fail" and clock["cause"] == sources["id"] and clock["fix"] == sources["fix"]

    api.set_link(lab.site, "stor01", "data0", up=False)  # the cable pulled at the switch: no deploy plugs it back
    try:
        broken = deploy(state_dir, "--format", "json")
        assert broken.returncode == 0, broken.stdout[-3000:] + broken.stderr[-2000:]
        state = json.loads(broken.stdout)["baseline_state"]
        assert recap(broken)["stor01"]["changed"] >= 1  # chrony's sources repaired
        assert json.loads(broken.stdout)["baseline"] is None and state["validated"] == ["stor01"], state
        refused = {r["target"]: r["problems"] for r in state["refused"]}
        assert list(refused) == ["stor01"], state
        assert any("sw1:1/17" in p["id"] or "stor01:data0" in p["id"] for p in refused["stor01"]), refused
        assert state["kept"] == good[0] and current() == good
        assert state["note"] == f"every target the run changed fails validate: the baseline {good[0]} stands"
    finally:
        api.set_link(lab.site, "stor01", "data0", up=True)

    sh(lab, "stor01", unset)
    fixed = deploy(state_dir, "--format", "json")
    assert fixed.returncode == 0, fixed.stdout[-3000:] + fixed.stderr[-2000:]
    state = json.loads(fixed.stdout)["baseline_state"]
    assert json.loads(fixed.stdout)["baseline"] and state["recorded_targets"] == ["stor01"], state
    now = current()
    assert now[0] != good[0] and now[2] == good[2]  # a new baseline; dgx01's facts as they were


def test_check_plans_a_drift_without_changing_it_and_deploy_repairs_it(lab: LabHandle, state_dir: Path):
    lab_exec(lab.site, "dgx01", ["ip", "link", "set", "data0", "mtu", "1500"], check=True)
    try:
        plan = deploy(state_dir, "--check", "--diff", "--format", "json")
        assert plan.returncode == 0, plan.stderr[-2000:]
        hosts = recap(plan)
        assert hosts["dgx01"]["changed"] >= 1
        assert all(hosts[name]["changed"] == 0 for name in ("dgx02", "stor01", "stor02", "sw1"))
        assert sh(lab, "dgx01", "cat /sys/class/net/data0/mtu") == "1500"  # --check changed nothing
        applied = deploy(state_dir, "--limit", "dgx01", "--format", "json")  # the plan's one host
        assert applied.returncode == 0, applied.stderr[-2000:]
        assert {name: h["changed"] for name, h in recap(applied).items()} == {"dgx01": 1}
        assert sh(lab, "dgx01", "cat /sys/class/net/data0/mtu") == "9000"
    finally:
        lab_exec(lab.site, "dgx01", ["ip", "link", "set", "data0", "mtu", "9000"])


def test_unreachable_and_failing_hosts_do_not_stop_the_others(lab: LabHandle, state_dir: Path):
    # dgx02 loses its data NIC's name (the fabric role must fail there); stor02 is powered off.
    lab_exec(lab.site, "dgx02", ["sh", "-c", "ip link set data0 down && ip link set data0 name data9"], check=True)
    stop_host(lab.site, "stor02")
    try:
        result = deploy(state_dir, "--format", "json")
        assert result.returncode == 3, result.stdout[-2000:] + result.stderr[-2000:]
        hosts = recap(result)
        assert hosts["stor02"]["unreachable"] >= 1
        assert hosts["dgx02"]["failed"] >= 1
        assert any("data0" in problem and "not present" in problem for problem in hosts["dgx02"]["problems"])
        for name in ("dgx01", "stor01", "sw1"):
            assert hosts[name]["failed"] == 0 and hosts[name]["unreachable"] == 0, hosts[name]
        plain = deploy(state_dir, "--limit", "dgx02")
        assert plain.returncode == 1
        assert "dgx02: fabric" in plain.stdout and "FAILED" in plain.stdout
    finally:
        lab_exec(lab.site, "dgx02", ["sh", "-c", "ip link set data9 name data0 && ip link set data0 up"])
        start_host(lab.site, "stor02")


def task_starts(record: Path) -> list[tuple[int, str, str]]:
    """(counter, role, task) of every task start the run has recorded so far, in play order."""
    starts = []
    for path in record.glob("artifacts/ansible/job_events/*.json"):
        try:
            event = json.loads(path.read_text())
        except (OSError, ValueError):  # being written
            continue
        if event.get("event") == "playbook_on_task_start":
            data = event.get("event_data") or {}
            starts.append((int(event.get("counter", 0)), str(data.get("role") or ""), str(data.get("task") or "")))
    return sorted(starts)


def host_tasks(record: Path) -> dict[str, list[str]]:
    """Per host, the "role : task" of every task that ran or was skipped there, in the order run."""
    results = []
    for path in record.glob("artifacts/ansible/job_events/*.json"):
        event = json.loads(path.read_text())
        data = event.get("event_data") or {}
        if event.get("event") in ("runner_on_ok", "runner_on_skipped", "runner_on_failed") and "host" in data:
            task = f"{data['role']} : {data['task']}" if data.get("role") else data["task"]
            results.append((int(event.get("counter", 0)), data["host"], task))
    out: dict[str, list[str]] = {}
    for _, host, task in sorted(results):
        out.setdefault(host, []).append(task)
    return out


def recorded_events(record: Path) -> set[str]:
    return {json.loads(p.read_text()).get("event", "") for p in record.glob("artifacts/ansible/job_events/*.json")}


def test_interrupt_keeps_record_and_releases_lock(lab: LabHandle, state_dir: Path):
    """SIGINT when the common role starts (a known point, seen in the run's own events: the read
    pass's first task) stops the play there: later roles never start, no recap is played, exit 3,
    record kept, lock free."""
    runs = state_dir / "runs"
    earlier = set(runs.iterdir())
    proc = subprocess.Popen([sys.executable, "-m", "racfg", "deploy", str(INVENTORY), "--yes", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(state_dir), cwd=REPO)
    try:
        deadline = time.monotonic() + 180
        record: Path | None = None
        while time.monotonic() < deadline and proc.poll() is None:
            record = next(iter(set(runs.iterdir()) - earlier), None)
            if record is not None and any(role == "common" for _, role, _ in task_starts(record)):
                break
            time.sleep(0.1)
        assert record is not None and proc.poll() is None, "the deploy did not reach the common role"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 3, out[-2000:] + err[-2000:]
    document = json.loads(out)
    assert document["interrupted"] is True and Path(document["run"]) == record
    assert (record / "results.json").is_file() and (record / "artifacts" / "ansible" / "stdout").is_file()
    roles = {role for _, role, _ in task_starts(record)}
    assert "common" in roles and not roles & {"nvme_storage", "weka"}, roles  # stopped, not played on
    assert "playbook_on_stats" not in recorded_events(record)
    # The lock is free again: the next deploy runs (and converges whatever the interrupt left).
    again = deploy(state_dir, "--format", "json")
    assert again.returncode == 0, again.stderr[-2000:]


def test_lab_overrides_only_what_the_inventory_leaves_to_it(lab: LabHandle):
    """A running lab supplies its password for a lab: true switch; an inventory's own password_env
    is never replaced by it (unset, it is an error even though the lab knows the password)."""
    from racfg.errors import RacfgError
    from racfg.switches import resolve_password

    overrides = lab.overrides
    generated = switch_password(lab.site, "sw1")
    assert overrides.provider == "lab" and overrides.switch_passwords == {"sw1": generated}
    assert overrides.ssh_key == lab.ssh_key and overrides.known_hosts is not None
    assert resolve_password({"lab": True}, site=lab.site, name="sw1", overrides=overrides) == generated
    with pytest.raises(RacfgError, match="environment variable RACFG_UNSET_FOR_THIS_TEST is not set"):
        resolve_password({"password_env": "RACFG_UNSET_FOR_THIS_TEST"}, site=lab.site, name="sw1",
                         overrides=overrides)
    with pytest.raises(RacfgError, match="no running lab of site 'lab' supplies its password"):
        resolve_password({"lab": True}, site=lab.site, name="sw1")


def test_render_is_the_same_with_or_without_a_running_lab(lab: LabHandle, tmp_path: Path):
    outputs = {}
    for name, lab_dir in (("lab-up", None), ("no-lab", str(tmp_path / "no-lab-here"))):
        environment = env(tmp_path)
        if lab_dir is not None:
            environment["RACFG_LAB_DIR"] = lab_dir
        out = tmp_path / name
        subprocess.run([sys.executable, "-m", "racfg", "render", str(INVENTORY), "--out", str(out)], check=True,
                       capture_output=True, text=True, env=environment, cwd=REPO)
        outputs[name] = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert outputs["lab-up"] == outputs["no-lab"]
    assert not any(str(lab.ssh_key).encode() in text for text in outputs["lab-up"].values())


def test_no_secret_in_any_file(lab: LabHandle, state_dir: Path):
    """Issue 51: after this module's deploys (first, unchanged, --check --diff, limited, failing,
    interrupted: read and apply passes, facts runs, baselines): no switch password or line of the
    lab's SSH key in any file of the state directory or the lab's site directory, and every record
    0600 in 0700 directories (tests/secretscan.py)."""
    assert_clean(lab, os.environ, [state_dir])
