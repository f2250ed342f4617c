"""Findings onto nodes: on the host, behind a switch port (the host cabled there), on a whole
switch (every host cabled to it), on a port nobody uses (no node); a failed read makes a node
unknown, never broken. Cabling from inventory/lab.yaml: dgx01 sw1 1/1, dgx02 1/2, stor01 1/17,
stor02 1/18."""

from __future__ import annotations

from pathlib import Path

import pytest

from racfg.inventory import load_cluster
from racfg.results import Report, Result, Status
from racfg.scheduler.node_health import cabling, ports_named, site_health

LAB = Path(__file__).parents[2] / "inventory" / "lab.yaml"
ALL = {"dgx01", "dgx02", "stor01", "stor02"}


@pytest.fixture(scope="module")
def cluster():
    return load_cluster(LAB)


def health(cluster, *results: Result):
    return site_health(cluster, Report("drift", "lab", list(results)))


def fail(target: str, check: str, **data) -> Result:
    return Result(target, check, "state", Status.FAIL, "wrong", fix=f"fix {check}", data=data)


def broken(site) -> set[str]:
    return {n for n, h in site.nodes.items() if h.broken}


def unknown(site) -> set[str]:
    return {n for n, h in site.nodes.items() if h.unknown}


def test_the_labs_cabling(cluster):
    assert cabling(cluster) == {"sw1": {"1/1": ["dgx01"], "1/2": ["dgx02"], "1/17": ["stor01"], "1/18": ["stor02"]}}


def test_a_host_finding_lands_on_the_host_with_validates_problem_id_and_fix(cluster):
    site = health(cluster, fail("dgx01", "dgx01/config/sysctl"),
                  fail("dgx01", "dgx01/state/mtu[data0]",
                       problem={"id": "host_mtu:dgx01:data0", "fix": "racfg deploy lab.yaml --limit dgx01"}))
    assert broken(site) == {"dgx01"}
    problems = site.nodes["dgx01"].problems
    assert list(problems) == ["host_mtu:dgx01:data0", "dgx01/config/sysctl"]  # the diagnosed cause first
    assert problems["host_mtu:dgx01:data0"].fix == "racfg deploy lab.yaml --limit dgx01"


@pytest.mark.parametrize(("check", "problem", "hosts"), [
    ("sw1/state/port_mtu[1/2]", None, {"dgx02"}),
    ("sw1/environment/ports/1/17/mtu", None, {"stor01"}),
    ("sw1/state/port_admin_up[1/18]", "port_admin:sw1:1/18", {"stor02"}),
    ("sw1/state/config_saved", "port_admin:sw1:1/1", {"dgx01"}),  # the problem id names the port
    ("sw1/environment/os_version", None, ALL),  # the whole switch: every host cabled to it
    ("sw1/state/port_admin_up[1/30]", None, set()),  # a port no host (and no ISL) uses
])
def test_a_switch_finding_lands_on_the_hosts_behind_its_port_or_the_whole_switch(cluster, check, problem, hosts):
    data = {"problem": {"id": problem, "fix": "f"}} if problem else {}
    site = health(cluster, fail("sw1", check, **data))
    assert broken(site) == hosts
    assert bool(site.elsewhere) == (not hosts)


def test_a_port_inside_a_longer_port_is_not_named():
    assert ports_named("sw1/state/port_mtu[1/20]", ["1/2", "1/20"]) == ["1/20"]
    assert ports_named("sw1/environment/ports/1/2/mtu", ["1/2", "1/20"]) == ["1/2"]


def test_a_failed_read_makes_a_node_unknown_never_broken(cluster):
    site = health(cluster, Result("dgx02", "dgx02/config/plan", "config", Status.ERROR, "unreachable"))
    assert unknown(site) == {"dgx02"} and not broken(site)
    switch = health(cluster, Result("sw1", "sw1/switches/reach", "state", Status.ERROR, "no password"))
    assert unknown(switch) == ALL and not broken(switch)
    whole = health(cluster, Result("cluster", "cluster/config/ansible", "config", Status.ERROR, "could not run"))
    assert unknown(whole) == ALL


def test_skips_passes_and_readings_are_not_problems(cluster):
    site = health(cluster, Result("dgx01", "a", "state", Status.PASS, ""),
                  Result("dgx01", "b", "state", Status.SKIP, "why"), Result("dgx01", "c", "state", Status.INFO, "n"))
    assert not broken(site) and not unknown(site)


def test_a_symptom_lands_where_its_cause_is_not_on_the_host_that_saw_it(cluster):
    """dgx02's jumbo path to dgx01 fails because dgx01's NIC is at MTU 1500: dgx01's problem; a
    host's path through sw1 1/17 shut: the host cabled to 1/17."""
    to_dgx01 = {"id": "host_mtu:dgx01:data0", "fix": "racfg deploy", "root": "dgx01/network/mtu[data0]"}
    site = health(cluster, fail("dgx02", "dgx02/state/path_mtu[dgx01]", problem=to_dgx01),
                  fail("dgx01", "dgx01/state/mtu[data0]", problem=to_dgx01))
    assert broken(site) == {"dgx01"}
    port = {"id": "port_admin:sw1:1/17", "fix": "no shutdown", "root": "sw1/switches/port_admin_up[1/17]"}
    through = health(cluster, fail("dgx01", "dgx01/state/path[stor01]", problem=port))
    assert broken(through) == {"stor01"}
    assert through.nodes["stor01"].problems["port_admin:sw1:1/17"].found_on == "sw1"
