"""`racfg validate` on a real lab after a real deploy: clean means 0 failures and 0 errors; each
fault an operator can make is named precisely (target, check, expected, actual) with nothing
else failing; validate changes nothing; after `racfg deploy` it is clean again.

The lab is tests/vallab.yaml (3 dgx + 3 storage, one Onyx switch, deployed once per session and
shared with the drift suite: tests/sitelab.py), its own site and subnets. Faults are planted the
way an operator would: over SSH on the hosts, through the
switch's CLI, by moving cables (the lab's swap fault), by powering a host off.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from sitelab import INVENTORY, DeployedSite, by_status

from racfg.lab import api

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


def test_faults_are_each_named_precisely_and_deploy_repairs_them(site):
    site.plant_faults()

    before = site.fingerprint()
    code, report = site.validate()
    expected = {
        "dgx01/network/mtu[data0]", "dgx01/fabric/jumbo_frames[data0]", "dgx01/consistency/same_as_peers[nic_mtu]",
        "sw1/switches/port_mtu[1/2]", "dgx02/fabric/jumbo_frames[data0]",
        "sw1/switches/port_pfc_off[1/17]", "sw1/switches/no_lossless_priority",
        "dgx03/fabric/lldp_neighbour[data0]", "stor02/fabric/lldp_neighbour[data0]",
        "sw1/switches/port_lldp_neighbour[1/3]", "sw1/switches/port_lldp_neighbour[1/18]",
        "stor03/tuning/sysctl_live[net.ipv4.tcp_mtu_probing]",
        "dgx02/system/clock_synchronised",
        "stor01/packages/installed[ibverbs-utils]",
        "stor02/storage/present[/dev/nvme1n1]", "stor02/storage/size[/dev/nvme1n1]", "stor02/storage/count",
        "stor02/consistency/same_as_peers[drives]",
        "sw1/switches/config_saved",
    }
    persisted = {f"stor03/tuning/sysctl_persisted[{k}]" for k in
                 (r["check"].split("[", 1)[1][:-1] for r in report["results"]
                  if r["check"].startswith("stor03/tuning/sysctl_persisted["))}
    assert len(persisted) >= 10
    got = failing(report)
    assert got - {r for r in got if r.startswith("sw1/switches/pfc_off")} == expected | persisted, (
        f"unexpected: {sorted(got - expected - persisted)}; missing: {sorted((expected | persisted) - got)}")
    assert errors(report) == set()
    assert code == 1
    by_id = {r["check"]: r for r in report["results"]}
    mtu = by_id["dgx01/network/mtu[data0]"]
    assert (mtu["expected"], mtu["actual"], mtu["message"]) == ("9000", "1500", "Expected: 9000 Actual: 1500")
    assert mtu["fix"] == f"racfg deploy {INVENTORY} --limit dgx01 --tags fabric"
    assert by_id["sw1/switches/port_mtu[1/2]"]["actual"] == "1500"
    jumbo = by_id["dgx02/fabric/jumbo_frames[data0]"]["actual"]
    assert jumbo == "fails on all 3 paths through dgx02:data0 (sw1 port 1/2)", "a bad port is named once"
    swap = by_id["sw1/switches/port_lldp_neighbour[1/3]"]
    assert "swapped" in swap["message"] and "stor02:data0" in swap["message"] and "dgx03:data0" in swap["message"]
    assert by_id["stor01/packages/installed[ibverbs-utils]"]["actual"] == "not installed"
    assert by_id["stor03/tuning/sysctl_live[net.ipv4.tcp_mtu_probing]"]["actual"] == "0"
    assert site.fingerprint() == before, "validate changed something"

    site.repair_by_hand()
    site.deploy()
    site.settled()
    code, report = site.validate()
    assert (failing(report), errors(report), code) == (set(), set(), 0)


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
    assert {r["status"] for r in others} <= {"pass", "skip"}, [r for r in others if r["status"] not in ("pass", "skip")]
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
