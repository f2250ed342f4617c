"""The ofed and weka roles on a real lab (tests/roles/ofedlab.yaml: site ofedlab, one GPU server,
one storage server), run by plain ansible-playbook with the roles' settings as extra vars.

MLNX_OFED: the lab's stand-in distribution (racfg.lab.mlnxofed) is built on the controller in the
test (a MLNX_OFED_LINUX-<release> directory whose ``mlnxofedinstall`` installs a ``.deb`` made with
dpkg-deb, which puts an ``ofed_info`` printing that release on the host). The role really reads its release on the
controller, copies it to the host, runs the installer, checks ``ofed_info -s`` against the pin,
does nothing on the next run, refuses a distribution of another release naming both, fails when
the installed release is not the pin, and under --check reports the install as "would run".

Weka: the Weka CLI does not exist here; a stand-in ``weka`` on the storage host answers the reads
from canned JSON and accepts ``fs create`` without changing anything. What it proves is the
role's behaviour around the CLI: --check reports the planned command and runs no mutating one, a
read that fails is a failure (not an empty plan), a plan that does not converge fails the
postcondition, and a client whose installer download fails stops before running it or mounting.
It does not prove that real Weka accepts these commands (the planner's unit tests cover the
command lines from recorded-shape JSON).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import labsupport as testing
import pytest

from racfg.lab import mlnxofed
from racfg.lab.api import connection_overrides

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
INVENTORY = Path(__file__).with_name("ofedlab.yaml")
BIN = REPO / ".venv" / "bin"
STORAGE, DGX = "ofl-stor01", "ofl-dgx01"

PIN = "9.9-1.0.0.0"
WORKDIR = "/var/tmp/racfg-mlnx-ofed"
INSTALLER_LOG = mlnxofed.INSTALL_LOG

def fake_distribution(parent: Path, named: str, installs: str | None = None) -> Path:
    """The lab's stand-in distribution (racfg.lab.mlnxofed) as a directory on the controller."""
    return mlnxofed.build_distribution(parent, named, installs=installs)


def mlnx(version: str, source: Path | str) -> dict:
    return {"flavor": "mlnx", "version": version, "source": str(source),
            "install_flags": ["--without-fw-update", "--force"]}


ROCE = {"type": "ethernet", "roce": True, "host_mtu": 9000}  # a fabric whose hosts need RDMA devices


@pytest.fixture(scope="module")
def lab() -> Iterator[testing.LabHandle]:
    with testing.running_lab(INVENTORY) as handle:
        yield handle


@pytest.fixture(scope="module")
def rendered(lab: testing.LabHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rendered")
    subprocess.run([str(BIN / "racfg"), "render", str(INVENTORY), "--out", str(out)], check=True,
                   capture_output=True, text=True)
    return out


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    parent = tmp_path_factory.mktemp("mlnx")
    return {"pinned": fake_distribution(parent, PIN),
            "other": fake_distribution(parent, "9.8-2.0.0.0"),
            "mislabelled": fake_distribution(parent, "9.7-1.0.0.0", installs="9.6-1.0.0.0")}


def with_host_vars(rendered: Path, tmp_path: Path, per_host: dict[str, dict]) -> Path:
    """A copy of the rendered inventory where each host gets its own scenario's variables (host
    variables win over the rendered group variables), so one run tests one scenario per host."""
    out = tmp_path / "rendered"
    shutil.copytree(rendered, out)
    for host, variables in per_host.items():
        with (out / "host_vars" / f"{host}.yml").open("a") as f:
            f.writelines(f"{key}: {json.dumps(value)}\n" for key, value in variables.items())
    return out


def play(rendered: Path, *args: str) -> testing.PlaybookResult:
    result = testing.run_playbook(rendered, "site.yml", *args, overrides=connection_overrides("ofedlab"))
    print(f"\nsite.yml {' '.join(a for a in args if not a.startswith('{'))}: {result.seconds:.1f} s")
    return result


def sh(lab: testing.LabHandle, host: str, command: str) -> str:
    return lab.ssh(host, command, check=False).stdout.strip()


def remove_mlnx_ofed(lab: testing.LabHandle) -> None:
    """The hosts as before any test: no fake MLNX_OFED, no copied distribution, no installer log."""
    for host in (STORAGE, DGX):
        lab.ssh(host, f"dpkg --purge {mlnxofed.PACKAGE} >/dev/null 2>&1; rm -rf {WORKDIR} {INSTALLER_LOG}",
                check=False)


@pytest.fixture(scope="module")
def clean_ofed(lab: testing.LabHandle) -> Iterator[None]:
    """Both hosts left without the fake MLNX_OFED afterwards."""
    yield
    remove_mlnx_ofed(lab)


# --- the stand-in weka CLI -------------------------------------------------------------------------

FAKE_WEKA = """#!/bin/sh
# stand-in weka CLI on {host}: canned reads of a formed one-backend cluster without filesystem;
# `fs create` is accepted and changes nothing; /etc/racfg-fake-weka-fail names a read that fails
echo "$*" >> /var/log/racfg-fake-weka.log
fail=$(cat /etc/racfg-fake-weka-fail 2>/dev/null)
case "$*" in
  "version current") echo 4.2.0 ;;
  "status -J") echo '{{"name": "ofedlab", "status": "OK", "io_status": "STARTED",
                      "capacity": {{"unprovisioned_bytes": 2147483648}}}}' ;;
  "cluster host -J")
    [ "$fail" = hosts ] && {{ echo "error: not logged in" >&2; exit 1; }}
    echo '[{{"host_id": "HostId<0>", "hostname": "{host}", "mode": "backend"}}]' ;;
  "cluster host net -J") echo '[{{"host_id": "HostId<0>", "name": "data0"}}]' ;;
  "cluster drive -J") echo '[{{"host_id": "HostId<0>", "device_path": "/dev/nvme0n1"}}]' ;;
  "fs group -J") echo '[{{"name": "default"}}]' ;;
  "fs -J") echo '[]' ;;
  "fs create "*) exit 0 ;;
  *) echo "stand-in weka: $* is not expected" >&2; exit 2 ;;
esac
"""
WEKA = json.dumps({"racfg_weka": {"version": "4.2.0", "dist": "/nonexistent/weka-4.2.0.tar",
                                  "mount_point": "/mnt/weka", "filesystem": "default", "clients": "dgx"}})
CLIENT_INSTALLER = "/var/tmp/racfg-weka/weka-client-install.sh"


@pytest.fixture(scope="module")
def fake_weka(lab: testing.LabHandle) -> Iterator[str]:
    lab.ssh(STORAGE, "cat > /usr/local/bin/weka <<'EOF'\n" + FAKE_WEKA.format(host=STORAGE)
            + "EOF\nchmod +x /usr/local/bin/weka")
    yield STORAGE
    lab.ssh(STORAGE, "rm -f /usr/local/bin/weka /etc/racfg-fake-weka-fail /var/log/racfg-fake-weka.log",
            check=False)
    lab.ssh(DGX, "rm -rf /var/tmp/racfg-weka /mnt/weka; sed -i '/wekafs/d' /etc/fstab", check=False)


def weka_calls(lab: testing.LabHandle) -> list[str]:
    return sh(lab, STORAGE, "cat /var/log/racfg-fake-weka.log; : > /var/log/racfg-fake-weka.log").splitlines()


def test_check_install_and_rerun(rendered, dists, clean_ofed, fake_weka, lab, tmp_path) -> None:
    """--check reports the MLNX_OFED install and the planned weka commands, and runs none of them;
    the run copies, installs and verifies MLNX_OFED; the next run changes nothing. On the re-run
    one host is on a RoCE fabric: with no RDMA device it fails saying so; the other, whose
    provider says why it has none, reports the skip with reason."""
    remove_mlnx_ofed(lab)
    pinned = with_host_vars(rendered, tmp_path, {h: {"racfg_ofed": mlnx(PIN, dists["pinned"])} for h in (STORAGE, DGX)})
    check = play(pinned, "--tags", "ofed,weka", "--check", "-e", WEKA)
    assert check.rc == 0, check.output[-3000:]
    installer = f"{WORKDIR}/{dists['pinned'].name}/mlnxofedinstall"
    assert f"would run: {installer} --without-fw-update --force" in check.output
    assert "would run: weka fs create default default 2GiB" in check.output
    assert "would run: curl -fsS --retry 3 -o " + CLIENT_INSTALLER in check.output
    assert all(check.recap[h]["changed"] >= 2 for h in (STORAGE, DGX)), check.recap
    assert sh(lab, STORAGE, f"command -v ofed_info; ls {WORKDIR} 2>/dev/null") == ""
    calls = weka_calls(lab)
    assert calls and all(c == "version current" or c.endswith("-J") for c in calls), calls

    first = play(pinned, "--tags", "ofed")
    assert first.rc == 0, first.output[-3000:]
    assert all(first.recap[h]["changed"] >= 2 for h in (STORAGE, DGX)), first.recap  # copy + mlnxofedinstall
    assert "directory on the controller, copied to" in first.output
    for host in (STORAGE, DGX):
        assert sh(lab, host, "ofed_info -s") == f"MLNX_OFED_LINUX-{PIN}:"
        assert sh(lab, host, f"cat {INSTALLER_LOG}") == "--without-fw-update --force"
    # activation only with --allow-reboot: said, not done
    assert "installed but not activated" in first.output and "openibd" not in first.output
    # devices: an Ethernet fabric without RoCE needs none, and says so
    assert "no RDMA device on this host" in first.output

    reason = "lab hosts have no RDMA NICs"
    roce = with_host_vars(pinned, tmp_path / "roce", {STORAGE: {"racfg_fabric": ROCE,
                                                                "ofed_rdma_devices_unavailable": reason},
                                                      DGX: {"racfg_fabric": ROCE}})
    again = play(roce, "--tags", "ofed")
    assert again.rc != 0, again.output[-3000:]
    assert again.recap[STORAGE] == {**again.recap[STORAGE], "changed": 0, "failed": 0}, again.recap
    assert again.recap[DGX] == {**again.recap[DGX], "changed": 0, "failed": 1}, again.recap
    assert f"MLNX_OFED {PIN} installed; matches {PIN}: nothing to do" in again.output
    assert f"skipped: RDMA devices not checked: {reason}" in again.output
    assert ("RDMA devices for the ethernet (RoCE) fabric: Expected: at least one (ibv_devices) Actual: none"
            in " ".join(again.output.split()))
    assert sh(lab, STORAGE, f"wc -l < {INSTALLER_LOG}") == "1"  # the installer ran once


def test_another_release_is_refused_before_any_change_and_a_wrong_install_fails(rendered, dists, clean_ofed, lab,
                                                                               tmp_path) -> None:
    """Storage: a distribution of another release than the pin is refused naming both, nothing
    copied or run. GPU server: a distribution whose installer leaves another release than its
    name says fails the postcondition with expected and actual."""
    before = sh(lab, STORAGE, f"ls {WORKDIR}; cat {INSTALLER_LOG}; ofed_info -s")
    scenarios = with_host_vars(rendered, tmp_path, {STORAGE: {"racfg_ofed": mlnx("9.8-1.0.0.0", dists["other"])},
                                                    DGX: {"racfg_ofed": mlnx("9.7-1.0.0.0", dists["mislabelled"])}})
    run = play(scenarios, "--tags", "ofed")
    text = " ".join(run.output.split())
    assert run.rc != 0 and run.recap[STORAGE]["failed"] == 1 and run.recap[DGX]["failed"] == 1, run.recap
    assert (f"MLNX_OFED source {dists['other']} holds release 9.8-2.0.0.0, but the inventory pins 9.8-1.0.0.0"
            in text)
    assert sh(lab, STORAGE, f"ls {WORKDIR}; cat {INSTALLER_LOG}; ofed_info -s") == before  # nothing copied or run
    assert "MLNX_OFED after the install: Expected: 9.7-1.0.0.0 Actual: 9.6-1.0.0.0" in text


def test_weka_unconverged_plan_unreadable_state_and_failed_download_fail(rendered, fake_weka, lab) -> None:
    run = play(rendered, "--tags", "weka", "-e", WEKA)
    text = " ".join(run.output.split())
    assert run.rc != 0 and run.recap[STORAGE]["failed"] == 1 and run.recap[DGX]["failed"] == 1, run.recap
    # the stand-in accepts fs create but nothing changes: the postcondition says what is left
    assert "Expected: nothing left to do Actual: weka fs create default default 2GiB" in text
    assert weka_calls(lab).count("fs create default default 2GiB") == 3  # one per round, then verified
    # the client's installer download failed (nothing listens on :14000): it stops there
    assert "TASK [weka : Run curl -fsS" in run.output
    assert "TASK [weka : Run sh " not in run.output and "TASK [weka : Run mount " not in run.output
    assert sh(lab, DGX, f"test -e {CLIENT_INSTALLER} && echo present") == ""

    lab.ssh(STORAGE, "echo hosts > /etc/racfg-fake-weka-fail")
    unreadable = play(rendered, "--tags", "weka", "--limit", STORAGE, "-e", WEKA)
    assert unreadable.rc != 0 and unreadable.recap[STORAGE]["failed"] == 1
    assert "weka cluster host -J failed (rc 1): error: not logged in" in unreadable.output
    assert not [c for c in weka_calls(lab) if not c.endswith("-J") and c != "version current"]
