"""racfg smoke across the spines of a small leaf-spine site (lssmoke: 2 leaves, 2 spines, a GPU server and a
storage node on each leaf), deployed once for the module as a user deploys it.

Each leaf has two uplinks of half a host's line rate (50G ISLs beside 100G hosts, shaped at the lab's
scale), so a client reading from the other leaf fills its link only when ECMP spreads its flows over
both spines, and a leaf cut to one uplink halves what crosses it: the fault this module plants (one ISL
shut through the switch CLI, as an operator would) and smoke must name from the ISL counters.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import sitelab
import yaml
from lslab import deployed_leafspine, write_small_leafspine

from racfg.cli.providers import overrides_for
from racfg.inventory import load_cluster
from racfg.results import Report, Status
from racfg.smoke.smoke_run import SmokeOptions, run_smoke

pytestmark = [pytest.mark.lab, pytest.mark.solo]  # rates: measured with the machine to itself

SITE = "lssmoke"
ONLY_FABRIC = frozenset({"storage", "rdma", "benchmark", "nccl"})
CONVERGE_S = 90.0


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sitelab.DeployedSite]:
    directory = tmp_path_factory.mktemp(SITE)
    path = write_small_leafspine(directory, SITE, "198.18.84.0/24", "198.19.106.0/23", spine_password_env=True)
    data = yaml.safe_load(path.read_text())
    data["links"][0]["speed"] = "50G"  # two uplinks of half a host's rate: a full client link needs both spines
    data["fabric"]["max_oversubscription"] = 2.0  # 200G of host ports per leaf over 100G of uplinks, by design
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with deployed_leafspine(path, directory / "state") as deployed:
        yield deployed


@pytest.fixture
def state_dir(site: sitelab.DeployedSite, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The site's state directory, and its spines' password variable set, for smoke in this process."""
    monkeypatch.setenv("RACFG_STATE_DIR", str(site.state_dir))
    for var, value in site.password_env().items():
        monkeypatch.setenv(var, value)
    return site.state_dir


OUTPUTS: list[Path] = []  # every smoke's report directory: the secret scan reads them too


def smoke(site: sitelab.DeployedSite, out: Path, skip: frozenset[str], remeasure: int) -> dict:
    cluster = load_cluster(site.inventory)
    out.mkdir(parents=True, exist_ok=True)
    OUTPUTS.append(out)
    report: Report = run_smoke(cluster, overrides_for(cluster), SmokeOptions(skip=skip, remeasure=remeasure), out)
    return {r.check: r for r in report.results}


def paths(site: sitelab.DeployedSite, leaf: str, subnet: str) -> int:
    """How many next hops ``leaf``'s kernel (the lab switch's forwarding) has towards ``subnet``."""
    routes = json.loads(site.lab.exec(leaf, ["ip", "-j", "route", "show", subnet]).stdout or "[]")
    if not routes:
        return 0
    return len(routes[0].get("nexthops", [])) or 1


def wait_paths(site: sitelab.DeployedSite, count: int) -> None:
    """Every leaf reaches the other leaf's host subnet over ``count`` spines."""
    subnets = {h.nics[0].switch: str(ipaddress.ip_interface(h.nics[0].address).network) for h in site.lab.hosts()}
    for leaf in subnets:
        for other, subnet in subnets.items():
            if other != leaf:
                sitelab.wait_for(f"{leaf}: {subnet} over {count} spine(s)",
                                 lambda lf=leaf, s=subnet: paths(site, lf, s) == count, CONVERGE_S)


def test_a_clean_site_is_measured_across_the_spines_at_line_rate_over_both_spines(
        site: sitelab.DeployedSite, state_dir: Path, tmp_path: Path) -> None:
    wait_paths(site, 2)
    checks = smoke(site, tmp_path / "out", ONLY_FABRIC, remeasure=2)
    failing = {c: r.message for c, r in checks.items() if r.status not in (Status.PASS, Status.SKIP)}
    assert failing == {}
    leaf_of = {h.name: h.nics[0].switch for h in site.lab.hosts()}
    for dgx in (f"{SITE}-dgx1", f"{SITE}-dgx2"):
        for direction in ("read", "write"):
            r = checks[f"link/{direction}/{dgx}:data0"]
            assert r.status is Status.PASS and r.data["share_of_line"] >= 0.9, r.message
            servers = {f["server"].split(":")[0] for f in r.data["flows"]}
            assert servers and all(leaf_of[s] != leaf_of[dgx] for s in servers), servers  # across the spines
    scaling = checks["scaling/linear"]
    assert scaling.status is Status.PASS and scaling.data["series"]["clients"] == [1, 2]
    tier = checks["spine/tier"]
    assert tier.status is Status.PASS and tier.data["budget"]["limiting_leaf"] is not None
    assert tier.data["spine_tier_bps"] and tier.data["measured_bps"] >= 0.9 * tier.data["predicted_bps"]
    shares = {r.target: r for r in checks.values() if "ecmp_share" in r.check}
    assert set(shares) == {f"{SITE}-spine1", f"{SITE}-spine2"}
    assert all(r.status is Status.PASS and r.data["share"] > 0.25 for r in shares.values()), shares


def test_a_leaf_cut_to_one_uplink_is_named_as_the_bottleneck_of_each_link_and_step_from_its_isl_counters(
        site: sitelab.DeployedSite, state_dir: Path, tmp_path: Path) -> None:
    leaf1 = f"{SITE}-leaf1"
    cut = next(i for i in load_cluster(site.inventory).topology.isls if i.leaf == leaf1 and i.spine.endswith("2"))
    site.switch_cli([f"interface ethernet {cut.leaf_port}", "shutdown", "exit"], save=False, switch=leaf1)
    try:
        wait_paths(site, 1)
        checks = smoke(site, tmp_path / "out", ONLY_FABRIC, remeasure=0)
    finally:  # the port back up; BGP reconnects on its own retry timer (FRR: up to 120 s), not waited for here
        site.switch_cli([f"interface ethernet {cut.leaf_port}", "no shutdown", "exit"], save=False, switch=leaf1)
    for dgx in (f"{SITE}-dgx1", f"{SITE}-dgx2"):  # each reads and writes across leaf1's one uplink left
        for direction in ("read", "write"):
            link = checks[f"link/{direction}/{dgx}:data0"]
            assert link.status is Status.FAIL and link.data["bottleneck"]["items"]["leaf"] == leaf1, link.message
            assert f"uplinks of {leaf1}: 1 of 2" in link.message and "uplinks back" in link.fix
    scaling = checks["scaling/linear"]
    assert scaling.status is Status.FAIL and scaling.data["knee"] == 1, scaling.message
    bottleneck = scaling.data["bottleneck"]
    assert bottleneck["kind"] == "leaf-uplinks" and bottleneck["items"]["leaf"] == leaf1, scaling.message
    assert bottleneck["items"]["idle"] == [cut.leaf_port] and f"uplinks of {leaf1}: 1 of 2" in scaling.message
    tier = checks["spine/tier"]
    assert tier.status is Status.FAIL and f"uplinks of {leaf1}" in tier.message and tier.fix
    spine1 = checks[f"fabric/switches/ecmp_share[{SITE}-spine1]"]
    assert spine1.status is Status.FAIL and spine1.data["share"] > 0.9  # every cross-leaf byte on spine1


def test_no_secret_in_any_file_or_argv(site: sitelab.DeployedSite) -> None:
    """Issue 51: after this module's deploy (the spines' password from their variable) and smokes, no switch
    password, no line of the lab's SSH key in any file of the state directory, the smokes' reports or
    the lab's site directory, nor in any argv while the deploy ran (tests/secretscan.py)."""
    site.assert_no_secret(*OUTPUTS)
