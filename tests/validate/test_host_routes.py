"""Hosts of a leaf-spine site have their gateway and source routes: the parsers (racfg.hostfacts.routes)
and validators/test_network.py's route checks on real iproute2 6.1 output (fixtures/routes: a namespace
on this machine given a dual-homed storage node's routes as the fabric role writes them, then read with
``ip -j route show table all`` and ``ip -j rule show``), through the same plugin `racfg validate` runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_checks_recorded import GROUP, host, run_one

from racfg.hostfacts.routes import HostRoute, HostRule, parse_routes, parse_rules
from racfg.results import Status
from racfg.validate.probe import Section

FIX = Path(__file__).parent / "fixtures" / "routes"
ROUTES = (FIX / "ip-j-route-show-table-all_dual-homed-storage_iproute2-6.1-netns.json").read_text()
RULES = (FIX / "ip-j-rule-show_dual-homed-storage_iproute2-6.1-netns.json").read_text()
NETS = ["198.19.102.0/23"]
ROUTING = {"gateway": "198.19.102.1", "source_routing": True, "routes": [
    {"nic": "data0", "leaf": "leaf1", "to": NETS, "via": "198.19.102.1", "source": "198.19.102.21",
     "subnet": "198.19.102.0/24", "metric": 100, "table": 101},
    {"nic": "data1", "leaf": "leaf2", "to": NETS, "via": "198.19.103.1", "source": "198.19.103.31",
     "subnet": "198.19.103.0/24", "metric": 101, "table": 102}]}


def test_parsers_read_every_table_and_the_rules():
    routes = parse_routes(ROUTES)
    assert HostRoute("198.19.102.0/23", "main", "198.19.102.1", "data0", 100, None) in routes
    assert HostRoute("198.19.102.0/23", "102", "198.19.103.1", "data1", None, None) in routes
    assert any(r.table == "local" for r in routes)
    assert parse_rules(RULES)[1:3] == [HostRule(32764, "198.19.103.31/32", "102"),
                                       HostRule(32765, "198.19.102.21/32", "101")]


def without(text: str, drop) -> str:
    return json.dumps([e for e in json.loads(text) if not drop(e)])


@pytest.mark.parametrize(("routes", "rules", "glob", "status", "actual"), [
    (ROUTES, RULES, "*/network/route*", Status.PASS, None),
    (ROUTES, RULES, "*/network/source_route*", Status.PASS, None),
    (without(ROUTES, lambda e: e.get("dev") == "data1" and e.get("metric") == 101), RULES,
     "*/network/route[[]data1:*", Status.FAIL, "198.19.102.0/23 via 198.19.102.1 dev data0 metric 100"),
    (without(ROUTES, lambda e: e.get("table") == "101" and e.get("gateway")), RULES,
     "*/network/source_route[[]data0:*", Status.FAIL, "table 101: no route to 198.19.102.0/23; rule present"),
    (ROUTES, without(RULES, lambda e: e.get("table") == "102"),
     "*/network/source_route[[]data1:*", Status.FAIL, "table 102: routes as planned; no rule from 198.19.103.31"),
])
def test_route_checks_on_the_recording(routes, rules, glob, status, actual):
    nics = [{"name": "data0", "address": "198.19.102.21/24", "mtu": 9000, "switch": "leaf1", "port": "1/17",
             "speed_gbps": 100.0}, {"name": "data1", "address": "198.19.103.31/24", "mtu": 9000, "switch": "leaf2",
                                    "port": "1/18", "speed_gbps": 100.0}]
    hv = host("storage", racfg_nics=nics, racfg_routing=ROUTING)
    results = run_one(GROUP, hv, {"ip_route": Section(0, routes), "ip_rule": Section(0, rules)}, glob)
    assert results, glob
    for result in results:
        assert result.status is status, (result.check, result.message)
        if actual is not None:
            assert result.actual == actual and result.fix and "--tags fabric" in result.fix


def test_a_site_that_does_not_route_has_no_route_checks():
    assert run_one(GROUP, host("dgx"), {}, "*/network/*route*") == []
