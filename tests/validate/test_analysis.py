"""The cluster-wide readings, as tables: cabling from both ends, odd hosts; the probe script."""

from __future__ import annotations

from racfg.validate.analysis import CableEnd, cabling_verdicts, odd_ones
from racfg.validate.probe import PingPath, parse_output, ping_paths, script

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
    assert odd_ones({"a": "x", "b": "y"}) == (None, {}), "a tie is no majority"
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
    assert 'python3 -c "$racfg_df" 198.19.0.21 8972' in text and "racfg_df='import os" in text
    out = parse_output("@@racfg-probe@@ begin a\nhi\n@@racfg-probe@@ rc 0\n@@racfg-probe@@ begin b\n"
                       "@@racfg-probe@@ rc 1\n")
    assert out["a"].out == "hi" and out["a"].ok and out["b"].rc == 1


def test_on_a_routed_site_a_host_pings_the_other_leaves_storage_by_the_nic_its_routes_send_by():
    """Issue 52: paths cross the fabric as traffic does. A destination in the NIC's subnet is pinged from
    that NIC; one on another leaf from the NIC of the lowest-metric planned route covering it (a second
    NIC's route stands by); a destination no route covers is no path."""
    def route(nic: str, metric: int) -> dict:
        return {"nic": nic, "to": ["198.19.64.0/22"], "via": "x", "metric": metric}

    hosts = {
        "dgx01": {"racfg_role": "dgx", "racfg_nics": [{"name": "d0", "address": "198.19.64.11/24", "mtu": 9000},
                                                     {"name": "d1", "address": "198.19.65.11/24", "mtu": 4200}],
                  "racfg_routing": {"routes": [route("d1", 101), route("d0", 100)]}},
        "stor01": {"racfg_role": "storage", "racfg_nics": [{"name": "s0", "address": "198.19.65.31/24", "mtu": 9000}],
                   "racfg_routing": {"routes": [route("s0", 100)]}},
        "stor02": {"racfg_role": "storage", "racfg_nics": [{"name": "s0", "address": "198.19.66.31/24", "mtu": 9000}],
                   "racfg_routing": {"routes": [route("s0", 100)]}},
        "stor03": {"racfg_role": "storage", "racfg_nics": [{"name": "s0", "address": "198.18.7.31/24", "mtu": 9000}]},
    }
    paths = {p.label: p for p in ping_paths(hosts)}
    assert set(paths) == {"dgx01:d1->stor01:s0", "dgx01:d0->stor02:s0", "stor01:s0->stor02:s0",
                          "stor02:s0->stor01:s0"}
    assert (paths["dgx01:d1->stor01:s0"].src_addr, paths["dgx01:d1->stor01:s0"].size) == ("198.19.65.11", 4172)
    assert (paths["dgx01:d0->stor02:s0"].src_addr, paths["dgx01:d0->stor02:s0"].size) == ("198.19.64.11", 8972)


def test_the_leafspine_example_pings_every_storage_node_from_every_host_across_the_spines():
    from pathlib import Path

    from racfg.inventory import load_cluster
    from racfg.render.ansible_inventory import host_vars

    cluster = load_cluster(Path(__file__).resolve().parents[2] / "inventory" / "ra-leafspine.yaml")
    paths = ping_paths({h.name: host_vars(cluster, h) for h in cluster.hosts})
    assert {p.dst_host for p in paths if p.src_host == "dgx14"} == {f"weka{i:02d}" for i in range(1, 17)}
    assert len(paths) == 24 * 16 + 16 * 15


def test_each_path_reads_small_then_df_by_destination_and_tells_unreachable_mtu_and_route():
    """Paths are pinged by destination, as applications send (no -I): a blackhole route that a ping
    bound to the NIC never sees fails them; bound to the NIC only when the small ping failed, to tell
    the route (bound passes) from the link; a route by another NIC or from a non-data source is the route."""
    from types import SimpleNamespace

    from racfg.validate.probe import run_probe

    paths = [PingPath("dgx01", "data0", f"stor0{i}", "data0", f"198.19.0.2{i}", 8972, "198.19.0.11")
             for i in (1, 2, 3, 4, 5, 6)]
    text = script({}, paths)
    assert "ping -n -q -c 2 -i 0.2 -W 2 198.19.0.21 >/dev/null" in text  # by destination
    assert 'if [ $a = 0 ]; then { python3 -c "$racfg_df" 198.19.0.21 8972 2>/dev/null; b=$?; [ $b -gt 1 ] && ' \
        '{ ping -n -q -M do -s 8972 -c 3 -i 0.2 -W 5 198.19.0.21 >/dev/null 2>&1; b=$?; }; }' in text
    assert "else ping -n -q -c 2 -i 0.2 -W 2 -I data0 198.19.0.21" in text  # bound only where it failed
    assert "ip -o -4 route get 198.19.0.21" in text
    good = "_dev_data0_src_198.19.0.11_uid_0_\\_cache"
    output = ("@@racfg-probe@@ begin pings\n"
              f"0 0 0 - 198.19.0.21{good}\n1 0 1 - 198.19.0.22{good}\n2 1 - 1 198.19.0.23{good}\n"
              "3 2 - 0 blackhole_198.19.0.24_dev_lo_src_198.18.0.11_uid_0\n"
              "4 0 0 - 198.19.0.25_dev_eth0_src_198.18.0.11_uid_0\n"
              "5 2 - 2 RTNETLINK_answers:_Network_is_unreachable\n@@racfg-probe@@ rc 0\n")
    host = SimpleNamespace(run=lambda _script: SimpleNamespace(stdout=output, rc=0))
    probe = run_probe(host, "dgx01", {}, paths)
    assert probe.pings == {paths[0].label: "ok", paths[1].label: "mtu", paths[2].label: "unreachable",
                           paths[3].label: "route", paths[4].label: "route", paths[5].label: "route"}
    assert probe.routes[paths[0].label] == "198.19.0.21 dev data0 src 198.19.0.11 uid 0 cache"
    assert probe.routes[paths[3].label] == "blackhole 198.19.0.24 dev lo src 198.18.0.11 uid 0"
