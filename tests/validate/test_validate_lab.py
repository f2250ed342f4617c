"""`racfg validate` on a real lab after a real deploy: clean means 0 failures and 0 errors, and
validate changes nothing; a powered-off host is an error and the others are still checked. Each
fault an operator can make named precisely, and clean again after `racfg deploy`: tests/faults/,
which plants them once for validate and drift.

The lab is tests/vallab.yaml (3 dgx + 3 storage, one Onyx switch, deployed once per session and
shared with the drift and faults suites: tests/sitelab.py), its own site and subnets. Faults are planted the
way an operator would: over SSH on the hosts, through the
switch's CLI, by moving cables (the lab's swap fault), by powering a host off.
"""

from __future__ import annotations

import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from sitelab import INVENTORY, DeployedSite, by_status

from racfg_lab import api

pytestmark = pytest.mark.lab


@pytest.fixture
def site(deployed_site: DeployedSite) -> DeployedSite:
    return deployed_site


def failing(report: dict) -> set[str]:
    return by_status(report, "fail")


def errors(report: dict) -> set[str]:
    return by_status(report, "error")


def test_clean_lab_validates_clean_and_validate_changes_nothing(site, tmp_path):
    before = site.fingerprint()
    code, report = site.validate("--output", str(tmp_path))
    assert (failing(report), errors(report)) == (set(), set())
    assert code == 0
    assert report["summary"]["pass"] > 150
    skips = [r for r in report["results"] if r["status"] == "skip"]
    assert all(r["message"] for r in skips)
    assert any(r["check"].startswith("dgx01/gpu/") for r in skips), "GPU checks must be skipped in the lab"
    assert not any(r["check"].startswith("dgx01/gpu/") and r["status"] == "pass" for r in report["results"])
    assert site.fingerprint() == before
    # every report file holds every result
    suites = ET.parse(tmp_path / "report.xml").getroot()
    cases = suites.findall(".//testcase")
    assert len(cases) == len(report["results"])
    html = (tmp_path / "report.html").read_text()
    import html5lib

    html5lib.HTMLParser(strict=True).parse(html)
    assert all(r["check"] in html for r in report["results"])
    assert {"results.json", "report.md", "report.csv"} <= {p.name for p in tmp_path.iterdir()}


def test_a_powered_off_host_is_an_error_and_the_others_are_still_checked(site):
    api.stop_host(site.lab.site, "stor03")
    try:
        code, report = site.validate()
    finally:
        api.start_host(site.lab.site, "stor03")
        site.settled()
    stor03 = [r for r in report["results"] if r["target"] == "stor03"]
    assert stor03 and {r["status"] for r in stor03} == {"error"}
    assert all("stor03" in r["message"] for r in stor03)
    others = [r for r in report["results"] if r["target"] not in ("stor03", "sw1")]
    assert {r["status"] for r in others} <= {"pass", "skip", "info"}, [r for r in others
                                                                      if r["status"] not in ("pass", "skip", "info")]
    # on the switch, only stor03's own port may notice (its link or LLDP neighbour)
    assert {r["check"] for r in report["results"] if r["target"] == "sw1" and r["status"] == "fail"} <= {
        "sw1/switches/port_oper_up[1/19]", "sw1/switches/port_lldp_neighbour[1/19]"}
    assert code == (1 if failing(report) else 3)


def test_bad_input_is_a_located_error(site, tmp_path):
    proc = site.racfg("validate", str(INVENTORY), "--limit", "nosuchhost")
    assert proc.returncode == 2 and "nosuchhost" in proc.stderr and "Traceback" not in proc.stderr
    proc = site.racfg("validate", str(tmp_path / "missing.yaml"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    code, report = site.validate("--limit", "stor01", "--category", "network")
    assert code == 0 and report["results"]
    assert {r["target"] for r in report["results"]} == {"stor01"}
    assert {r["category"] for r in report["results"]} == {"network"}


def test_validators_run_by_hand_with_pytest(site, tmp_path):
    """An operator can run the same checks with plain pytest against the rendered inventory."""
    assert site.racfg("render", str(INVENTORY), "--out", str(tmp_path / "rendered")).returncode == 0
    overrides = site.lab.overrides
    from racfg.paths import validators_dir

    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(validators_dir()), "--rendered", str(tmp_path / "rendered"),
         "--hosts", "dgx01", "--ssh-key", str(overrides.ssh_key), "--known-hosts", str(overrides.known_hosts),
         "-q", "-k", "network or system"],
        capture_output=True, text=True, env=site.env, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "dgx02" not in proc.stdout


def ssh_logins(site: DeployedSite, host: str) -> int:
    """Logins sshd on ``host`` has accepted so far, from its own log (read without SSH)."""
    out = site.lab.exec(host, ["journalctl", "-q", "--no-pager", "-o", "cat", "_COMM=sshd"]).stdout
    return sum(line.startswith("Accepted ") for line in out.splitlines())


def test_validate_and_smoke_share_one_ssh_layer(site, tmp_path):
    """validate reaches each host over one SSH connection for the whole run (counted by the hosts'
    sshd), and validate and smoke check host keys the same way (racfg.ssh.host_sessions): a known_hosts file
    whose key for a host is another host's is refused by both, naming the host."""
    import dataclasses

    from racfg.paths import validators_dir
    from racfg.smoke.measurement_error import MeasurementError
    from racfg.smoke.remote import Fleet

    hosts = [h.name for h in site.lab.hosts()]
    before = {h: ssh_logins(site, h) for h in hosts}
    assert all(before.values()), f"the hosts' sshd logs no logins: {before}"
    code, report = site.validate()
    assert code == 0, [r for r in report["results"] if r["status"] in ("fail", "error")]
    assert {h: ssh_logins(site, h) - before[h] for h in hosts} == dict.fromkeys(hosts, 1)

    overrides = site.lab.overrides
    keys = [line.split(None, 1) for line in overrides.known_hosts.read_text().splitlines() if line.strip()]
    wrong = tmp_path / "known_hosts"  # each address with the next host's key
    wrong.write_text("".join(f"{address} {key}\n" for (address, _), (_, key)
                             in zip(keys, keys[1:] + keys[:1], strict=True)))
    assert site.racfg("render", str(INVENTORY), "--out", str(tmp_path / "rendered")).returncode == 0
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(validators_dir()), "--rendered", str(tmp_path / "rendered"),
         "--hosts", "dgx01", "--ssh-key", str(overrides.ssh_key), "--known-hosts", str(wrong),
         "-q", "-k", "system", "-p", "no:cacheprovider"],
        capture_output=True, text=True, env=site.env, timeout=300, cwd=tmp_path)
    assert proc.returncode == 1 and " passed" not in proc.stdout, proc.stdout[-3000:]
    assert "dgx01: cannot reach" in proc.stdout and "does not match" in proc.stdout, proc.stdout[-3000:]
    bad = dataclasses.replace(overrides, known_hosts=wrong)
    with pytest.raises(MeasurementError, match=r"dgx01: cannot reach .*does not match"), \
            Fleet([site.lab.host("dgx01")], bad):
        pass
    with Fleet([site.lab.host("dgx01")], overrides) as fleet:  # the lab's own file: accepted
        assert fleet["dgx01"].run("hostname").stdout.strip() == "dgx01"


GPU_CHECKS = {"count", "model", "nvlink", "pcie_link", "memory_health", "clocks_at_idle", "xid", "dcgm_diag"}


def test_gpu_checks_skip_with_the_reason_on_the_lab_and_fail_where_gpus_are_required(site, monkeypatch):
    """Issue 39: the lab's dgx hosts (DGX-1, 8 GPUs declared) have no NVIDIA driver. The lab provider
    lifts racfg_gpu_required, so every GPU check skips saying why; the same hosts read as a site
    that requires its GPUs (the provider's other settings kept) fail every GPU check."""
    from dataclasses import replace

    from racfg.paths import private_files
    from racfg.results import Status
    from racfg.validate.validate_run import ValidateOptions, run_validate

    code, report = site.validate("--category", "gpu")
    gpu = [r for r in report["results"] if "/gpu/" in r["check"]]
    assert {r["check"].rsplit("/", 1)[1] for r in gpu} >= GPU_CHECKS
    assert {r["status"] for r in gpu} == {"skip"} and code == 0
    assert all("no GPU here (nvidia-smi not found)" in r["message"] for r in gpu), gpu
    monkeypatch.setenv("RACFG_STATE_DIR", str(site.state_dir))
    overrides = site.lab.overrides
    required = replace(overrides, host_vars={k: v for k, v in overrides.host_vars.items()
                                             if k != "racfg_gpu_required"})
    with private_files():  # as the racfg command writes its record (racfg.cli.app)
        report, _ = run_validate(site.lab.cluster, ValidateOptions(categories=["gpu"]), required)
    assert {r.check.rsplit("/", 1)[1] for r in report.results} >= GPU_CHECKS
    assert {r.status for r in report.results} == {Status.FAIL}
    assert all("nvidia-smi not found" in (r.actual or "") for r in report.results)


NODE_CHECK = "/usr/local/sbin/racfg-node-check"


def slurm_node(site: DeployedSite, node: str) -> tuple[str, str]:
    """(state, reason) of ``node`` as slurmctld has it, read with scontrol on the controller."""
    controller = site.lab.cluster.inventory.scheduler.controller.name
    out = site.lab.exec(controller, ["scontrol", "show", "node", node], timeout=30).stdout
    state = next(w.split("=", 1)[1] for w in out.split() if w.startswith("State="))
    reason = next((line.strip().split("=", 1)[1] for line in out.splitlines()
                   if line.strip().startswith("Reason=")), "")
    return state, reason


def test_the_node_check_drains_its_node_when_a_data_nic_goes_down_and_resumes_it_when_repaired(site):
    """Issue 55: deploy installed the node check (roles/healthcheck) and slurmd runs it every
    health_check_interval: on a clean node it exits 0; a data NIC set down drains the node within a minute,
    the reason naming validate's check id and the fix; the NIC up again resumes it (its own drain)."""
    from sitelab import wait_for

    node = "dgx02"
    mode = site.lab.ssh(node, f"stat -c %a:%U {NODE_CHECK}").stdout.strip()
    started = time.monotonic()
    clean = site.lab.ssh(node, f"{NODE_CHECK} --no-slurm --verbose", check=False)
    print(f"racfg-node-check on {node}: exit {clean.returncode} in {time.monotonic() - started:.2f} s "
          f"(over SSH); {clean.stderr.strip()}")
    assert (mode, clean.returncode, clean.stdout) == ("755:root", 0, "")
    assert "DRAIN" not in slurm_node(site, node)[0]
    try:
        site.lab.ssh(node, "ip link set data0 down")
        wait_for(f"slurmd's node check to drain {node}",
                 lambda: "racfg-check: network/carrier[data0]" in slurm_node(site, node)[1], timeout=60)
        state, reason = slurm_node(site, node)
        assert "DRAIN" in state and "ip link set data0 up" in reason
    finally:
        site.lab.ssh(node, "ip link set data0 up")
    wait_for(f"the node check to resume {node}", lambda: "DRAIN" not in slurm_node(site, node)[0], timeout=60)
    assert slurm_node(site, node)[1] == ""


def verdicts(report: dict) -> dict[str, str]:
    return {r["check"]: r["status"] for r in report["results"]}


def test_validate_reads_hosts_as_slurm_job_steps_with_the_verdicts_of_ssh(site):
    """Issue 55 point 5: ``validate --read-via slurm`` reads every host as one job step per partition
    (srun on the controller, the hosts' scripts dispatched by node name), with the same verdict on
    every check as the SSH read and nothing changed on any host; a node drained by someone else is
    read over SSH and the report says why; no job is left behind."""
    controller = site.lab.cluster.inventory.scheduler.controller.name
    hosts = sorted(h.name for h in site.lab.cluster.hosts)
    _, over_ssh = site.validate()
    before = site.fingerprint()
    code, report = site.validate("--read-via", "slurm")
    reads = report["meta"]["reads"]
    print("reads:", reads, "| over SSH:", over_ssh["meta"]["reads"])
    assert reads["via"] == "slurm" and reads["ssh"] == {}
    assert sorted(n for nodes in reads["steps"].values() for n in nodes) == hosts
    assert set(reads["steps"]) == {"gpu", "storage"}
    assert over_ssh["meta"]["reads"]["via"] == "ssh"
    assert verdicts(report) == verdicts(over_ssh) and code == 0
    assert any(note.startswith("host reads: Slurm job steps (srun)") for note in report["notes"])
    assert site.fingerprint() == before
    jobs = site.lab.exec(controller, ["squeue", "-h", "-t", "all", "-n", "racfg-read", "-o", "%T %N"], timeout=30)
    assert jobs.stdout.split() and set(jobs.stdout.split()[::2]) == {"COMPLETED"}, jobs.stdout
    try:
        site.lab.exec(controller, ["scontrol", "update", "nodename=stor03", "state=drain", "reason=ops: disk swap"],
                      timeout=30)
        code, drained = site.validate("--read-via", "slurm")
        assert drained["meta"]["reads"]["ssh"] == {"stor03": "IDLE+DRAIN in Slurm (ops: disk swap)"}
        assert verdicts(drained) == verdicts(over_ssh) and code == 0
    finally:
        site.lab.exec(controller, ["scontrol", "update", "nodename=stor03", "state=resume"], timeout=30)
    running = site.lab.exec(controller, ["squeue", "-h", "-n", "racfg-read"], timeout=30)
    assert running.stdout.strip() == ""


def test_no_secret_in_any_file_or_argv(site):
    """Issue 51: after the session's deploy and every validate so far (each record's JSON, JUnit, CSV,
    Markdown and HTML; drift's and the planted faults' runs when they ran first): no secret in any file
    of the state directory or the lab's site directory, every record 0600/0700, none in any argv
    while the deploy ran (secretscan)."""
    site.assert_no_secret()
