"""The cluster-wide readings, as tables: jumbo matrix, cabling from both ends, odd hosts."""

from __future__ import annotations

from racfg.validate.analysis import CableEnd, cabling_verdicts, jumbo_verdicts, odd_ones
from racfg.validate.probe import PingPath, parse_output, ping_paths, script

DGX = [("dgx01", "data0"), ("dgx02", "data0"), ("dgx03", "data0")]
STOR = [("stor01", "data0"), ("stor02", "data0"), ("stor03", "data0")]


def matrix() -> list[PingPath]:
    paths = [PingPath(h, n, s, sn, "198.19.0.1", 8972) for h, n in DGX + STOR for s, sn in STOR if h != s]
    return paths


def test_one_bad_nic_is_named_once_and_explains_its_paths():
    paths = matrix()
    passed = {p.label: "dgx02" not in p.label for p in paths}
    verdicts = jumbo_verdicts(paths, passed)
    assert verdicts[("dgx02", "data0")].dead
    assert [v for k, v in verdicts.items() if not v.ok] == [verdicts[("dgx02", "data0")]]


def test_a_bad_storage_port_is_named_once():
    paths = matrix()
    passed = {p.label: "stor03" not in p.label for p in paths}
    verdicts = jumbo_verdicts(paths, passed)
    assert {k for k, v in verdicts.items() if not v.ok} == {("stor03", "data0")}


def test_a_single_bad_path_is_reported_at_its_source():
    paths = matrix()
    bad = "dgx01:data0->stor02:data0"
    verdicts = jumbo_verdicts(paths, {p.label: p.label != bad for p in paths})
    assert verdicts[("dgx01", "data0")].failed == (bad,)
    assert verdicts[("stor02", "data0")].ok
    assert {k for k, v in verdicts.items() if not v.ok} == {("dgx01", "data0")}


def test_unmeasured_paths_are_not_failures():
    paths = matrix()
    passed = {p.label: True for p in paths if p.src_host != "stor01"}
    verdicts = jumbo_verdicts(paths, passed)
    assert all(v.ok for v in verdicts.values())


CABLES = [CableEnd("sw1", "1/1", "dgx01", "data0"), CableEnd("sw1", "1/2", "dgx02", "data0"),
          CableEnd("sw1", "1/17", "stor01", "data0")]


def wired(pairs: dict[str, tuple[str, str]]):
    switch = {("sw1", port): who for port, who in pairs.items()}
    hosts = {who: ("sw1", port) for port, who in pairs.items()}
    return switch, hosts


def test_cabling_as_planned():
    switch, hosts = wired({"1/1": ("dgx01", "data0"), "1/2": ("dgx02", "data0"), "1/17": ("stor01", "data0")})
    assert all(v.ok for v in cabling_verdicts(CABLES, switch, hosts).values())


def test_swapped_pair_is_named_as_such_at_both_ports():
    switch, hosts = wired({"1/1": ("dgx02", "data0"), "1/2": ("dgx01", "data0"), "1/17": ("stor01", "data0")})
    verdicts = cabling_verdicts(CABLES, switch, hosts)
    bad = {k: v for k, v in verdicts.items() if not v.ok}
    assert set(bad) == {("sw1", "1/1"), ("sw1", "1/2")}
    assert bad[("sw1", "1/1")].swapped_with == CABLES[1]
    assert "swapped" in bad[("sw1", "1/1")].problems[0] and "dgx02:data0" in bad[("sw1", "1/1")].problems[0]


def test_a_cable_on_the_wrong_port_is_not_called_a_swap():
    switch, hosts = wired({"1/1": ("dgx01", "data0"), "1/3": ("dgx02", "data0"), "1/17": ("stor01", "data0")})
    verdicts = cabling_verdicts(CABLES, switch, hosts)
    assert verdicts[("sw1", "1/2")].problems == ["sw1 1/2 hears no LLDP neighbour (expected dgx02:data0)",
                                                 "dgx02:data0 hears sw1 1/3 (expected sw1 1/2)"]
    assert verdicts[("sw1", "1/2")].swapped_with is None


def test_odd_one_out_and_ties():
    assert odd_ones({"a": "6.1", "b": "6.1", "c": "5.10"}) == ("6.1", {"c": "5.10"})
    assert odd_ones({"a": None, "b": "x"}) == ("x", {})
    assert odd_ones({}) == (None, {})


def test_probe_script_round_trip_and_ping_matrix():
    hosts = {
        "dgx01": {"racfg_role": "dgx", "racfg_nics": [{"name": "data0", "address": "198.19.0.11/24", "mtu": 9000}]},
        "stor01": {"racfg_role": "storage", "racfg_nics": [{"name": "data0", "address": "198.19.0.21/24",
                                                             "mtu": 9000}]},
        "stor02": {"racfg_role": "storage", "racfg_nics": [{"name": "data0", "address": "198.19.0.22/24",
                                                             "mtu": 4092}]},
    }
    paths = ping_paths(hosts)
    assert {p.label for p in paths} == {"dgx01:data0->stor01:data0", "dgx01:data0->stor02:data0",
                                       "stor01:data0->stor02:data0", "stor02:data0->stor01:data0"}
    assert {p.size for p in paths if "stor02" in p.label} == {4064}
    text = script({"a": "echo hi", "b": "false"}, paths[:1])
    assert "ping -n -q -M do -s 8972" in text
    out = parse_output("@@racfg-probe@@ begin a\nhi\n@@racfg-probe@@ rc 0\n@@racfg-probe@@ begin b\n"
                       "@@racfg-probe@@ rc 1\n")
    assert out["a"].out == "hi" and out["a"].ok and out["b"].rc == 1
