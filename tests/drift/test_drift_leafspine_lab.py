"""`racfg drift` on a deployed leaf-spine site (issue 38 item 2): the fabric's state is in the
environment layer, against the baseline the deploy recorded.

The small form (tests/lslab.py: 2 leaves, 2 spines, a GPU server and a storage node per leaf, Onyx),
site ``lsdrift`` of its own, deployed once for the module and always removed:

- clean: drift exits 0, and the baseline it compares with holds every switch's BGP sessions (each
  Established) and route table (each leaf reaching the other leaf's subnet over both spines);
- an ISL shut on one spine: the environment layer names exactly the ISL (admin and oper at the spine,
  oper at the leaf), the BGP session at both ends and the paths and routes lost, on the three switches
  concerned and no other, nothing at all on any host; each change's fix is the spine's deploy;
- a BGP neighbour removed on one leaf: the config layer shows it as what deploy would restore, the
  environment layer the session at both ends and the lost paths;
- each is repaired by the fix drift names (deploy owns an ISL's admin state: it types ``no shutdown``),
  and drift is clean again;
- drift is read-only: every switch's running config is byte-identical before and after it, and the
  fault is still there.
Waits poll the switches (the product's driver reading ``show ip bgp summary`` / ``show ip route``).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Iterator

import lslab
import pytest
import sitelab

from racfg.switches import SwitchSession, read_facts

pytestmark = pytest.mark.lab

SITE, MGMT, DATA = "lsdrift", "198.18.83.0/24", "198.19.104.0/23"
LEAF1_NET, LEAF2_NET = "198.19.104.0/24", "198.19.105.0/24"
CONVERGE_S = 150.0  # a session that went down waits for BGP's connect retry before it is tried again


def sw(suffix: str) -> str:
    return f"{SITE}-{suffix}"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sitelab.DeployedSite]:
    directory = tmp_path_factory.mktemp(SITE)
    inventory = lslab.write_small_leafspine(directory, SITE, MGMT, DATA, spine_password_env=True)
    with lslab.deployed_leafspine(inventory, directory / "state") as deployed:
        sitelab.wait_for("the fabric to converge after the deploy", lambda: converged(deployed), CONVERGE_S)
        yield deployed


def facts(site: sitelab.DeployedSite) -> dict:
    return {name: read_facts(site.switch_target(name)) for name in site.lab.cluster.switches}


def converged(site: sitelab.DeployedSite) -> bool:
    """Every session Established and each leaf reaching the other leaf's subnet over both spines."""
    now = facts(site)
    sessions = all(f.bgp and f.bgp.peers and all(p.established for p in f.bgp.peers.values()) for f in now.values())
    return sessions and paths(now[sw("leaf1")], LEAF2_NET) == 2 and paths(now[sw("leaf2")], LEAF1_NET) == 2


def paths(switch_facts, prefix: str) -> int:
    """The number of paths of ``prefix`` in a switch's route table (0: no route)."""
    route = switch_facts.routes.routes.get(prefix) if switch_facts.routes else None
    return len(route.next_hops) if route else 0


def paths_now(site: sitelab.DeployedSite, switch: str, prefix: str) -> int:
    return paths(read_facts(site.switch_target(sw(switch))), prefix)


def running_configs(site: sitelab.DeployedSite) -> dict[str, str]:
    """Each switch's running config (less its ``##`` clock header), hashed."""
    out = {}
    for name in site.lab.cluster.switches:
        with SwitchSession(site.switch_target(name)) as session:
            text = "\n".join(line for line in session.show("show running-config").splitlines()
                             if not line.startswith("##"))
        out[name] = hashlib.sha256(text.encode()).hexdigest()
    return out


def isl(site: sitelab.DeployedSite, leaf: str, spine: str):
    return next(i for i in site.lab.cluster.topology.isls if i.leaf == sw(leaf) and i.spine == sw(spine))


def failing(report: dict) -> dict[str, dict]:
    return {r["check"]: r for r in report["results"] if r["status"] in ("fail", "error")}


def environment(report: dict) -> set[str]:
    return {c for c, r in failing(report).items() if r["category"] == "environment"}


def read_only_drift(site: sitelab.DeployedSite) -> tuple[int, dict]:
    """drift, with proof that it changed no switch's running config."""
    before = running_configs(site)
    code, report = site.drift()
    assert running_configs(site) == before, "drift changed a switch's running config"
    return code, report


def repair_with(site: sitelab.DeployedSite, fix: str) -> None:
    """Run the fix drift named (``racfg drift INV --accept (if intended), else racfg deploy INV ...``)."""
    command = shlex.split(fix.rsplit("else ", 1)[-1])
    assert command[:3] == ["racfg", "deploy", str(site.inventory)], fix
    site.deploy(*command[3:])


def assert_clean(site: sitelab.DeployedSite) -> None:
    sitelab.wait_for("the fabric to converge again", lambda: converged(site), CONVERGE_S)
    code, report = site.drift()
    assert code == 0, sorted(failing(report))


def test_clean_site_drifts_clean_against_a_baseline_holding_the_fabric(site):
    proc = site.racfg("drift", str(site.inventory))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "Plan: no drift." in proc.stdout
    kept = baseline_switches(site)
    for name, data in kept.items():
        assert data["bgp"]["peers"] and all(p["state"] == "Established" for p in data["bgp"]["peers"].values()), name
    assert len(kept[sw("leaf1")]["routes"]["routes"][LEAF2_NET]["next_hops"]) == 2
    assert len(kept[sw("leaf2")]["routes"]["routes"][LEAF1_NET]["next_hops"]) == 2


def baseline_switches(site: sitelab.DeployedSite) -> dict[str, dict]:
    """The switch facts of the baseline the deploy recorded."""
    directory = site.state_dir / "baseline" / SITE / "switches"
    return {p.stem: json.loads(p.read_text()) for p in directory.glob("*.json")}


def test_an_isl_shut_on_a_spine_is_named_on_exactly_the_switches_it_touches(site):
    link = isl(site, "leaf1", "spine1")
    p2p = str(link.spine_address.network)
    spine_end, leaf_end = str(link.spine_address.ip), str(link.leaf_address.ip)
    site.switch_cli([f"interface ethernet {link.spine_port}", "shutdown", "exit"], switch=sw("spine1"))
    repaired = False
    try:
        sitelab.wait_for("leaf2 to lose spine1's path to leaf1", lambda: paths_now(site, "leaf2", LEAF1_NET) == 1, 60)
        code, report = read_only_drift(site)
        assert code == 1
        assert environment(report) == {
            f"{sw('spine1')}/environment/isls/{link.spine_port}/admin_up",
            f"{sw('spine1')}/environment/isls/{link.spine_port}/oper_up",
            f"{sw('spine1')}/environment/bgp/{leaf_end}",
            f"{sw('spine1')}/environment/routes/{LEAF1_NET}",
            f"{sw('spine1')}/environment/routes/{p2p}",
            f"{sw('leaf1')}/environment/isls/{link.leaf_port}/oper_up",
            f"{sw('leaf1')}/environment/bgp/{spine_end}",
            f"{sw('leaf1')}/environment/routes/{LEAF2_NET}",
            f"{sw('leaf1')}/environment/routes/{p2p}",
            f"{sw('leaf2')}/environment/routes/{LEAF1_NET}",
        }
        found = failing(report)
        config = {r["target"] for r in found.values() if r["category"] == "config"}
        assert config == {sw("spine1")}, f"deploy owns the ISL's admin state: it would bring it up ({sorted(config)})"
        hosts = {h.name for h in site.lab.hosts()}
        assert not {r["target"] for r in found.values()} & hosts, "a fault of the fabric blamed on a host"
        session = found[f"{sw('leaf1')}/environment/bgp/{spine_end}"]
        assert session["expected"] == "Established" != session["actual"]
        assert f"{sw('spine1')} {link.spine_port} is shut" in session["message"], session["message"]
        lost = found[f"{sw('leaf2')}/environment/routes/{LEAF1_NET}"]
        assert "2 paths -> bgp, 1 path" in lost["message"] and f"from {sw('spine1')}; {sw('spine1')} lost it" \
            in lost["message"], lost["message"]
        spine_fix = f"--limit {sw('spine1')} --tags switch"
        assert all(spine_fix in found[c]["fix"] for c in environment(report)), "each change's fix is the spine's"
        assert read_facts(site.switch_target(sw("spine1"))).interfaces[link.spine_port].admin_up is False
        repair_with(site, lost["fix"])
        repaired = True
    finally:
        if not repaired:  # by hand, so the next test starts from a clean fabric
            site.switch_cli([f"interface ethernet {link.spine_port}", "no shutdown", "exit"], switch=sw("spine1"))
    assert_clean(site)


def test_a_bgp_neighbour_removed_on_a_leaf_shows_in_config_and_environment(site):
    link = isl(site, "leaf1", "spine1")
    spine_end, leaf_end = str(link.spine_address.ip), str(link.leaf_address.ip)
    asn = site.lab.cluster.topology.asns[sw("leaf1")]
    bgp = f"router bgp {asn} vrf default"
    site.switch_cli([f"{bgp} no neighbor {spine_end}"], switch=sw("leaf1"))
    repaired = False
    try:
        sitelab.wait_for("spine1 to lose leaf1's subnet", lambda: paths_now(site, "spine1", LEAF1_NET) == 0, 60)
        code, report = read_only_drift(site)
        assert code == 1
        found = failing(report)
        config = {c: r for c, r in found.items() if r["category"] == "config"}
        assert {r["target"] for r in config.values()} == {sw("leaf1")}, sorted(config)
        assert any(f"neighbor {spine_end} remote-as" in r["data"].get("diff", "") for r in config.values()), \
            [r["data"].get("diff") for r in config.values()]
        assert environment(report) == {
            f"{sw('leaf1')}/environment/bgp/{spine_end}",
            f"{sw('leaf1')}/environment/routes/{LEAF2_NET}",
            f"{sw('spine1')}/environment/bgp/{leaf_end}",
            f"{sw('spine1')}/environment/routes/{LEAF1_NET}",
            f"{sw('leaf2')}/environment/routes/{LEAF1_NET}",
        }
        assert not {r["target"] for r in found.values()} & {h.name for h in site.lab.hosts()}
        removed = found[f"{sw('leaf1')}/environment/bgp/{spine_end}"]
        assert removed["data"]["sign"] == "-" and "no longer configured here" in removed["message"]
        assert spine_end not in read_facts(site.switch_target(sw("leaf1"))).bgp.peers, "drift restored the neighbour"
        other_end = found[f"{sw('spine1')}/environment/bgp/{leaf_end}"]
        assert f"{sw('leaf1')} has no neighbour {spine_end}" in other_end["message"]
        repair_with(site, other_end["fix"])
        repaired = True
    finally:
        if not repaired:
            remote = site.lab.cluster.topology.asns[sw("spine1")]
            site.switch_cli([f"{bgp} neighbor {spine_end} remote-as {remote}"], switch=sw("leaf1"))
    assert_clean(site)


def test_no_secret_in_any_file_or_argv(site: sitelab.DeployedSite) -> None:
    """Issue 51: after this module's deploys and drifts (check-mode read passes, facts, baselines), with
    the spines' password taken from their variable: no secret in any file of the state directory or the
    lab's site directory, every record 0600/0700, none in any argv while the deploy ran (secretscan)."""
    site.assert_no_secret()
