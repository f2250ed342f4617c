"""The intended site (racfg.intent): built once per loaded inventory, holding what the example
leaf-spine sites intend, and the one source every reader's view agrees with (render's variables, the
switch layer's IntendedSwitch as the deploy module reads it from those variables, validate's fabric)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from racfg.intent import build, site_intent
from racfg.inventory import load_cluster
from racfg.render import load_rendered, render_files
from racfg.switches.intent import intended_from_vars, intended_switch
from racfg.validate.fabric_routing import fabric_intent

ROOT = Path(__file__).parents[2]
SITES = [*sorted((ROOT / "inventory").glob("*.yaml")), ROOT / "tests" / "vallab.yaml",
         ROOT / "tests" / "lab" / "leafspine.yaml"]


def test_built_once_per_cluster_and_dropped_with_it() -> None:
    cluster = load_cluster(ROOT / "inventory" / "ra-leafspine.yaml")
    site = site_intent(cluster)
    assert site_intent(cluster) is site
    again = load_cluster(ROOT / "inventory" / "ra-leafspine.yaml")
    assert site_intent(again) is not site and site_intent(again) == site
    key = id(cluster)
    del cluster, site
    gc.collect()
    assert key not in build._BUILT


def test_the_leafspine_example_as_intended() -> None:
    """ra-leafspine: 4 leaves x 2 spines, 5 links per pair, 10 hosts of 100G on each leaf's /24."""
    site = site_intent(load_cluster(ROOT / "inventory" / "ra-leafspine.yaml"))
    assert site.routed and site.data_networks == ("198.19.64.0/22",)
    leaves = [s for s in site.switches.values() if s.role == "leaf"]
    spines = [s for s in site.switches.values() if s.role == "spine"]
    assert [s.name for s in leaves] == ["leaf1", "leaf2", "leaf3", "leaf4"] and len(spines) == 2
    for k, leaf in enumerate(leaves):
        routing = leaf.routing
        assert routing is not None and routing.asn == 65101 + k and routing.spine_asn == 65100
        assert len(routing.isls) == 10 and routing.maximum_paths == 10
        assert {i.peer for i in routing.isls} == {"spine1", "spine2"} and {i.mtu for i in routing.isls} == {9216}
        assert [str(s.gateway) for s in routing.subnets] == [f"198.19.{64 + k}.1/24"]
        assert len(leaf.ports) == 10 and {p.speed_gbps for p in leaf.ports} == {100.0}
        assert site.host_gbps[leaf.name] == 1000.0
    for spine in spines:
        assert spine.routing is not None and spine.routing.maximum_paths == 5 and not spine.routing.subnets
        assert len(spine.routing.isls) == 20 and spine.ports == ()
    # both ends of every ISL name each other, on one /31
    ends = {(s.name, i.port): i for s in site.switches.values() if s.routing for i in s.routing.isls}
    assert len(ends) == 80
    for (name, port), end in ends.items():
        back = ends[(end.peer, end.peer_port)]
        assert (back.peer, back.peer_port) == (name, port) and back.address.split("/")[0] == end.peer_address
    dgx07 = site.hosts["dgx07"]
    assert dgx07 is not None and dgx07.gateway == "198.19.65.1" and not dgx07.source_routing
    assert [(r.leaf, r.to, r.metric, r.table) for r in dgx07.routes] == [("leaf2", ("198.19.64.0/22",), 100, None)]


def test_a_site_that_does_not_route_has_no_routing() -> None:
    site = site_intent(load_cluster(ROOT / "tests" / "vallab.yaml"))
    assert not site.routed and all(s.routing is None for s in site.switches.values())
    assert set(site.hosts.values()) == {None} and site.data_networks == ()
    assert fabric_intent(site) is None


@pytest.mark.parametrize("path", SITES, ids=lambda p: p.name)
def test_every_reader_sees_the_same_site(path: Path) -> None:
    """What validate, drift and deploy's checks build from the model is what the switch module builds
    from the variables render writes of it; validate's fabric view holds every leaf's uplinks."""
    cluster = load_cluster(path)
    site = site_intent(cluster)
    files = render_files(cluster)
    for name in cluster.switches:
        rendered = load_rendered(files[f"host_vars/{name}.yml"])
        fabric = {"pfc": cluster.fabric.pfc, "roce": cluster.fabric.roce,
                  "switch_mtu": cluster.fabric.effective_switch_mtu}
        from_vars = intended_from_vars(rendered["racfg_switch"], rendered["racfg_switch_ports"], fabric,
                                       rendered.get("racfg_switch_routing"))
        assert intended_switch(site, name) == from_vars
    fabric_view = fabric_intent(site)
    if site.routed:
        assert fabric_view is not None
        assert {leaf.name: len(leaf.uplinks) for leaf in fabric_view.leaves} == {
            s.name: len(s.routing.isls) for s in site.switches.values() if s.routing and s.role == "leaf"}
    else:
        assert fabric_view is None
