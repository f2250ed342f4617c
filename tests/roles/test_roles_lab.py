"""The host roles on a real lab: site.yml converges, re-runs with changed=0, and the hosts are
really in the state the inventory asks for (read back on the hosts, not from Ansible's report).

Uses its own lab (tests/roles/rolesdev.yaml: site rolesdev, 198.18.24.0/24 + 198.19.24.0/24) so
it never collides with inventory/lab.yaml labs of other suites; torn down at the end.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import labsupport as testing
import pytest

from racfg_lab.api import connection_overrides

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
INVENTORY = Path(__file__).with_name("rolesdev.yaml")
BIN = REPO / ".venv" / "bin"
INBOX_PACKAGES = ["rdma-core", "ibverbs-utils", "infiniband-diags", "perftest"]


Run = testing.PlaybookResult


@pytest.fixture(scope="module")
def roles_lab() -> Iterator[testing.LabHandle]:
    with testing.running_lab(INVENTORY) as handle:
        yield handle


@pytest.fixture(scope="module")
def rendered(roles_lab: testing.LabHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return testing.render(INVENTORY, tmp_path_factory.mktemp("rendered"))


def site(rendered: Path, *args: str) -> Run:
    """site.yml by plain ansible-playbook; the lab's key and host keys passed as an operator passes them."""
    return testing.run_playbook(rendered, "site.yml", *args, overrides=connection_overrides("rolesdev"))


@pytest.fixture(scope="module")
def runs(rendered: Path) -> tuple[Run, Run]:
    first = site(rendered)
    second = site(rendered)
    print(f"\nsite.yml on the rolesdev lab: first converge {first.seconds:.1f} s, re-run {second.seconds:.1f} s")
    return first, second


def sh(lab: testing.LabHandle, host: str, command: str) -> str:
    return lab.ssh(host, command).stdout.strip()


def test_first_converge_has_no_failures(runs: tuple[Run, Run], roles_lab: testing.LabHandle) -> None:
    first, _ = runs
    assert first.rc == 0, first.output[-4000:]
    hosts = {h.name for h in roles_lab.hosts()}
    assert hosts <= set(first.recap), first.output[-2000:]
    assert all(r["failed"] == 0 and r["unreachable"] == 0 for r in first.recap.values()), first.recap


def test_second_run_changes_nothing(runs: tuple[Run, Run]) -> None:
    _, second = runs
    assert second.rc == 0, second.output[-4000:]
    changed = {host: r["changed"] for host, r in second.recap.items() if r["changed"]}
    assert changed == {}, re.findall(r"^changed: .*$", second.output, re.M)


# The first task of each role's apply step: on a converged host the role's probe finds nothing
# different, so the include is skipped and none of these tasks even starts. (changed=0 alone would
# not show it: an apply step that finds everything in place also changes nothing, at its cost.)
APPLY_STEPS = {
    "common": "Point chrony at the site's time sources",
    "fabric": "Write a .network file per data NIC",
    "nvme_storage": "Set each free drive's I/O scheduler",
}


@pytest.mark.parametrize("role", sorted(APPLY_STEPS))
def test_a_converged_host_runs_no_apply_step(runs: tuple[Run, Run], role: str) -> None:
    first, second = runs
    header = f"TASK [{role} : {APPLY_STEPS[role]}]"
    assert header in first.output  # the first converge does run it
    assert header not in second.output, second.output[second.output.find(header) - 3000:][:4000]

# Actions that run on the controller alone (no module run on the host, no SSH round trip).
CONTROLLER_ACTIONS = {"set_fact", "debug", "assert", "fail", "include_tasks", "include_role", "import_tasks",
                      "import_role", "meta"}
TASK_KEYWORDS = {"name", "when", "vars", "register", "tags", "check_mode", "changed_when", "failed_when", "loop",
                 "loop_control", "notify", "block", "rescue", "always", "become", "delegate_to", "run_once",
                 "no_log", "until", "retries", "delay", "environment", "ignore_errors", "listen", "args"}
# What a converged host reads, per group, on a re-run: the common role's probe reads for every role
# of the first play (fabric's files, ofed's packages and devices, the GPUs on the PCI bus, sysctl);
# the storage play reads its drives and, in the same module run, their schedulers, udev rule and record.
CONVERGED_READS = {
    "dgx": ["common : Read the host's state that this role manages"],
    "stor": ["common : Read the host's state that this role manages",
             "nvme_storage : Read the declared drives, find those Weka owns, and compare their scheduler, "
             "udev rule and record"],
}


def task_actions() -> dict[str, str]:
    """Every role task's "role : name" and its action (module), from roles/*/tasks, and each play's own
    task's name and action, from playbooks/."""
    import yaml

    def walk(tasks: list, role: str, out: dict[str, str]) -> None:
        for task in tasks or []:
            for key in ("block", "rescue", "always"):
                walk(task.get(key), role, out)
            action = next((k for k in task if k not in TASK_KEYWORDS), None)
            if "name" in task and action:
                out[f"{role} : {task['name']}"] = action.rsplit(".", 1)[-1]

    out: dict[str, str] = {}
    for path in sorted((REPO / "roles").glob("*/tasks/*.yml")):
        walk(yaml.safe_load(path.read_text()), path.parts[-3], out)
    for path in sorted((REPO / "playbooks").glob("*.yml")):  # the plays' own tasks (read.yml's verdict)
        for play in yaml.safe_load(path.read_text()):
            for key in ("pre_tasks", "tasks", "post_tasks"):
                walk(play.get(key), "", out)
    return {name.removeprefix(" : "): action for name, action in out.items()}


def host_module_runs(output: str) -> dict[str, list[str]]:
    """Per host, the tasks of a plain ansible-playbook run that ran a module on it (ok or changed)."""
    actions = task_actions()
    runs: dict[str, list[str]] = {}
    task = ""
    for line in output.splitlines():
        header = re.match(r"TASK \[(.+)\] \*", line)
        if header:
            task = header.group(1)
            continue
        done = re.match(r"(ok|changed): \[([^\]]+)\]", line)
        if done and actions.get(task, "?") not in CONTROLLER_ACTIONS:
            runs.setdefault(done.group(2), []).append(task)
    return runs


def test_a_converged_host_costs_one_read_per_play(runs: tuple[Run, Run]) -> None:
    """On the re-run each converged host makes only the reads above (one module run for the whole
    first play, where each role used to read for itself), and nothing else touches it."""
    _, second = runs
    found = host_module_runs(second.output)
    hosts = {h: reads for h, reads in found.items() if h != "sw1"}
    assert sorted(hosts) == ["dgx01", "dgx02", "stor01", "stor02"], found
    for host, reads in hosts.items():
        assert reads == CONVERGED_READS[re.sub(r"\d+$", "", host)], (host, reads)


def printed_verdicts(output: str) -> dict[str, dict]:
    """Per host, the verdict a plain ansible-playbook run of playbooks/read.yml printed."""
    found = {}
    for host, body in re.findall(r"^ok: \[([^\]]+)\] => (\{\n.*?\n\})$", output, re.M | re.S):
        msg = json.loads(body)["msg"]
        if isinstance(msg, dict) and "racfg_verdict" in msg:
            found[host] = msg["racfg_verdict"]
    return found


def test_the_read_pass_by_plain_ansible_playbook_reads_each_host_once(runs: tuple[Run, Run],
                                                                      rendered: Path) -> None:
    """playbooks/read.yml as an operator runs it (docs/deploy.md) on the converged lab: one module run
    per host, a storage server's drives in it, and each host's verdict: nothing to change, nothing
    refused, the drives read; and it changed nothing."""
    read = testing.run_playbook(rendered, "read.yml", overrides=connection_overrides("rolesdev"))
    assert read.rc == 0, read.output[-4000:]
    hosts = {h: r for h, r in read.recap.items() if h != "sw1"}
    assert all(r["changed"] == 0 and r["failed"] == 0 and r["ok"] == 2 for r in hosts.values()), read.recap
    probe = "common : Read the host's state that this role manages"
    assert host_module_runs(read.output) == {host: [probe] for host in hosts}
    verdicts = printed_verdicts(read.output)
    assert sorted(verdicts) == sorted(hosts)
    to_do = {host: [f"{role}: {line}" for role, v in roles.items() for line in v["would_change"] + v["refused"]]
             for host, roles in verdicts.items()}
    assert to_do == {host: [] for host in hosts}
    assert all("nvme_storage" in verdicts[h] for h in hosts if h.startswith("stor"))
    assert all("gpu" in verdicts[h] and "nvme_storage" not in verdicts[h] for h in hosts if h.startswith("dgx"))


def test_data_nics_have_their_mtu_and_address(runs, roles_lab: testing.LabHandle) -> None:
    for host in roles_lab.hosts():
        for nic in host.nics:
            link = json.loads(sh(roles_lab, host.name, f"ip -j addr show dev {nic.name}"))[0]
            assert link["mtu"] == 9000, f"{host.name} {nic.name}: Expected: 9000 Actual: {link['mtu']}"
            assert str(nic.address.ip) in [a["local"] for a in link["addr_info"]]


def test_configuration_is_persistent_and_mgmt_left_alone(runs, roles_lab: testing.LabHandle) -> None:
    for host in roles_lab.hosts():
        unit = sh(roles_lab, host.name, "cat /etc/systemd/network/10-racfg-data0.network")
        assert "MTUBytes=9000" in unit and f"Address={host.nics[0].address}" in unit
        links = {line.split()[1]: line.split()[4]
                 for line in sh(roles_lab, host.name, "networkctl list --no-legend").splitlines()}
        assert links["data0"] == "configured"
        assert all(state == "unmanaged" for name, state in links.items() if name != "data0"), links
        assert str(host.mgmt) in sh(roles_lab, host.name, "ip -4 -o addr show")


def test_jumbo_ping_from_every_dgx_to_every_storage_data_address(runs, roles_lab: testing.LabHandle) -> None:
    for dgx in roles_lab.hosts("dgx"):
        for stor in roles_lab.hosts("storage"):
            for nic in stor.nics:
                proc = roles_lab.ssh(dgx.name, f"ping -n -M do -s 8972 -c 1 -W 2 {nic.address.ip}", check=False)
                assert proc.returncode == 0, f"{dgx.name} -> {stor.name} {nic.address.ip}: {proc.stdout}"


def test_hostname_and_names_resolve_to_data_addresses(runs, roles_lab: testing.LabHandle) -> None:
    host = roles_lab.hosts("dgx")[0]
    assert sh(roles_lab, host.name, "hostname") == host.name
    for other in roles_lab.hosts():
        assert sh(roles_lab, host.name, f"getent ahostsv4 {other.name} | head -1").split()[0] == str(
            other.nics[0].address.ip)
        assert sh(roles_lab, host.name, f"getent hosts {other.name}-mgmt").split()[0] == str(other.mgmt)


def test_chrony_runs_against_the_site_sources(runs, roles_lab: testing.LabHandle) -> None:
    sources = roles_lab.cluster.inventory.site.time_sources
    for host in roles_lab.hosts():
        assert sh(roles_lab, host.name, "systemctl is-active chrony") == "active"
        assert sh(roles_lab, host.name, "chronyc -n sources | tail -n +3 | awk '{print $2}'").split() == sources


def test_inbox_rdma_packages_installed(runs, roles_lab: testing.LabHandle) -> None:
    for host in roles_lab.hosts():
        status = sh(roles_lab, host.name,
                    "dpkg-query -W -f='${Package} ${db:Status-Status}\\n' " + " ".join(INBOX_PACKAGES))
        assert sorted(status.splitlines()) == sorted(f"{p} installed" for p in INBOX_PACKAGES)
        assert sh(roles_lab, host.name, "command -v ib_write_bw ibv_devinfo ibstat | wc -l") == "3"


def test_sysctls_persisted_and_applied_where_the_host_allows(runs, roles_lab: testing.LabHandle) -> None:
    host = roles_lab.hosts("storage")[0]
    conf = sh(roles_lab, host.name, "cat /etc/sysctl.d/90-racfg.conf")
    wanted = dict(line.split(" = ", 1) for line in conf.splitlines() if " = " in line)
    assert wanted["net.core.rmem_max"] == "268435456"
    assert wanted["kernel.numa_balancing"] == "0"  # storage hosts run Weka
    applied, not_writable = [], []
    for key, value in wanted.items():
        path = "/proc/sys/" + key.replace(".", "/")
        have = sh(roles_lab, host.name, f"cat {path} 2>/dev/null || echo ABSENT")
        if " ".join(have.split()) == value:
            applied.append(key)
        else:
            writable = roles_lab.ssh(host.name, f"test -w {path} && touch {path}", check=False).returncode == 0
            assert not writable, f"{key}: Expected: {value} Actual: {have} (and the key is writable)"
            not_writable.append(key)
    # The lab lets a machine write its own network namespace's sysctls, so these must be live;
    # the global ones (net.core.rmem_max ...) are read-only in a container and only persisted.
    assert {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_mtu_probing"} <= set(applied), not_writable


def test_drives_checked_and_recorded(runs, roles_lab: testing.LabHandle) -> None:
    for host in roles_lab.hosts("storage"):
        record = json.loads(sh(roles_lab, host.name, "cat /var/lib/racfg/drives.json"))
        assert [d["path"] for d in record] == [d.path for d in host.drives]
        assert all(d["size_bytes"] > 0 for d in record)


def test_drives_with_a_signature_are_refused_then_wiped_only_when_allowed(runs, rendered: Path,
                                                                          roles_lab: testing.LabHandle) -> None:
    """Two drives carrying swap signatures are refused in one message naming both (one check over
    the host's drives, not one per drive), then wiped when allowed, and read back blank."""
    host = roles_lab.hosts("storage")[0]
    drives = [d.path for d in host.drives[-2:]]
    roles_lab.ssh(host.name, " && ".join(f"mkswap {d} >/dev/null" for d in drives))
    try:
        refused = site(rendered, "--tags", "nvme_storage", "--limit", host.name)
        assert refused.rc != 0 and "Refusing to wipe them" in refused.output
        assert "; ".join(f"{d}: Expected: a blank drive Actual: TYPE=swap" for d in drives) in refused.output
        for drive in drives:
            assert "swap" in sh(roles_lab, host.name, f"blkid -p -o value -s TYPE {drive} || true")
        wiped = site(rendered, "--tags", "nvme_storage", "--limit", host.name, "-e", "racfg_wipe_drives=true")
        assert wiped.rc == 0 and wiped.recap[host.name]["changed"] >= 1, wiped.output[-3000:]
        for drive in drives:
            assert roles_lab.ssh(host.name, f"blkid -p {drive}", check=False).returncode == 2
    finally:
        roles_lab.ssh(host.name, f"wipefs -a -q {' '.join(drives)}", check=False)


def test_no_gpu_is_reported_not_pretended(runs: tuple[Run, Run]) -> None:
    first, _ = runs
    assert "no GPU: no NVIDIA GPU on this host's PCI bus" in first.output
    assert "skipped: no Weka distribution given" in first.output


FAKE_WEKA = """#!/bin/sh
# a stand-in weka CLI: a formed cluster whose drive list holds {drive} of {host}
[ "$1 $2 $3" = "cluster drive -J" ] || exit 1
echo '[{{"hostname": "{host}", "device_path": "{drive}", "status": "ACTIVE"}}]'
"""


def drive_digest(lab: testing.LabHandle, host: str, drive: str) -> str:
    """Checksum of the drive's first and last MiB (where partition tables and signatures live)."""
    return sh(lab, host, f"(head -c 1048576 {drive}; tail -c 1048576 {drive}) | sha256sum")


def test_drives_weka_owns_are_never_wiped(runs, rendered: Path, roles_lab: testing.LabHandle) -> None:
    """One drive carries Weka's signature (GPT partition type 993ec906-..., cluster id at offset 8),
    the other is in the (stand-in) cluster's drive list and carries a swap signature: with
    wipe_drives true, deploy leaves both byte-for-byte alone, says so, and a re-run changes nothing."""
    import uuid

    from tests.roles import weka_signature

    host = roles_lab.hosts("storage")[1]
    listed, signed = host.drives[0].path, host.drives[1].path
    size = int(sh(roles_lab, host.name, f"blockdev --getsize64 {signed}"))
    try:
        roles_lab.ssh(host.name, weka_signature.writer_script(
            signed, weka_signature.weka_signed_chunks(size, uuid.UUID("83fc8ec1-b7e7-4288-bc6f-1b9df281ebc1"))))
        roles_lab.ssh(host.name, f"mkswap {listed} >/dev/null && cat > /usr/local/bin/weka <<'EOF'\n"
                      + FAKE_WEKA.format(host=host.name, drive=listed) + "EOF\nchmod +x /usr/local/bin/weka")
        before = {d: drive_digest(roles_lab, host.name, d) for d in (listed, signed)}
        first = site(rendered, "--tags", "nvme_storage", "--limit", host.name, "-e", "racfg_wipe_drives=true")
        assert first.rc == 0, first.output[-3000:]
        assert f"{listed}: in the Weka cluster's drive list" in first.output
        assert f"{signed}: carries a Weka partition" in first.output
        again = site(rendered, "--tags", "nvme_storage", "--limit", host.name, "-e", "racfg_wipe_drives=true")
        assert again.rc == 0 and again.recap[host.name]["changed"] == 0, again.output[-3000:]
        after = {d: drive_digest(roles_lab, host.name, d) for d in (listed, signed)}
        assert after == before
        assert sh(roles_lab, host.name, f"blkid -p -o value -s PTTYPE {signed}") == "gpt"
        record = json.loads(sh(roles_lab, host.name, "cat /var/lib/racfg/drives.json"))
        assert [d["owner"] for d in record] == ["weka", "weka"]
    finally:
        roles_lab.ssh(host.name, f"rm -f /usr/local/bin/weka; wipefs -a -q {listed} {signed}", check=False)


def test_check_mode_reports_an_install_and_a_reconfigure_it_would_run(runs, rendered: Path,
                                                                      roles_lab: testing.LabHandle) -> None:
    """deploy --check on a host missing a package and whose data NIC's MTU was changed by hand lists
    the install and the NIC reconfigure (both command tasks check mode skips) as changes, and
    changes neither; the real run that follows repairs both and passes the fabric postcondition."""
    host = roles_lab.hosts("storage")[0]
    roles_lab.ssh(host.name, "dpkg --remove --force-depends perftest >/dev/null 2>&1; ip link set data0 mtu 1500")
    try:
        proc = subprocess.run([str(BIN / "racfg"), "deploy", str(INVENTORY), "--check", "--tags", "ofed,fabric",
                               "--limit", host.name, "--format", "json"], capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        recap = {h["host"]: h for h in json.loads(proc.stdout)["hosts"]}[host.name]
        assert recap["changed"] >= 2, recap
        assert any("Report the packages a run would install" in t for t in recap["changes"]), recap["changes"]
        assert "fabric : Report the data NICs a run would reconfigure" in recap["changes"], recap["changes"]
        status = sh(roles_lab, host.name, "dpkg-query -W -f='${db:Status-Status}' perftest 2>/dev/null || true")
        assert status != "installed", "--check installed perftest"
        assert sh(roles_lab, host.name, "cat /sys/class/net/data0/mtu") == "1500", "--check reconfigured data0"
    finally:
        restored = site(rendered, "--tags", "ofed,fabric", "--limit", host.name)
        assert restored.rc == 0, restored.output[-3000:]
    assert sh(roles_lab, host.name, "cat /sys/class/net/data0/mtu") == "9000"
    assert "data0: MTU 9000" in restored.output  # the fabric postcondition read the repaired NIC


def test_recap_lists_each_skip_with_its_reason_and_a_required_gpu_fails(runs, rendered: Path,
                                                                        roles_lab: testing.LabHandle,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A role that cannot act where the inventory allows it says why: deploy's JSON carries a
    "skipped with reason" entry per role and host, the table recap prints it, and the exit code is 0.
    Where the inventory requires GPUs, the same host fails with expected/actual instead."""
    from racfg.cli.deploy_cmd import RecapFormat, report
    from racfg.deploy.deploy_run import DeployOutcome
    from racfg.errors import ExitCode
    from racfg.run_record import RunRecord

    host = roles_lab.hosts("dgx")[0].name
    proc = subprocess.run([str(BIN / "racfg"), "deploy", str(INVENTORY), "--yes", "--tags", "gpu,weka",
                           "--limit", host, "--format", "json"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    document = json.loads(proc.stdout)
    skips = {s["role"]: s["reason"] for h in document["hosts"] if h["host"] == host for s in h["skips"]}
    assert skips["gpu"].startswith("no GPU: no NVIDIA GPU on this host's PCI bus (inventory expects 8)"), skips
    assert skips["weka"].startswith("no Weka distribution given"), skips
    # The same run's recap as the table format prints it (no second deploy).
    capsys.readouterr()
    report(DeployOutcome(RunRecord(Path(document["run"]), "deploy"), document["hosts"],
                         ExitCode(document["exit_code"])), RecapFormat.table, show_diff=False)
    table = capsys.readouterr().out
    assert "Skipped with reason" in table and "no GPU: no NVIDIA GPU" in table, table
    assert "skipped with reason (the inventory allows it; listed above)" in table, table

    required = site(rendered, "--tags", "gpu", "--limit", host, "-e", "racfg_gpu_required=true")
    assert required.rc != 0 and required.recap[host]["failed"] == 1, required.output[-3000:]
    assert "Expected: 8 NVIDIA GPUs Actual: none on the PCI bus" in required.output


def test_one_drifted_item_runs_only_its_roles_tasks(runs, rendered: Path, roles_lab: testing.LabHandle) -> None:
    """The common role's one read finds each drift of the roles it reads for: a kernel parameter set
    by hand (sysctl), a data NIC's file edited (fabric), an RDMA package removed (ofed) and a data
    NIC's live MTU (fabric). racfg drift names exactly each, by its role, with the file's diff; each
    host's re-run then runs its own role's tasks alone (the other hosts only read) and repairs it."""
    dgx01, dgx02 = (h.name for h in roles_lab.hosts("dgx"))
    stor01, stor02 = (h.name for h in roles_lab.hosts("storage"))
    settled = site(rendered)  # the tests before may leave their own changes (a wiped drive's record) to repair
    assert settled.rc == 0, settled.output[-4000:]
    sh(roles_lab, dgx01, "sysctl -qw net.ipv4.tcp_mtu_probing=0")
    sh(roles_lab, dgx02, "echo '# edited by hand' >> /etc/systemd/network/10-racfg-data0.network")
    sh(roles_lab, stor01, "dpkg -r --force-depends perftest >/dev/null 2>&1")
    sh(roles_lab, stor02, "ip link set data0 mtu 1500")
    drift_names_exactly(dgx01, dgx02, stor01, stor02)
    repaired = site(rendered)
    assert repaired.rc == 0, repaired.output[-4000:]
    changed: dict[str, set[str]] = {}
    task = ""
    for line in repaired.output.splitlines():
        header = re.match(r"TASK \[(.+)\] \*", line)
        task = header.group(1) if header else task
        done = re.match(r"changed: \[([^\]]+)\]", line)
        if done:
            changed.setdefault(done.group(1), set()).add(task.split(" : ")[0])
    assert changed == {dgx01: {"common"}, dgx02: {"fabric"}, stor01: {"common"}, stor02: {"fabric"}}, changed
    # (ofed installs its packages through common's packages.yml)
    runs_on = host_module_runs(repaired.output)
    assert "common : Persist and apply the kernel parameters" in runs_on[dgx01]
    assert "fabric : Write a .network file per data NIC" in runs_on[dgx02]
    assert any(t.startswith("common : Install") for t in runs_on[stor01]), runs_on[stor01]
    assert sh(roles_lab, dgx01, "cat /proc/sys/net/ipv4/tcp_mtu_probing") == "1"
    assert "# edited by hand" not in sh(roles_lab, dgx02, "cat /etc/systemd/network/10-racfg-data0.network")
    assert sh(roles_lab, stor01, "dpkg-query -W -f='${db:Status-Status}' perftest") == "installed"
    assert sh(roles_lab, stor02, "cat /sys/class/net/data0/mtu") == "9000"
    for host in (dgx01, dgx02, stor01, stor02):
        others = [t for t in runs_on[host] if t not in CONVERGED_READS[re.sub(r"\d+$", "", host)]]
        assert {t.split(" : ")[0] for t in others} <= {"common", "fabric", "ofed"}, (host, others)


def drift_names_exactly(dgx01: str, dgx02: str, stor01: str, stor02: str) -> None:
    """racfg drift's config layer on the drifts test_one_drifted_item_runs_only_its_roles_tasks plants:
    each named by its role and item, the edited file with its diff, nothing else would change."""
    proc = subprocess.run([str(BIN / "racfg"), "drift", str(INVENTORY), "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    config = {r["check"]: r for r in json.loads(proc.stdout)["results"]
              if r["category"] == "config" and r["status"] in ("fail", "error")}
    network = "/etc/systemd/network/10-racfg-data0.network"
    assert sorted(config) == sorted([
        f"{dgx01}/config/common/kernel parameter net.ipv4.tcp_mtu_probing is 0 (wanted 1)",
        f"{dgx02}/config/fabric/file {network} content",
        f"{stor01}/config/ofed/package perftest missing",
        f"{stor02}/config/fabric/live MTU or address of data0"]), sorted(config)
    edited = config[f"{dgx02}/config/fabric/file {network} content"]
    assert "-# edited by hand" in edited["data"]["diff"] and f"+++ {network} (rendered)" in edited["data"]["diff"]
    assert edited["fix"] == f"racfg deploy {INVENTORY} --limit {dgx02} --tags fabric"
