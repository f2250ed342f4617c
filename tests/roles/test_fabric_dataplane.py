"""The fabric role's one declaration of the data plane it owns (roles/fabric/filter_plugins/
fabric_dataplane.py), on ``ip -j`` output as iproute2 6.1 prints it on the lab's hosts: a table of host
states and what the role must conclude, with the command that repairs each (the read pass, the tasks and
validate all use this function, so this table is what each of them decides)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fabric_dataplane",
                                               ROOT / "roles/fabric/filter_plugins/fabric_dataplane.py")
dataplane = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dataplane)

NICS = [{"name": "data0", "address": "198.19.0.11/24", "mtu": 9000}]
MGMT = "198.18.0.11"


def link(name: str = "data0", up: bool = True) -> dict:
    flags = ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"] if up else ["BROADCAST", "MULTICAST"]
    return {"ifindex": 3, "ifname": name, "flags": flags, "mtu": 9000, "operstate": "UP" if up else "DOWN",
            "address": "6a:21:0f:5e:11:01", "addr_info": [{"family": "inet", "local": "198.19.0.11", "prefixlen": 24}]}


ETH0 = {"ifindex": 2, "ifname": "eth0", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
        "addr_info": [{"family": "inet", "local": MGMT, "prefixlen": 24}]}
CONNECTED = {"dst": "198.19.0.0/24", "dev": "data0", "protocol": "kernel", "scope": "link", "prefsrc": "198.19.0.11",
             "flags": []}
MGMT_ROUTES = [{"dst": "default", "gateway": "198.18.0.1", "dev": "eth0", "flags": []},
               {"dst": "198.18.0.0/24", "dev": "eth0", "protocol": "kernel", "scope": "link", "prefsrc": MGMT,
                "flags": []},
               {"type": "local", "dst": "198.19.0.11", "dev": "data0", "table": "local", "protocol": "kernel",
                "scope": "host", "prefsrc": "198.19.0.11", "flags": []}]
HEALTHY = [*MGMT_ROUTES, CONNECTED]
LEARNT = [{"dst": "198.19.0.21", "dev": "data0", "lladdr": "0e:12:ab:1b:c6:ac", "state": ["REACHABLE"]}]
ROUTING = {"gateway": "198.19.64.1", "source_routing": False,
           "routes": [{"nic": "data0", "to": ["198.19.64.0/22"], "via": "198.19.0.1", "source": "198.19.0.11",
                       "subnet": "198.19.0.0/24", "metric": 100, "table": None}]}
PLANNED = {"dst": "198.19.64.0/22", "gateway": "198.19.0.1", "dev": "data0", "protocol": "static", "metric": 100,
           "flags": []}


def state(links=None, routes=None, neigh=None, routing=None):
    return dataplane.dataplane_state(NICS, links or [ETH0, link()], HEALTHY if routes is None else routes,
                                     neigh or LEARNT, routing, MGMT)


def test_a_healthy_host_has_nothing_to_repair_and_learnt_neighbours_are_not_static():
    assert state() == []
    assert state(routes=[*HEALTHY, PLANNED], routing=ROUTING) == []


@pytest.mark.parametrize(("case", "kwargs", "kind", "line", "argv"), [
    ("set down", {"links": [ETH0, link(up=False)], "routes": MGMT_ROUTES}, "admin",
     "data0: set down (admin down)", ["ip", "link", "set", "dev", "data0", "up"]),
    ("blackhole for a peer", {"routes": [*HEALTHY, {"type": "blackhole", "dst": "198.19.0.21", "flags": []}]},
     "route_stray", "data0: blackhole 198.19.0.21 overrides 198.19.0.0/24 dev data0",
     ["ip", "route", "del", "blackhole", "198.19.0.21/32", "table", "main"]),
    ("unreachable subnet", {"routes": [*HEALTHY, {"type": "unreachable", "dst": "198.19.0.0/25", "metric": 5,
                                                  "flags": []}]},
     "route_stray", "data0: unreachable 198.19.0.0/25 metric 5 overrides 198.19.0.0/24 dev data0",
     ["ip", "route", "del", "unreachable", "198.19.0.0/25", "metric", "5", "table", "main"]),
    ("more specific through another interface", {"routes": [*HEALTHY, {"dst": "198.19.0.21", "gateway": "198.18.0.1",
                                                                        "dev": "eth0", "flags": []}]},
     "route_stray", "data0: unplanned route 198.19.0.21 via 198.18.0.1 dev eth0 overrides 198.19.0.0/24 "
     "dev data0", ["ip", "route", "del", "198.19.0.21/32", "via", "198.18.0.1", "dev", "eth0", "table", "main"]),
    ("permanent neighbour", {"neigh": [{"dst": "198.19.0.21", "dev": "data0", "lladdr": "02:00:de:ad:be:ef",
                                        "state": ["PERMANENT"]}]},
     "neighbour", "data0: static neighbour entry 198.19.0.21 lladdr 02:00:de:ad:be:ef dev data0 (permanent; "
     "racfg writes none)", ["ip", "neigh", "del", "198.19.0.21", "dev", "data0"]),
    ("connected route deleted", {"routes": MGMT_ROUTES}, "route_missing", "data0: no route 198.19.0.0/24 dev data0",
     None),
    ("planned route deleted (leaf-spine)", {"routing": ROUTING}, "route_missing",
     "data0: no route 198.19.64.0/22 via 198.19.0.1 metric 100", None),
])
def test_each_fault_is_one_item_with_its_repair(case, kwargs, kind, line, argv):
    items = state(**kwargs)
    assert [(i["kind"], i["line"]) for i in items] == [(kind, line)], case
    if argv is None:
        assert items[0]["reconfigure"] is True and "argv" not in items[0]  # the backend applies the NIC again
    else:
        assert items[0]["argv"] == argv


def test_a_planned_route_with_another_metric_is_replaced_not_kept():
    wrong = {**PLANNED, "metric": 7}
    items = state(routes=[*HEALTHY, wrong], routing=ROUTING)
    assert [i["kind"] for i in items] == ["route_missing", "route_stray"]
    assert items[1]["argv"][-4:] == ["metric", "7", "table", "main"]


def test_a_route_covering_the_management_address_is_refused_with_the_reason():
    nics = [{"name": "data0", "address": "198.18.0.50/24", "mtu": 9000}]  # a data subnet around the mgmt address
    items = dataplane.dataplane_state(nics, [ETH0, link()], [{"type": "blackhole", "dst": MGMT, "flags": []}], [],
                                      None, MGMT)
    stray = [i for i in items if i["kind"] == "route_stray"]
    assert len(stray) == 1 and "argv" not in stray[0]
    assert stray[0]["refused"].endswith(f"it covers the management address {MGMT}; left alone")


def test_routes_and_neighbours_outside_the_data_networks_are_not_the_roles():
    routes = [*HEALTHY, {"type": "blackhole", "dst": "10.9.9.9", "flags": []},
              {"dst": "198.19.0.21", "dev": "data0", "table": "local", "type": "local", "flags": []}]
    neigh = [*LEARNT, {"dst": "198.18.0.1", "dev": "eth0", "lladdr": "02:00:00:00:00:01", "state": ["PERMANENT"]}]
    assert state(routes=routes, neigh=neigh) == []


def test_the_filter_is_registered_under_the_role_prefix():
    assert set(dataplane.FilterModule().filters()) == {"fabric_dataplane_state"}
