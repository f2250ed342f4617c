"""`racfg drift` on the deployed lab: clean means "no drift"; planted faults are named in the
right layers and nothing else; drift changes nothing; after `racfg deploy` it is clean again;
`--accept` makes an intended change the new baseline and keeps the old one; a deploy holding
the site makes drift refuse, another drift does not."""

from __future__ import annotations

import json
import os

import pytest
from sitelab import CURRENT_LIBEVENT, FAULTS, INVENTORY, OLDER_LIBEVENT, Fault

from racfg.locking import site_lock

pytestmark = pytest.mark.lab


def layers(report: dict) -> set[tuple[str, str]]:
    return {(r["target"], r["category"]) for r in report["results"] if r["status"] == "fail"}


def env_checks(report: dict) -> set[str]:
    return {r["check"] for r in report["results"] if r["status"] == "fail" and r["category"] == "environment"}


def test_clean_lab_has_no_drift(deployed_site):
    """Clean, and read once: the environment layer's facts are the ones the check-mode run read on
    its way (no facts.yml run in the record), and every host and switch is compared with them."""
    proc = deployed_site.racfg("drift", str(INVENTORY))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "Plan: no drift." in proc.stdout
    record = max((deployed_site.state_dir / "runs").glob("*-drift*"), key=lambda p: p.stat().st_mtime)
    assert not (record / "facts").exists(), "drift ran facts.yml although its check-mode run read every host"
    report = json.loads((record / "results.json").read_text())
    compared = {r["target"] for r in report["results"]
                if r["category"] == "environment" and r["status"] == "pass"}
    assert compared == {*(h.name for h in deployed_site.lab.cluster.hosts), *deployed_site.lab.cluster.switches}


def errored(report: dict) -> set[tuple[str, str]]:
    return {(r["target"], r["category"]) for r in report["results"] if r["status"] == "error"}


def failing(report: dict) -> dict[str, dict]:
    return {r["check"]: r for r in report["results"] if r["status"] == "fail"}


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_each_fault_alone_is_named_in_its_layers_and_nothing_else(deployed_site, fault: Fault):
    """One fault planted on the clean, deployed lab: drift names it in the right layers with what was
    expected and what is, and reports nothing else. Repaired by hand (its exact inverse) afterwards, so the
    next fault starts from a clean lab again (which its own "nothing else" assertion proves)."""
    fault.plant(deployed_site)
    try:
        code, report = deployed_site.drift()
    finally:
        fault.repair(deployed_site)
    assert code == 1
    got = layers(report)
    assert got == fault.drift, f"unexpected: {sorted(got - fault.drift)}; missing: {sorted(fault.drift - got)}"
    assert env_checks(report) == fault.environment
    drifted = failing(report)
    for check in fault.environment:
        change = drifted[check]
        assert change["expected"] != change["actual"] and " -> " in change["message"], change
        assert "since" in change["message"] and change["fix"], change
    assert all(r["fix"] for r in drifted.values())
    assert all(r["actual"] == "would change" for r in drifted.values() if r["category"] == "config")
    assert errored(report) == fault.errors


def test_faults_are_named_in_their_layers_and_deploy_clears_them(deployed_site, tmp_path):
    """All faults at once: the union of what each names alone, drift changes nothing, and after the
    by-hand part of the repair `racfg deploy` makes drift clean again."""
    site = deployed_site
    site.plant_faults()

    before = site.fingerprint()
    code, report = site.drift("--output", str(tmp_path))  # the plan as a person reads it: plan.txt
    assert site.fingerprint() == before, "drift changed something"
    assert code == 1
    expected = set().union(*(f.drift for f in FAULTS))
    got = layers(report)
    assert got == expected, (sorted(got - expected), sorted(expected - got))
    assert env_checks(report) == set().union(*(f.environment for f in FAULTS))
    assert errored(report) == set().union(*(f.errors for f in FAULTS))
    by_id = {r["check"]: r for r in report["results"]}
    removed = by_id["stor01/environment/packages/ibverbs-utils"]
    assert removed["actual"] is None and "-> (removed)" in removed["message"] and "since" in removed["message"]
    downgraded = by_id["dgx03/environment/packages/libevent-2.1-7"]
    assert (downgraded["expected"], downgraded["actual"]) == (CURRENT_LIBEVENT, OLDER_LIBEVENT)
    assert downgraded["message"].startswith(
        f"dgx03: package libevent-2.1-7 {CURRENT_LIBEVENT} -> {OLDER_LIBEVENT} (downgraded) since")
    assert downgraded["fix"].endswith(f"on dgx03: apt-get install libevent-2.1-7={CURRENT_LIBEVENT}")  # not deploy
    assert by_id["dgx01/environment/nics/data0/mtu"]["message"].startswith("dgx01: NIC data0 MTU 9000 -> 1500")
    assert "sw1/state/switches/config_saved" in {r["check"] for r in report["results"] if r["status"] == "fail"}
    assert all(r["fix"] for r in report["results"] if r["status"] == "fail")
    plan = (tmp_path / "plan.txt").read_text()
    assert "~ [environment] dgx01: NIC data0 MTU 9000 -> 1500" in plan
    assert "- [environment] stor01: package ibverbs-utils 44.0-2 -> (removed)" in plan
    assert f"~ [environment] dgx03: package libevent-2.1-7 {CURRENT_LIBEVENT} -> {OLDER_LIBEVENT}" in plan
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
