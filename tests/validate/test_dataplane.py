"""racfg.validate.dataplane: the fabric role's declaration applied to a host's probe, and a neighbour
entry judged against the MAC the address's owner really has."""

from __future__ import annotations

import json

from racfg.validate.dataplane import DataEnd, data_ends, items, neighbour_entries, wrong_neighbour

HV = {"racfg_nics": [{"name": "data0", "address": "198.19.0.11/24", "mtu": 9000}], "racfg_mgmt": "198.18.0.11"}
ADDR = json.dumps([{"ifname": "data0", "flags": ["UP", "LOWER_UP"], "mtu": 9000,
                    "addr_info": [{"family": "inet", "local": "198.19.0.11", "prefixlen": 24}]}])
ROUTES = [{"dst": "198.19.0.0/24", "dev": "data0", "protocol": "kernel", "scope": "link"}]
NEIGH = json.dumps([{"dst": "198.19.0.21", "dev": "data0", "lladdr": "02:00:de:ad:be:ef", "state": ["PERMANENT"]}])


def test_validate_reads_what_the_role_declares():
    blackhole = json.dumps([*ROUTES, {"type": "blackhole", "dst": "198.19.0.21", "flags": []}])
    assert [i["kind"] for i in items(HV, ADDR, blackhole, "[]")] == ["route_stray"]
    assert [i["kind"] for i in items(HV, ADDR, json.dumps(ROUTES), NEIGH)] == ["neighbour"]
    assert items(HV, ADDR, json.dumps(ROUTES), "[]") == []


def test_a_neighbour_entry_is_wrong_only_against_the_owners_real_mac():
    owners = data_ends({"stor01": {"racfg_nics": [{"name": "data0", "address": "198.19.0.21/24"}]}},
                       {("stor01", "data0"): "0e:12:ab:1b:c6:ac"})
    assert owners == {"198.19.0.21": DataEnd("stor01", "data0", "0e:12:ab:1b:c6:ac")}
    entries = neighbour_entries(NEIGH)
    assert wrong_neighbour(entries, "198.19.0.21", "data0", owners["198.19.0.21"]) == (
        "neighbour entry 198.19.0.21 lladdr 02:00:de:ad:be:ef dev data0 (permanent), but stor01:data0 has "
        "0e:12:ab:1b:c6:ac")
    right = neighbour_entries(NEIGH.replace("02:00:de:ad:be:ef", "0E:12:AB:1B:C6:AC"))
    assert wrong_neighbour(right, "198.19.0.21", "data0", owners["198.19.0.21"]) is None
    assert wrong_neighbour(entries, "198.19.0.21", "data0", DataEnd("stor01", "data0", None)) is None  # not read
    assert wrong_neighbour(entries, "198.19.0.22", "data0", owners["198.19.0.21"]) is None  # no entry
