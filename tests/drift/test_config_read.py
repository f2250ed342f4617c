"""drift's config layer from the roles' reads (racfg.drift.config): each difference a read found is
one result named by role and item with its file's diff; the switches are planned from the run's one
read without a login; what the reads do not compare is skipped with its reason, never passed."""

from __future__ import annotations

from pathlib import Path

import yaml

from racfg.deploy.switch_read import SwitchesRead
from racfg.drift.config import NOT_READ, _read_results, not_read, switch_plans
from racfg.errors import CannotRunError
from racfg.inventory import load_cluster
from racfg.results import Status
from racfg.switches.facts import PfcFacts, PortFacts, SwitchFacts
from racfg.switches.intent import intended_for

ROOT = Path(__file__).parents[2]
VALLAB = ROOT / "tests" / "vallab.yaml"
CHRONY_DIFF = "--- /etc/chrony/chrony.conf (on the host)\n+++ /etc/chrony/chrony.conf (rendered)\n@@ -1 +1 @@\n-x\n+y\n"
LLDP_DIFF = "--- /etc/lldpd.d/racfg.conf (on the host)\n+++ /etc/lldpd.d/racfg.conf (rendered)\n@@ -1 +1 @@\n-a\n+b\n"


def test_each_difference_is_one_result_named_by_its_role_with_its_own_files_diff():
    cluster = load_cluster(VALLAB)
    found = {"common": ["file /etc/chrony/chrony.conf content", "unit chrony not active"],
             "fabric": ["live MTU or address of data0"], "ofed": [], "nvme_storage": ["missing: /sys/block/x"]}
    diffs = [("common : Read the host's state that this role manages", CHRONY_DIFF),
             ("common : Read the host's state that this role manages", LLDP_DIFF)]
    results = {r.check: r for r in _read_results(cluster, "dgx01", found, diffs, "/run")}
    assert sorted(results) == ["dgx01/config/common/file /etc/chrony/chrony.conf content",
                               "dgx01/config/common/unit chrony not active",
                               "dgx01/config/fabric/live MTU or address of data0",
                               "dgx01/config/nvme_storage/missing: /sys/block/x"]
    chrony = results["dgx01/config/common/file /etc/chrony/chrony.conf content"]
    assert chrony.status is Status.FAIL
    assert chrony.message == "would change: common: file /etc/chrony/chrony.conf content"
    assert chrony.data["diff"] == CHRONY_DIFF  # its own file's diff, not the other one's
    assert chrony.fix == f"racfg deploy {cluster.display} --limit dgx01 --tags common"
    assert results["dgx01/config/common/unit chrony not active"].data["diff"] == ""
    assert results["dgx01/config/fabric/live MTU or address of data0"].fix.endswith("--tags fabric")


def _converged_facts(cluster, name: str) -> SwitchFacts:
    """The switch as intended: every cabled port up at its MTU, speed and description, no PFC."""
    want = intended_for(cluster, name)
    ports = {p: PortFacts(w.mtu, True, True, w.speed_gbps, w.description) for p, w in want.ports.items()}
    return SwitchFacts(name, "onyx", "3.10", ports, PfcFacts(False), {})


def test_switches_are_planned_from_the_one_read_and_only_those_in_scope():
    cluster = load_cluster(VALLAB)
    facts = _converged_facts(cluster, "sw1")
    assert switch_plans(cluster, SwitchesRead({"sw1": facts}), ["sw1"]) == []
    port = next(iter(facts.interfaces))
    facts.interfaces[port] = PortFacts(1500, True, True, facts.interfaces[port].speed_gbps,
                                       facts.interfaces[port].description)
    results = switch_plans(cluster, SwitchesRead({"sw1": facts}), ["sw1"])
    assert results and all(r.status is Status.FAIL and r.target == "sw1" for r in results)
    assert any(f"{port} mtu 1500 -> 9000" in r.message for r in results), [r.message for r in results]
    assert all(r.fix == f"racfg deploy {cluster.display} --limit sw1 --tags switch" for r in results)
    assert "-" in results[0].data["diff"] and "+" in results[0].data["diff"]
    assert switch_plans(cluster, SwitchesRead({"sw1": facts}), []) == []  # --limit a host: not planned
    unread = SwitchesRead({}, {"sw1": CannotRunError("switch sw1: cannot reach 192.0.2.2:22 over SSH")})
    [error] = switch_plans(cluster, unread, ["sw1"])
    assert error.status is Status.ERROR and "cannot reach" in error.message


def test_what_the_reads_left_to_a_run_of_the_role_is_skipped_with_its_reason():
    """The plays' verdicts say per host which roles' work the reads do not compare (not_read)."""
    cluster = load_cluster(VALLAB)
    results = not_read(cluster, {"dgx01": ["gpu", "nfs_client"], "stor01": []})
    assert [(r.target, r.check, r.status) for r in results] == [
        ("dgx01", "dgx01/config/gpu/not_read", Status.SKIP), ("dgx01", "dgx01/config/nfs_client/not_read", Status.SKIP)]
    assert results[0].message.startswith("gpu: the NVIDIA driver, nvidia-persistenced and nvidia-peermem not compared")
    assert all(f"racfg drift {cluster.display} --full-check" in r.message for r in results)
    assert not_read(cluster, {}) == []


def test_every_role_the_reads_can_leave_is_named_with_what_it_leaves():
    """The verdict of playbooks/read.yml covers, on each kind of host, exactly the roles site.yml runs
    there; the roles whose verdict (each role's <role>_verdict) can say that the read cannot tell
    (not_read) are named, each with a sentence."""
    import ast

    import jinja2

    plays = yaml.safe_load((ROOT / "playbooks" / "site.yml").read_text())
    [read] = yaml.safe_load((ROOT / "playbooks" / "read.yml").read_text())
    [verdict] = [t for t in read["tasks"] if "racfg_verdict_roles" in t.get("vars", {})]
    expression = jinja2.Environment().from_string(verdict["vars"]["racfg_verdict_roles"])
    loaded = {r["role"] for r in read["roles"]} | {t["ansible.builtin.import_role"]["name"] for t in read["tasks"]
                                                    if "ansible.builtin.import_role" in t}
    roles: set[str] = set()
    for group in ("dgx", "storage"):
        in_site = [r["role"] for play in plays if play.get("hosts") in ("cluster", group)
                   for r in play.get("roles") or []]
        assert ast.literal_eval(expression.render(group_names=[group])) == in_site, group
        roles |= set(in_site)
    assert roles == loaded  # each role's variables are in the read's play
    verdicts = {role: yaml.safe_load((ROOT / "roles" / role / "vars" / "main.yml").read_text())[f"{role}_verdict"]
                for role in roles}
    named = {role for role, v in verdicts.items()
             if (v["not_read"] is not False if isinstance(v, dict) else "'not_read': false" not in v)}
    assert named == set(NOT_READ) == {"gpu", "nfs_client", "weka", "ofed", "fabric"}
    assert all(NOT_READ.values())
