"""The lab routes for real: a two-leaf, two-spine fabric built through the lab's own API (switch
namespaces, ISL veths, FRR per switch, the emulated CLIs), configured over SSH with each platform's
own BGP/L3 commands, then checked as an engineer would check a real fabric: sessions Established
(the product's parsers reading the switches' ``show ip bgp summary``), four equal-cost paths to the
other leaf's subnet (``show ip route``), a host on one leaf reaching the host on the other across
the spines, flows spread over every ISL both ways (the ISL ports' own counters: the spines do not hash
as the leaves do), and, with the ISLs to one spine shut, the path still up through the other.
Afterwards ``lab down`` leaves no FRR process or file.

Mixed platforms on purpose: leaf1 and spine2 are Onyx (one-line config forms, text shows), leaf2
and spine1 EOS (sub-modes, ``| json``). Hosts are plain namespaces (the routing is the switches').
Own site ``labroute`` (management 198.18.78.0/24), always torn down. Every wait polls to a deadline.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from netmiko import ConnectHandler

from racfg.catalog import parse_port
from racfg.paths import lab_root
from racfg.switches import get_driver
from racfg.switches.parsers import eos_json, onyx
from racfg_lab import fabric, frr, names, routed, switches
from racfg_lab.netns import create_netns, ip
from racfg_lab.state import LabState, SwitchState, save_state, site_dir
from racfg_lab.teardown import leftovers, teardown_site

pytestmark = [pytest.mark.lab]
SITE = "labroute"
GATEWAY = ipaddress.IPv4Interface("198.18.78.1/24")
RATE_MBIT = 200
DEADLINE_S = 60.0
SPINE_ASN = 65100
# name -> (platform, model, management address, ASN)
SWITCHES = {"leaf1": ("onyx", "SN2700", "198.18.78.11", 65001), "leaf2": ("eos", "7060CX-32S", "198.18.78.12", 65002),
            "spine1": ("eos", "7060CX-32S", "198.18.78.21", SPINE_ASN),
            "spine2": ("onyx", "SN2700", "198.18.78.22", SPINE_ASN)}
HOSTS = {"h1": ("leaf1", "10.1.1.10/24", "10.1.1.1/24"), "h2": ("leaf2", "10.1.2.10/24", "10.1.2.1/24")}
# (leaf, leaf port index, spine, spine port index, /31 network: spine side even, leaf side odd)
# Two ISLs per leaf-spine pair (leaf ports 29-30 to spine1, 31-32 to spine2), so a spine chooses among
# its links to a leaf after the leaf chose the spine: where both hash alike, half the links stay idle.
ISLS = [(leaf, 29 + k, f"spine{k // 2 + 1}", 2 * n + k % 2 + 1, f"10.255.0.{8 * n + 2 * k}/31")
        for n, leaf in enumerate(("leaf1", "leaf2")) for k in range(4)]
T = TypeVar("T")


def port(switch: str, index: int) -> str:
    return f"1/{index}" if SWITCHES[switch][0] == "onyx" else f"Ethernet{index}"


def until(probe: Callable[[], T], ok: Callable[[T], bool], what: str) -> T:
    deadline = time.monotonic() + DEADLINE_S
    while True:
        value = probe()
        if ok(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached in {DEADLINE_S:.0f} s; last: {value}")
        time.sleep(0.5)


def _build(state: LabState) -> None:
    directory = site_dir(SITE)
    fabric.setup_mgmt_bridge(SITE, GATEWAY)
    ports: dict[str, dict[str, dict]] = {name: {} for name in SWITCHES}
    for name, (platform, _, mgmt, _) in SWITCHES.items():
        ns = names.netns(SITE, name)
        state.switches[name] = SwitchState(name, platform, ns, mgmt,
                                           str(switches.switch_dir(directory, name) / "cli.json"))
        save_state(state)
        fabric.setup_switch_netns(ns)
        fabric.attach_mgmt(SITE, name, ns, mgmt, GATEWAY.network.prefixlen)
        switches.ensure_password(switches.switch_dir(directory, name))
    for host, (leaf, address, gateway) in HOSTS.items():
        ns = names.netns(SITE, host)
        create_netns(ns)
        fabric.add_cable(ns, "eth0", names.netns(SITE, leaf), "swp1", RATE_MBIT)
        ip(ns, "addr", "add", address, "dev", "eth0")
        ip(ns, "route", "add", "default", "via", gateway.split("/")[0])
        ports[leaf][port(leaf, 1)] = {"ifname": "swp1", "speed_gbps": 100.0, "peer_host": host, "peer_nic": "eth0"}
    for leaf, leaf_index, spine, spine_index, _ in ISLS:
        routed.add_isl(routed.IslEnd(names.netns(SITE, leaf), f"swp{leaf_index}"),
                       routed.IslEnd(names.netns(SITE, spine), f"swp{spine_index}"), RATE_MBIT)
        ports[leaf][port(leaf, leaf_index)] = {"ifname": f"swp{leaf_index}", "speed_gbps": 100.0,
                                              "peer_host": spine, "peer_nic": port(spine, spine_index)}
        ports[spine][port(spine, spine_index)] = {"ifname": f"swp{spine_index}", "speed_gbps": 100.0,
                                                 "peer_host": leaf, "peer_nic": port(leaf, leaf_index)}
    for name, (platform, model, mgmt, _) in SWITCHES.items():
        sws, sdir = state.switches[name], switches.switch_dir(directory, name)
        extra = routed.start_routing(sws, sdir)
        switches.write_cli_config(sdir, {
            "name": name, "platform": platform, "model": model, "ports_count": 32, "listen": mgmt, "ssh_port": 22,
            "username": "admin", "password_file": str(switches.password_path(sdir)), "state_dir": str(sdir),
            "netns": sws.netns, "ports": ports[name], **extra})
        sws.pid = switches.start_cli(sws)
        save_state(state)
    switches.wait_cli(list(state.switches.values()), 30, directory)
    state.complete = True
    save_state(state)


@pytest.fixture(scope="module")
def fabric_lab() -> Iterator[LabState]:
    teardown_site(SITE)
    state = LabState(SITE, "(built by tests/lab/test_lab_routed.py)", "-", names.mgmt_bridge(SITE), str(GATEWAY),
                     "ethernet", RATE_MBIT, "", "", time.strftime("%Y-%m-%d %H:%M:%S"))
    try:
        _build(state)
        yield state
    finally:
        teardown_site(SITE)


def connect(state: LabState, name: str):
    sw = state.switches[name]
    password = switches.password_path(switches.switch_dir(site_dir(SITE), name)).read_text().strip()
    conn = ConnectHandler(device_type=get_driver(sw.platform).device_type, host=sw.mgmt, port=22, username="admin",
                          password=password, fast_cli=True)
    conn.enable()
    return conn


def _isl(name: str) -> list[tuple[str, str, str, int]]:
    """(own port, own address, peer address, peer ASN) of each ISL of a switch."""
    out = []
    for leaf, leaf_index, spine, spine_index, net in ISLS:
        network = ipaddress.IPv4Network(net)
        if name == leaf:
            out.append((port(leaf, leaf_index), f"{network[1]}/31", str(network[0]), SPINE_ASN))
        elif name == spine:
            out.append((port(spine, spine_index), f"{network[0]}/31", str(network[1]), SWITCHES[leaf][3]))
    return out


def config_lines(name: str) -> list[str]:
    """What an engineer types on each switch, in the platform's own syntax."""
    platform, _, mgmt, asn = SWITCHES[name]
    host = next((h for h, (leaf, _, _) in HOSTS.items() if leaf == name), None)
    if platform == "eos":
        lines = ["ip routing"]
        if host:
            lines += ["vlan 10", f"interface {port(name, 1)}", "switchport access vlan 10"]
        for own, address, _, _ in _isl(name):
            lines += [f"interface {own}", "no switchport", f"ip address {address}", "mtu 9214"]
        if host:
            lines += ["interface Vlan10", f"ip address {HOSTS[host][2]}"]
        lines += [f"router bgp {asn}", f"router-id {mgmt}", "maximum-paths 4 ecmp 4"]
        lines += [f"neighbor {peer} remote-as {peer_asn}" for _, _, peer, peer_asn in _isl(name)]
        return lines + (["redistribute connected"] if host else []) + ["exit"]
    lines = []
    if host:
        lines += ["vlan 10", f"interface ethernet {port(name, 1)} switchport access vlan 10"]
    for own, address, _, _ in _isl(name):
        lines += [f"interface ethernet {own} no switchport force", f"interface ethernet {own} ip address {address}",
                  f"interface ethernet {own} mtu 9216 force"]
    if host:
        lines.append(f"interface vlan 10 ip address {HOSTS[host][2]}")
    lines += ["protocol bgp", f"router bgp {asn}", "exit", f"router bgp {asn} router-id {mgmt} force",
              f"router bgp {asn} maximum-paths 4"]
    lines += [f"router bgp {asn} neighbor {peer} remote-as {peer_asn}" for _, _, peer, peer_asn in _isl(name)]
    if host:
        network = ipaddress.IPv4Interface(HOSTS[host][2]).network
        lines.append(f"router bgp {asn} network {network.network_address} /{network.prefixlen}")
    return lines


def _read(state: LabState, name: str, command: str, parser: str):
    """``command`` on switch ``name`` (EOS's ``| json`` form), read by the product's parser of its platform."""
    conn = connect(state, name)
    try:
        if state.switches[name].platform == "eos":
            return getattr(eos_json, parser)(conn.send_command(f"{command} | json"))
        return getattr(onyx, parser)(conn.send_command(command))
    finally:
        conn.disconnect()


def bgp(state: LabState, name: str):
    return _read(state, name, "show ip bgp summary", "parse_bgp_summary")


def routes(state: LabState, name: str):
    return _read(state, name, "show ip route", "parse_routes")


def ping(src: str, dst: str) -> bool:
    return subprocess.run(["ip", "netns", "exec", names.netns(SITE, src), "ping", "-c", "2", "-W", "1", "-i", "0.2",
                           dst], capture_output=True, check=False).returncode == 0


def packets(switch: str, ifname: str, way: str) -> int:
    return int(subprocess.run(["ip", "netns", "exec", names.netns(SITE, switch), "cat",
                               f"/sys/class/net/{ifname}/statistics/{way}_packets"], capture_output=True, text=True,
                              check=True).stdout)


FLOWS = 256  # connections: about 64 per ISL, so an honest hash leaves none under a quarter of that
SERVER = ("import socket,sys\nl=socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
          "l.bind(('', 5001)); l.listen(512); print('ready', flush=True)\n"
          "for _ in range(int(sys.argv[1])):\n c,_=l.accept()\n while c.recv(65536): pass\n c.close()\n")


def tcp_flows(src: str, dst: str, address: str, count: int) -> None:
    """``count`` TCP connections from host ``src`` to ``dst`` (at ``address``), 8 KB each: what L4 ECMP spreads.
    TCP, not UDP: the sender's stack tags each packet with its connection's hash, which a forwarding kernel
    reuses at every hop unless it hashes the 5-tuple itself (racfg_lab.frr.SYSCTLS)."""
    server = subprocess.Popen(["ip", "netns", "exec", names.netns(SITE, dst), "python3", "-c", SERVER, str(count)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        client = (f"import socket\nfor _ in range({count}):\n s=socket.create_connection(('{address}', 5001))\n"
                  " s.sendall(b'x'*8192); s.close()\n")
        subprocess.run(["ip", "netns", "exec", names.netns(SITE, src), "python3", "-c", client], check=True,
                       timeout=60)
        server.wait(timeout=60)
    finally:
        server.kill()
        server.wait()


def test_configured_over_ssh_the_fabric_routes_with_ecmp_and_survives_an_isl_down(fabric_lab):
    for name in SWITCHES:
        conn = connect(fabric_lab, name)
        try:
            output = conn.send_config_set(config_lines(name))
            assert "%" not in output, f"{name}: {output}"
            conn.save_config() if SWITCHES[name][0] == "eos" else conn.send_command("configuration write")
        finally:
            conn.disconnect()
    for name in SWITCHES:
        facts = until(lambda n=name: bgp(fabric_lab, n), lambda f, n=name: len(f.peers) == len(_isl(n)) and all(
            p.established for p in f.peers.values()), f"{name}: every BGP session Established")
        assert facts.local_asn == SWITCHES[name][3]
    far = {"leaf1": "10.1.2.0/24", "leaf2": "10.1.1.0/24"}
    for leaf, prefix in far.items():
        table = until(lambda lf=leaf, p=prefix: routes(fabric_lab, lf),
                      lambda t, p=prefix: p in t.routes and len(t.routes[p].next_hops) == 4,
                      f"{leaf}: {prefix} over the four ISLs")
        assert table.routes[prefix].protocol == "bgp"
        assert {h.address for h in table.routes[prefix].next_hops} == {peer for _, _, peer, _ in _isl(leaf)}
    until(lambda: ping("h1", "10.1.2.10"), bool, "h1 -> h2 across the spines")
    uplinks = [f"swp{n}" for n in range(29, 33)]
    sent = {ifname: packets("leaf1", ifname, "tx") for ifname in uplinks}
    taken = {ifname: packets("leaf2", ifname, "rx") for ifname in uplinks}
    tcp_flows("h1", "h2", "10.1.2.10", FLOWS)
    sent = {ifname: packets("leaf1", ifname, "tx") - n for ifname, n in sent.items()}
    taken = {ifname: packets("leaf2", ifname, "rx") - n for ifname, n in taken.items()}
    share = sum(taken.values()) / len(taken) / 4  # a quarter of a fair share: 7 standard deviations low
    assert all(n >= share for n in sent.values()), f"{FLOWS} flows from h1 should leave over every uplink: {sent}"
    assert all(n >= share for n in taken.values()), f"...and the spines should bring them over every ISL: {taken}"

    conn = connect(fabric_lab, "leaf1")
    try:
        assert "%" not in conn.send_config_set(["interface ethernet 1/29 shutdown", "interface ethernet 1/30 shutdown"])
    finally:
        conn.disconnect()
    table = until(lambda: routes(fabric_lab, "leaf1"), lambda t: "10.1.2.0/24" in t.routes and len(
        t.routes["10.1.2.0/24"].next_hops) == 2, "leaf1: two paths left with its ISLs to spine1 shut")
    assert {h.address for h in table.routes["10.1.2.0/24"].next_hops} == {"10.255.0.4", "10.255.0.6"}
    until(lambda: ping("h1", "10.1.2.10"), bool, "h1 -> h2 through spine2 alone")
    assert ping("h2", "10.1.1.10")


def test_lab_down_leaves_no_frr_process_or_file(fabric_lab):
    directory = site_dir(SITE)
    running = [frr.running_pids(switches.switch_dir(directory, name)) for name in SWITCHES]
    assert all(len(pids) == 2 for pids in running), running
    teardown_site(SITE)
    assert leftovers(SITE) == []
    assert frr.stray_pids(directory) == []  # this site's: other workers' sites may be routing now
    assert not directory.exists()
    assert not any(Path(lab_root()).glob(f"{SITE}/**/frr"))


LEAFSPINE = Path(__file__).with_name("leafspine.yaml")


def _isolated_bridge_ports(netns: str) -> dict[str, bool]:
    """Whether each port of a lab switch's bridge is isolated (forwards to no other isolated port)."""
    out = subprocess.run(["ip", "-n", netns, "-j", "-d", "link", "show", "master", names.BRIDGE_IFNAME],
                         capture_output=True, text=True, check=True).stdout
    return {link["ifname"]: bool(link["linkinfo"]["info_slave_data"].get("isolated")) for link in json.loads(out)}


def test_lab_up_of_a_leaf_spine_site_runs_frr_per_switch_and_lab_down_removes_it():
    """``lab up`` of a leaf-spine inventory: every ISL a shaped veth between the two switches, the
    routing daemons in every switch namespace; a second up changes nothing; a daemon that died is
    restarted by the next up; the spines, whose credentials name one password variable, share one
    password; ``lab down`` leaves no daemon, file or namespace."""
    from racfg.inventory import load_cluster
    from racfg_lab import lifecycle

    cluster = load_cluster(LEAFSPINE)
    lifecycle.down(LEAFSPINE)
    try:
        lifecycle.up(LEAFSPINE)
        directory = site_dir(cluster.name)
        for name in cluster.switches:
            assert len(frr.running_pids(switches.switch_dir(directory, name))) == 2, name
        isl_ends: dict[str, set[str]] = {}
        for isl in cluster.topology.isls:
            for end, port in ((isl.leaf, isl.leaf_port), (isl.spine, isl.spine_port)):
                sw = cluster.switches[end]
                isl_ends.setdefault(end, set()).add(
                    names.switch_port_ifname(parse_port(sw.platform, port, sw.model).index, None))
            leaf = cluster.switches[isl.leaf]
            ns = names.netns(cluster.name, isl.leaf)
            ifname = names.switch_port_ifname(parse_port(leaf.platform, isl.leaf_port, leaf.model).index, None)
            assert fabric.read_rate_mbit(ns, ifname) == fabric.lab_rate_mbit(isl.speed_gbps,
                                                                               fabric.DEFAULT_SCALE_MBIT_PER_100G)
        # before deploy the ISLs are switchports and the links form a loop: every ISL end is an isolated
        # bridge port (no forwarding from one ISL to another, so no broadcast can circle), the host
        # ports are not (a leaf's hosts reach each other)
        for name, ends in isl_ends.items():
            isolated = _isolated_bridge_ports(names.netns(cluster.name, name))
            assert {port for port, on in isolated.items() if on} == ends, name
            assert len(isolated) > len(ends) or cluster.switches[name].spec.role == "spine", name
        assert not lifecycle.up(LEAFSPINE).changed
        # the spines' credentials name one password variable: one password opens both, as on a site
        password = {name: switches.password_path(switches.switch_dir(directory, name)).read_text()
                    for name in cluster.switches}
        assert password["lsspine1"] == password["lsspine2"]
        assert len({password["lsleaf1"], password["lsleaf2"], password["lsspine1"]}) == 3
        spine = switches.switch_dir(directory, "lsspine1")
        bgpd = int((frr.frr_dir(spine) / "bgpd.pid").read_text())
        subprocess.run(["kill", str(bgpd)], check=True)
        until(lambda: frr.running_pids(spine), lambda pids: len(pids) == 1, "lsspine1's bgpd gone")
        assert lifecycle.up(LEAFSPINE).changed
        assert len(frr.running_pids(spine)) == 2
    finally:
        lifecycle.down(LEAFSPINE)
    assert leftovers(cluster.name) == []
    assert frr.stray_pids(site_dir(cluster.name)) == []  # this site's, not other workers'
    assert not site_dir(cluster.name).exists()
