"""Every fault of tests/sitelab.py planted at once on the deployed lab, read by both acceptance
commands: `racfg validate` names each precisely (target, check, expected, actual) with nothing
else failing, `racfg drift` names each in its layers, neither changes anything; after the by-hand
part of the repair one `racfg deploy` makes both clean again.

One test for both commands because planting and repairing is the expensive part (a package
downgrade, a host power cycle, a deploy with changes): each command's reading of the same planted
lab is what its own suite would check. Each fault alone is the drift suite's (tests/drift/).

The diagnosis test plants nine root causes, each alone on its own targets (three groups: how they
cannot interact is in tests/faults/diagnosis_faults.py), and asserts that validate names exactly
one problem for each, with its id and fix, and nothing on any other host or switch; each group is
repaired by hand, and the lab validates clean again."""

from __future__ import annotations

import pytest
from diagnosis_faults import GROUPS, check_diagnosis
from sitelab import (
    CURRENT_LIBEVENT,
    FAULTS,
    INVENTORY,
    OLDER_LIBEVENT,
    DeployedSite,
    by_status,
    drift_layers,
    env_checks,
)

pytestmark = pytest.mark.lab

# What validate names for FAULTS, check by check (the persisted sysctls are added from the report).
VALIDATE_FAILS = {
    "dgx01/network/mtu[data0]", "dgx01/fabric/jumbo_frames[data0]", "dgx01/consistency/same_as_peers[nic_mtu]",
    "sw1/switches/port_mtu[1/2]", "dgx02/fabric/jumbo_frames[data0]",
    "sw1/switches/port_pfc_off[1/17]", "sw1/switches/no_lossless_priority",
    "dgx03/fabric/lldp_neighbour[data0]", "stor02/fabric/lldp_neighbour[data0]",
    "sw1/switches/port_lldp_neighbour[1/3]", "sw1/switches/port_lldp_neighbour[1/18]",
    "stor03/tuning/sysctl_live[net.ipv4.tcp_mtu_probing]",
    "dgx02/system/chronyd_running",
    "stor01/packages/installed[ibverbs-utils]",
    "stor02/storage/present[/dev/nvme1n1]", "stor02/storage/size[/dev/nvme1n1]", "stor02/storage/count",
    "stor02/consistency/same_as_peers[drives]",
    "sw1/switches/config_saved",
}


def check_validate(report: dict, code: int) -> None:
    persisted = {f"stor03/tuning/sysctl_persisted[{k}]" for k in
                 (r["check"].split("[", 1)[1][:-1] for r in report["results"]
                  if r["check"].startswith("stor03/tuning/sysctl_persisted["))}
    assert len(persisted) >= 10
    got = by_status(report, "fail")
    expected = VALIDATE_FAILS | persisted
    assert got - {r for r in got if r.startswith("sw1/switches/pfc_off")} == expected, (
        f"unexpected: {sorted(got - expected)}; missing: {sorted(expected - got)}")
    assert by_status(report, "error") == {"dgx02/system/clock_synchronised"}, "chronyd stopped: cannot read the clock"
    assert code == 1
    by_id = {r["check"]: r for r in report["results"]}
    mtu = by_id["dgx01/network/mtu[data0]"]
    assert (mtu["expected"], mtu["actual"], mtu["message"]) == ("9000", "1500", "Expected: 9000 Actual: 1500")
    assert mtu["fix"] == f"racfg deploy {INVENTORY} --limit dgx01 --tags fabric"
    assert by_id["sw1/switches/port_mtu[1/2]"]["actual"] == "1500"
    jumbo = by_id["dgx02/fabric/jumbo_frames[data0]"]["actual"]
    assert jumbo == "all 3 outbound paths from dgx02:data0 fail (small ping passes, 9000-byte DF ping fails: MTU)"
    assert by_id["dgx02/fabric/jumbo_frames[data0]"]["cause"] == "port_mtu:sw1:1/2", "a bad port is named once"
    swap = by_id["sw1/switches/port_lldp_neighbour[1/3]"]
    assert "swapped" in swap["message"] and "stor02:data0" in swap["message"] and "dgx03:data0" in swap["message"]
    assert by_id["stor01/packages/installed[ibverbs-utils]"]["actual"] == "not installed"
    assert by_id["stor03/tuning/sysctl_live[net.ipv4.tcp_mtu_probing]"]["actual"] == "0"


def check_drift(report: dict, code: int, plan: str) -> None:
    assert code == 1
    expected = set().union(*(f.drift for f in FAULTS))
    got = drift_layers(report)
    assert got == expected, (sorted(got - expected), sorted(expected - got))
    assert env_checks(report) == set().union(*(f.environment for f in FAULTS))
    assert drift_layers(report, "error") == set().union(*(f.errors for f in FAULTS))
    by_id = {r["check"]: r for r in report["results"]}
    removed = by_id["stor01/environment/packages/ibverbs-utils"]
    assert removed["actual"] is None and "-> (removed)" in removed["message"] and "since" in removed["message"]
    downgraded = by_id["dgx03/environment/packages/libevent-2.1-7"]
    assert (downgraded["expected"], downgraded["actual"]) == (CURRENT_LIBEVENT, OLDER_LIBEVENT)
    assert downgraded["message"].startswith(
        f"dgx03: package libevent-2.1-7 {CURRENT_LIBEVENT} -> {OLDER_LIBEVENT} (downgraded) since")
    assert downgraded["fix"].endswith(f"on dgx03: apt-get install libevent-2.1-7={CURRENT_LIBEVENT}")  # not deploy
    assert by_id["dgx01/environment/nics/data0/mtu"]["message"].startswith("dgx01: NIC data0 MTU 9000 -> 1500")
    assert "sw1/state/switches/config_saved" in by_status(report, "fail")
    # the package ofed installs (through common's packages.yml): named by the ofed role's read, fixed by its tag
    ofed = by_id["stor01/config/ofed/package ibverbs-utils missing"]
    assert ofed["fix"] == f"racfg deploy {INVENTORY} --limit stor01 --tags ofed"
    assert all(r["fix"] for r in report["results"] if r["status"] == "fail")
    # the plan as a person reads it: plan.txt
    assert "~ [environment] dgx01: NIC data0 MTU 9000 -> 1500" in plan
    assert "- [environment] stor01: package ibverbs-utils 44.0-2 -> (removed)" in plan
    assert f"~ [environment] dgx03: package libevent-2.1-7 {CURRENT_LIBEVENT} -> {OLDER_LIBEVENT}" in plan
    assert "hosts and 1 switch drifted:" in plan


def test_validate_and_drift_name_every_fault_change_nothing_and_one_deploy_clears_them(
        deployed_site: DeployedSite, tmp_path) -> None:
    site = deployed_site
    site.plant_faults()

    before = site.fingerprint()
    code, report = site.validate()
    check_validate(report, code)
    code, report = site.drift("--output", str(tmp_path))
    check_drift(report, code, (tmp_path / "plan.txt").read_text())
    assert site.fingerprint() == before, "validate or drift changed something"

    site.repair_by_hand()
    site.deploy()
    site.settled()
    code, report = site.validate()
    assert (by_status(report, "fail"), by_status(report, "error"), code) == (set(), set(), 0)
    code, report = site.drift()
    assert (drift_layers(report), code) == (set(), 0)


def test_each_root_cause_is_one_problem_with_its_fix_and_nothing_else_fails(deployed_site: DeployedSite) -> None:
    site = deployed_site
    for group in GROUPS:
        for fault in group:
            fault.plant(site)
        try:
            code, report = site.validate()
            check_diagnosis(group, report, code)
        finally:
            for fault in group:
                fault.repair(site)
            site.settled()
    code, report = site.validate()
    assert (report["problems"], by_status(report, "fail"), by_status(report, "error"), code) == ([], set(), set(), 0)
