"""`racfg drift` on the deployed lab: clean means "no drift"; planted faults are named in the
right layers and nothing else; drift changes nothing; after `racfg deploy` it is clean again;
`--accept` makes an intended change the new baseline and keeps the old one; a deploy holding
the site makes drift refuse, another drift does not."""

from __future__ import annotations

import os

import pytest
from sitelab import INVENTORY

from racfg.locking import site_lock

pytestmark = pytest.mark.lab


def layers(report: dict) -> set[tuple[str, str]]:
    return {(r["target"], r["category"]) for r in report["results"] if r["status"] == "fail"}


def env_checks(report: dict) -> set[str]:
    return {r["check"] for r in report["results"] if r["status"] == "fail" and r["category"] == "environment"}


def test_clean_lab_has_no_drift(deployed_site):
    proc = deployed_site.racfg("drift", str(INVENTORY))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "Plan: no drift." in proc.stdout


def test_faults_are_named_in_their_layers_and_deploy_clears_them(deployed_site):
    site = deployed_site
    site.plant_faults()

    before = site.fingerprint()
    code, report = site.drift()
    assert site.fingerprint() == before, "drift changed something"
    assert code == 1
    expected = {
        ("dgx01", "config"), ("dgx01", "state"), ("dgx01", "environment"),  # NIC MTU
        ("sw1", "config"), ("sw1", "state"), ("sw1", "environment"),  # port MTU, PFC, unsaved change
        ("dgx02", "state"),  # jumbo through sw1 1/2
        ("dgx03", "state"), ("stor02", "state"),  # swapped cables (LLDP)
        ("stor03", "config"), ("stor03", "state"),  # sysctl
        ("stor01", "config"), ("stor01", "state"), ("stor01", "environment"),  # package removed
        ("stor02", "environment"),  # drive pulled (and state, above)
        ("dgx02", "config"),  # chrony stopped (and state, above)
    }
    got = layers(report)
    assert got - {("stor02", "config")} == expected, (sorted(got - expected), sorted(expected - got))
    env = env_checks(report)
    assert {"dgx01/environment/nics/data0/mtu", "sw1/environment/ports/1/2/mtu",
            "sw1/environment/pfc/ports/1/17", "sw1/environment/pfc/lossless_priorities",
            "sw1/environment/ports/1/30/admin_up", "stor01/environment/packages/ibverbs-utils",
            "stor02/environment/drives//dev/nvme1n1"} == env
    by_id = {r["check"]: r for r in report["results"]}
    removed = by_id["stor01/environment/packages/ibverbs-utils"]
    assert removed["actual"] is None and "-> (removed)" in removed["message"] and "since" in removed["message"]
    assert by_id["dgx01/environment/nics/data0/mtu"]["message"].startswith("dgx01: NIC data0 MTU 9000 -> 1500")
    assert "sw1/state/switches/config_saved" in {r["check"] for r in report["results"] if r["status"] == "fail"}
    assert all(r["fix"] for r in report["results"] if r["status"] == "fail")
    plan = site.racfg("drift", str(INVENTORY)).stdout
    assert "~ [environment] dgx01: NIC data0 MTU 9000 -> 1500" in plan
    assert "- [environment] stor01: package ibverbs-utils 44.0-2 -> (removed)" in plan or \
        "- [environment] stor01: package ibverbs-utils" in plan
    assert "hosts and 1 switch drifted:" in plan

    site.repair_by_hand()
    site.deploy()
    site.settled()
    code, report = site.drift()
    assert (layers(report), code) == (set(), 0)


def test_accept_makes_an_intended_change_the_baseline_and_keeps_the_old_one(deployed_site):
    site = deployed_site
    site.lab.ssh("dgx01", "apt-get install -y -q nvme-cli >/dev/null")
    try:
        code, report = site.drift()
        assert layers(report) == {("dgx01", "environment")} and code == 1
        added = {c.split("/environment/")[1] for c in env_checks(report)}
        assert "packages/nvme-cli" in added and all(a.startswith("packages/") for a in added)  # and its libraries
        refused = site.racfg("drift", str(INVENTORY), "--accept")
        assert refused.returncode == 2 and "--yes" in refused.stderr
        accepted = site.racfg("drift", str(INVENTORY), "--accept", "--yes")
        assert accepted.returncode == 0, accepted.stderr
        assert "package nvme-cli" in accepted.stdout and "new baseline" in accepted.stdout
        code, report = site.drift()
        assert (layers(report), code) == (set(), 0)
        history = site.racfg("drift", str(INVENTORY), "--history").stdout
        ids = [line.split()[0] for line in history.splitlines()[3:] if line.strip()]
        assert len(ids) >= 2 and "(current)" in history
        code, report = site.drift("--baseline", ids[1])
        assert {c.split("/environment/")[1] for c in env_checks(report)} == added
    finally:
        site.lab.ssh("dgx01", "apt-get remove -y -q nvme-cli >/dev/null", check=False)
        site.racfg("drift", str(INVENTORY), "--accept", "--yes")


def test_drift_is_a_reader_of_the_site_lock(deployed_site):
    locks = deployed_site.state_dir / "locks"
    with site_lock(locks, "vallab", "deploy", holder="deploy"):
        refused = deployed_site.racfg("drift", str(INVENTORY))
    assert refused.returncode == 3
    assert f"another deploy of site vallab is running (pid {os.getpid()}" in refused.stderr
    with site_lock(locks, "vallab", "deploy", shared=True, holder="drift"):
        proc = deployed_site.racfg("drift", str(INVENTORY), "--limit", "dgx01")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
