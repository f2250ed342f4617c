"""`racfg drift` on the deployed lab: clean means "no drift"; planted faults are named in the
right layers and nothing else; after `racfg deploy` it is clean again (tests/faults/, with
validate); `--accept` makes an intended change the new baseline and keeps the old one; a deploy
holding the site makes drift refuse, another drift does not."""

from __future__ import annotations

import contextlib
import json
import os

import pytest
from sitelab import FAULTS, INVENTORY, Fault, drift_layers, env_checks, separate_groups, wait_for

from racfg.hostfacts.scontrol import parse_scontrol_nodes
from racfg.lock.local import site_lock
from racfg.render.node_check import REASON_PREFIX
from racfg_lab import api

pytestmark = pytest.mark.lab

GROUPS = separate_groups(FAULTS)


def test_clean_lab_has_no_drift(deployed_site):
    """Clean, and read once: the environment layer's facts are the ones the check-mode run read on
    its way (no facts.yml run in the record), and every host and switch is compared with them; the
    inventory is rendered once for the three layers (only the drift record holds a rendered tree)."""
    runs = deployed_site.state_dir / "runs"
    before = set(runs.iterdir())
    proc = deployed_site.racfg("drift", str(INVENTORY))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "Plan: no drift." in proc.stdout
    record = max(runs.glob("*-drift*"), key=lambda p: p.stat().st_mtime)
    assert not (record / "facts").exists(), "drift ran facts.yml although its check-mode run read every host"
    made = set(runs.iterdir()) - before
    assert len(made) >= 3, sorted(p.name for p in made)  # drift's, its check-mode deploy's, its validate's
    assert [p.name for p in sorted(made) if (p / "inventory").exists()] == [record.name]
    report = json.loads((record / "results.json").read_text())
    compared = {r["target"] for r in report["results"]
                if r["category"] == "environment" and r["status"] == "pass"}
    assert compared == {*(h.name for h in deployed_site.lab.cluster.hosts), *deployed_site.lab.cluster.switches}


@pytest.mark.parametrize("faults", GROUPS, ids=[" + ".join(f.name for f in g) for g in GROUPS])
def test_faults_on_separate_targets_are_each_named_in_their_layers_and_nothing_else(deployed_site,
                                                                                     faults: tuple[Fault, ...]):
    """A group of faults planted on the clean, deployed lab, no two on the same host or switch (see
    separate_groups): drift names each in exactly its layers, on its own targets, with what was expected
    and what is, and reports nothing on any other target. Repaired by hand (each fault's exact inverse)
    afterwards, so the next group starts from a clean lab again (which its own "nothing else" assertion
    proves)."""
    with contextlib.ExitStack() as planted:
        for fault in faults:
            fault.plant(deployed_site)
            planted.callback(fault.repair, deployed_site)
        code, report = deployed_site.drift()
    assert code == 1
    got, errored, environment = drift_layers(report), drift_layers(report, "error"), env_checks(report)
    for fault in faults:
        on = fault.targets
        mine = {pair for pair in got if pair[0] in on}
        assert mine == fault.drift, f"{fault.name}: unexpected {sorted(mine - fault.drift)}; " \
                                    f"missing {sorted(fault.drift - mine)}"
        assert {c for c in environment if c.split("/", 1)[0] in on} == fault.environment, fault.name
        assert {pair for pair in errored if pair[0] in on} == fault.errors, fault.name
    faulted = set().union(*(f.targets for f in faults))
    elsewhere = {pair for pair in got | errored if pair[0] not in faulted}
    assert not elsewhere, f"reported on a target no fault touches: {sorted(elsewhere)}"
    drifted = {r["check"]: r for r in report["results"] if r["status"] == "fail"}
    for check in environment:
        change = drifted[check]
        assert change["expected"] != change["actual"] and " -> " in change["message"], change
        assert "since" in change["message"] and change["fix"], change
    assert all(r["fix"] for r in drifted.values())
    assert all(r["actual"] == "would change" for r in drifted.values() if r["category"] == "config")


def test_accept_makes_an_intended_change_the_baseline_and_keeps_the_old_one(deployed_site):
    site = deployed_site
    site.lab.ssh("dgx01", "apt-get install -y -q nvme-cli >/dev/null")
    try:
        code, report = site.drift()
        assert drift_layers(report) == {("dgx01", "environment")} and code == 1
        added = {c.split("/environment/")[1] for c in env_checks(report)}
        assert "packages/nvme-cli" in added and all(a.startswith("packages/") for a in added)  # and its libraries
        refused = site.racfg("drift", str(INVENTORY), "--accept")
        assert refused.returncode == 2 and "--yes" in refused.stderr
        accepted = site.racfg("drift", str(INVENTORY), "--accept", "--yes")
        assert accepted.returncode == 0, accepted.stderr
        assert "package nvme-cli" in accepted.stdout and "new baseline" in accepted.stdout
        code, report = site.drift("--limit", "dgx01")  # the one host that drifted
        assert (drift_layers(report), code) == (set(), 0)
        history = site.racfg("drift", str(INVENTORY), "--history").stdout
        ids = [line.split()[0] for line in history.splitlines()[3:] if line.strip()]
        assert len(ids) >= 2 and "(current)" in history
        code, report = site.drift("--baseline", ids[1], "--limit", "dgx01")
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


def test_a_drift_run_and_a_no_change_deploy_log_in_to_each_switch_once(deployed_site):
    """The config, state and environment layers share one read of each switch (racfg.deploy.switch_read):
    the lab switch counts the logins it accepts, and each layer still judged the switch. A deploy
    that changes nothing reads each switch once too: the switch play's read is the baseline's."""
    site, switches = deployed_site.lab.site, list(deployed_site.lab.cluster.switches)
    before = {name: api.switch_logins(site, name) for name in switches}
    assert all(before.values()), f"the lab switches count no logins, not even the deploy's: {before}"
    code, report = deployed_site.drift()
    assert code == 0, [r for r in report["results"] if r["status"] in ("fail", "error")]
    assert {name: api.switch_logins(site, name) - before[name] for name in switches} == dict.fromkeys(switches, 1)
    for name in switches:
        judged = {r["category"] for r in report["results"] if r["target"] == name and r["status"] == "pass"}
        assert judged == {"config", "state", "environment"}, (name, judged)
    before = {name: api.switch_logins(site, name) for name in switches}
    proc = deployed_site.racfg("deploy", str(INVENTORY), "--yes")
    assert proc.returncode == 0 and "no changes" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert {name: api.switch_logins(site, name) - before[name] for name in switches} == dict.fromkeys(switches, 1)


def test_gate_drains_the_broken_node_with_its_problem_leaves_others_drains_and_resumes_after_the_repair(
        deployed_site):
    """Issue 55: dgx01's NIC at MTU 1500 (FAULTS' first) and dgx03 drained by hand: `--dry-run` plans
    dgx01's drain and changes nothing; gate drains dgx01 alone, with the reason naming its problem
    (read back with scontrol on the lab's slurmctld), leaves dgx03's drain as it was; after the
    fault's repair it resumes dgx01, and dgx03 is still someone else's.

    The node check runs beside gate (slurmd, every 15 s on vallab) and drains and resumes with its
    own prefix whenever it runs: what it does is not gate's, so the comparisons leave its drains out
    (a dry run that drained would show gate's ``racfg:``), and the test starts once no node carries
    one (an earlier test's fault, repaired, is resumed at the check's next run)."""
    site, fault = deployed_site, FAULTS[0]
    assert fault.targets == {"dgx01"}, fault.name
    controller = site.lab.cluster.inventory.scheduler.controller.name

    def slurm_nodes(with_checks: bool = False) -> dict[str, tuple[bool, str | None]]:
        text = site.lab.exec(controller, ["scontrol", "show", "node", "-o"]).stdout
        nodes = {n.name: (n.drained, n.reason) for n in parse_scontrol_nodes(text)}
        return nodes if with_checks else {n: (False, None) if (r or "").startswith(REASON_PREFIX) else (d, r)
                                          for n, (d, r) in nodes.items()}

    def gate(*args: str) -> tuple[int, dict]:
        proc = site.racfg("gate", str(INVENTORY), "--format", "json", *args)
        assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-2000:]
        return proc.returncode, json.loads(proc.stdout)

    wait_for("the node check to resume what earlier tests' faults drained",
             lambda: not any((r or "").startswith(REASON_PREFIX) for _, r in slurm_nodes(True).values()), 60)
    site.lab.exec(controller, ["scontrol", "update", "NodeName=dgx03", "State=DRAIN", "Reason=bad DIMM, ticket 4711"])
    try:
        with contextlib.ExitStack() as planted:
            fault.plant(site)
            planted.callback(fault.repair, site)
            before = slurm_nodes()
            code, plan = gate("--dry-run")
            actions = {n["node"]: n["action"] for n in plan["nodes"]}
            assert code == 1 and actions["dgx01"] == "drain" and actions["dgx03"] == "others", plan["nodes"]
            assert slurm_nodes() == before and not plan["done"], "--dry-run changed Slurm"
            code, run = gate()
            assert code == 1 and run["done"] == ["drain dgx01"] and not run["failed"], run
            now = slurm_nodes(True)
            (dgx01,) = [n for n in run["nodes"] if n["node"] == "dgx01"]
            assert now["dgx01"] == (True, dgx01["reason"]), now  # gate's reason, kept by the check
            assert dgx01["reason"].startswith(f"racfg: {dgx01['problems'][0]}") and "dgx01" in dgx01["problems"][0]
            assert now["dgx03"] == (True, "bad DIMM, ticket 4711")
            assert {n for n, (drained, _) in slurm_nodes().items() if drained} == {"dgx01", "dgx03"}
        code, run = gate()
        assert code == 0 and "resume dgx01" in run["done"] and not run["failed"], run
        assert all(done.startswith("resume ") for done in run["done"]), run
        after = slurm_nodes(True)
        assert after["dgx01"][0] is False and after["dgx03"] == (True, "bad DIMM, ticket 4711")
    finally:
        for node in ("dgx01", "dgx03"):  # one at a time: a node that is not drained refuses RESUME
            site.lab.exec(controller, ["scontrol", "update", f"NodeName={node}", "State=RESUME"], check=False)


def test_no_secret_in_any_file_or_argv(deployed_site):
    """Issue 51: after the session's deploy and this module's drifts, deploys and --accept (read and apply
    passes, check-mode runs, facts runs, baselines and their history): no switch password or line of
    the lab's SSH key in any file of the state directory or the lab's site directory, every record
    0600 in 0700 directories, and none in any process's argv while the first deploy ran (secretscan)."""
    deployed_site.assert_no_secret()
