"""The ofed and weka roles on a real lab (tests/roles/ofedlab.yaml: site ofedlab, one GPU server,
one storage server), run by plain ansible-playbook with the roles' settings as extra vars.

MLNX_OFED: the lab's stand-in distribution (racfg_lab.mlnxofed) is built on the controller in the
test (a MLNX_OFED_LINUX-<release>.tgz whose ``mlnxofedinstall`` installs a real ``.deb``, which puts
an ``ofed_info`` printing that release on the host). The role really reads its release on the
controller, copies it to the host, checks its sha256 there, unpacks it, runs the installer, checks
``ofed_info -s`` against the pin, does nothing on the next run, refuses a distribution of another
release naming both, refuses a tarball whose sha256 is not the inventory's naming both (nothing
unpacked, run or left on the host), fails when the installed release is not the pin, and under
--check reports the check and the install as "would ...".

Weka: the Weka CLI does not exist here; a stand-in ``weka`` on the storage host answers the reads
from canned JSON and accepts ``fs create`` without changing anything. What it proves is the
role's behaviour around the CLI: --check reports the planned command and runs no mutating one, a
read that fails is a failure (not an empty plan), a plan that does not converge fails the
postcondition, and a client whose installer download fails stops before running it or mounting.
It does not prove that real Weka accepts these commands (the planner's unit tests cover the
command lines from recorded-shape JSON). The backend install (tasks/install.yml) runs for real with a
stand-in Weka tarball whose ``install.sh`` puts a ``weka`` CLI of the pinned version on the host: a
wrong sha256 is refused before it is unpacked or run, the right one installs and passes the
version check.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path

import labsupport as testing
import pytest

from racfg_lab import mlnxofed
from racfg_lab.api import connection_overrides

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
INVENTORY = Path(__file__).with_name("ofedlab.yaml")
BIN = REPO / ".venv" / "bin"
STORAGE, DGX = "ofl-stor01", "ofl-dgx01"

PIN = "9.9-1.0.0.0"
WORKDIR = "/var/tmp/racfg-mlnx-ofed"
INSTALLER_LOG = mlnxofed.INSTALL_LOG


def fake_distribution(parent: Path, named: str, installs: str | None = None) -> Path:
    """The lab's stand-in distribution (racfg_lab.mlnxofed) as a tarball on the controller."""
    return mlnxofed.build_tarball(parent / f"MLNX_OFED_LINUX-{named}-{mlnxofed.DISTRO}-{mlnxofed.ARCH}.tgz", named,
                                  installs=installs)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mlnx(version: str, source: Path, digest: str | None = None) -> dict:
    """racfg_ofed as render writes it for a tarball on the controller (its own sha256 unless given)."""
    return {"flavor": "mlnx", "version": version, "source": str(source), "sha256": digest or sha256(source),
            "allow_http": False, "signed_by": None, "install_flags": ["--without-fw-update", "--force"]}


ROCE = {"type": "ethernet", "roce": True, "host_mtu": 9000}  # a fabric whose hosts need RDMA devices


@pytest.fixture(scope="module")
def lab() -> Iterator[testing.LabHandle]:
    with testing.running_lab(INVENTORY) as handle:
        yield handle


@pytest.fixture(scope="module")
def rendered(lab: testing.LabHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return testing.render(INVENTORY, tmp_path_factory.mktemp("rendered"))


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
    installer = f"{WORKDIR}/{dists['pinned'].name.removesuffix('.tgz')}/mlnxofedinstall"
    assert f"would run: {installer} --without-fw-update --force" in check.output
    assert (f"would put {dists['pinned']} at {WORKDIR}/{dists['pinned'].name} and check there that its sha256 is "
            f"{sha256(dists['pinned'])} before unpacking or running anything") in " ".join(check.output.split())
    assert "would run: weka fs create default default 2GiB" in check.output
    assert "would run: curl -fsS --retry 3 -o " + CLIENT_INSTALLER in check.output
    assert all(check.recap[h]["changed"] >= 2 for h in (STORAGE, DGX)), check.recap
    assert sh(lab, STORAGE, f"command -v ofed_info; ls {WORKDIR} 2>/dev/null") == ""
    calls = weka_calls(lab)
    assert calls and all(c == "version current" or c.endswith("-J") for c in calls), calls

    first = play(pinned, "--tags", "ofed")
    assert first.rc == 0, first.output[-3000:]
    assert all(first.recap[h]["changed"] >= 2 for h in (STORAGE, DGX)), first.recap  # copy + mlnxofedinstall
    assert "tarball on the controller, copied to" in " ".join(first.output.split())
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


# What an install changes on a host: the packages, the work directory's files, the installer's log.
HOST_STATE = f"md5sum /var/lib/dpkg/status; ls -A /var/tmp; find {WORKDIR} 2>&1 | sort; cat {INSTALLER_LOG}; echo end"


def test_a_tarball_whose_sha256_is_not_the_inventorys_is_refused_naming_both_and_leaves_nothing(
        rendered, dists, clean_ofed, lab, tmp_path) -> None:
    """The tarball of the pinned release, on the controller, with another sha256 in the inventory:
    each host refuses it naming the expected and the actual digest; nothing is unpacked or run,
    and the copy is gone again (storage: into its existing work directory; GPU server: into one
    the run created, which is removed with it)."""
    lab.ssh(DGX, f"rm -rf {WORKDIR}")
    wrong = hashlib.sha256(b"not the tarball").hexdigest()
    before = {host: sh(lab, host, HOST_STATE) for host in (STORAGE, DGX)}
    scenarios = with_host_vars(rendered, tmp_path, {h: {"racfg_ofed": mlnx("9.8-2.0.0.0", dists["other"], wrong)}
                                                    for h in (STORAGE, DGX)})
    run = play(scenarios, "--tags", "ofed")
    text = " ".join(run.output.split())
    assert run.rc != 0 and run.recap[STORAGE]["failed"] == 1 and run.recap[DGX]["failed"] == 1, run.recap
    assert (f"MLNX_OFED: sha256 Expected: {wrong} Actual: {sha256(dists['other'])}; refused: nothing was unpacked "
            f"or run, what this run put on the host was removed (from {dists['other']}, checked at "
            f"{WORKDIR}/{dists['other'].name})") in text, text[-3000:]
    assert "TASK [ofed : Unpack the MLNX_OFED tarball" not in run.output
    assert "TASK [ofed : Run mlnxofedinstall]" not in run.output
    assert {host: sh(lab, host, HOST_STATE) for host in (STORAGE, DGX)} == before


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


WEKA_INSTALL_SH = """#!/bin/sh
# racfg lab stand-in for Weka's installer: puts a weka CLI of this version on the host and logs that it ran
set -e
printf '#!/bin/sh\\n[ "$*" = "version current" ] && echo {version}\\n' > /usr/local/bin/weka
chmod 755 /usr/local/bin/weka
pwd >> /var/log/racfg-lab-weka-install.log
"""


def weka_tarball(parent: Path, version: str) -> Path:
    """A stand-in weka-<version>.tar on the controller: ``weka-<version>/install.sh``."""
    path = parent / f"weka-{version}.tar"
    script = WEKA_INSTALL_SH.format(version=version).encode()
    with tarfile.open(path, "w") as archive:
        info = tarfile.TarInfo(f"weka-{version}/install.sh")
        info.size, info.mode = len(script), 0o755
        archive.addfile(info, io.BytesIO(script))
    return path


def test_weka_install_checks_the_distributions_sha256_before_unpacking_or_running_it(rendered, fake_weka, lab,
                                                                                      tmp_path) -> None:
    """The role's install tasks (tasks/install.yml) on both hosts, pinned to 4.3.0 with a stand-in
    distribution copied from the controller. Storage (the stand-in CLI says 4.2.0) has another
    sha256 in its inventory: refused naming both, nothing unpacked or run, nothing left. The GPU
    server (no weka) has the right one: unpacked, install.sh run, the pinned version checked."""
    dist = weka_tarball(tmp_path, "4.3.0")
    wrong = hashlib.sha256(b"not the distribution").hexdigest()
    weka = {"version": "4.3.0", "dist": str(dist), "allow_http": False, "mount_point": "/mnt/weka",
            "filesystem": "default", "clients": "dgx"}
    scenarios = with_host_vars(rendered, tmp_path, {STORAGE: {"racfg_weka": {**weka, "sha256": wrong}},
                                                    DGX: {"racfg_weka": {**weka, "sha256": sha256(dist)}}})
    playbook = tmp_path / "weka-install.yml"  # JSON is YAML
    playbook.write_text(json.dumps([{"hosts": f"{STORAGE},{DGX}", "gather_facts": False, "tasks": [
        {"ansible.builtin.include_role": {"name": "weka", "tasks_from": "install.yml"}}]}]))
    state = ("ls -A /var/tmp /var/tmp/racfg-weka 2>&1; cat /var/log/racfg-lab-weka-install.log 2>&1; "
             "weka version current")
    before = sh(lab, STORAGE, state)
    try:
        run = testing.run_playbook(scenarios, str(playbook), overrides=connection_overrides("ofedlab"))
        print(f"\nweka install.yml: {run.seconds:.1f} s")
        text = " ".join(run.output.split())
        assert run.rc != 0 and run.recap[STORAGE]["failed"] == 1 and run.recap[DGX]["failed"] == 0, run.output[-3000:]
        assert (f"Weka: sha256 Expected: {wrong} Actual: {sha256(dist)}; refused: nothing was unpacked or run, what "
                f"this run put on the host was removed (from {dist}, checked at /var/tmp/racfg-weka/{dist.name})"
                in text)
        assert sh(lab, STORAGE, state) == before and before.endswith("4.2.0")

        assert sh(lab, DGX, "weka version current") == "4.3.0"
        assert sh(lab, DGX, "cat /var/log/racfg-lab-weka-install.log") == "/var/tmp/racfg-weka/weka-4.3.0"
        assert "TASK [weka : Check that the installed Weka is the pinned version]" in run.output
    finally:
        lab.ssh(DGX, "rm -rf /usr/local/bin/weka /var/log/racfg-lab-weka-install.log /var/tmp/racfg-weka", check=False)
