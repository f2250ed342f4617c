"""A leaf-spine site deployed by racfg routes for real: the two examples in small form (issue 37).

Per platform (Onyx ``lsono``, EOS ``lseos``: tests/lslab.py's 2 leaves x 2 spines, a GPU server and a
storage node per leaf, and the first storage node's HA port on the other leaf), one lab built fresh
and deployed as a user does (``racfg deploy --yes``, module scope, always removed):

- the first deploy converges (failed=0) and a second says "no changes" (changed=0);
- 9000-byte DF pings pass from every GPU server to every storage node address, across the spines too;
- both spines carry cross-leaf traffic: many UDP flows from a leaf1 host to a leaf2 host, counted on
  each spine's ISL port towards leaf2 (the lab switch's veth counters);
- the dual-homed storage node has one route and one source-routing table per NIC; it reaches the
  other leaf from each of its addresses, and answers by the NIC a request came in on;
- with one ISL shut on spine1 (its CLI over SSH, as an operator), leaf1 routes over spine2 alone (the
  product's driver reading ``show ip route``) and every path is up again;
- ``lab down`` leaves nothing of the site, FRR daemons included.
Every wait polls a real condition to a deadline.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import labsupport
import lslab
import pytest
import sitelab

from racfg.catalog import parse_port
from racfg.switches import SwitchSession
from racfg_lab import frr, lifecycle, names
from racfg_lab.state import site_dir
from racfg_lab.teardown import leftovers

pytestmark = [pytest.mark.lab]

SITES = {"onyx": ("lsono", "198.18.81.0/24", "198.19.100.0/23"),
         "eos": ("lseos", "198.18.91.0/24", "198.19.112.0/23")}
FLOWS = 128  # UDP flows (source ports apart) that the leaf's L4 hash spreads over the spines
MIN_SHARE = 0.2  # each spine carries at least this share of them (binomial: 64 +- 6 expected)
PINGS = 40
CONVERGE_S = 90.0


@dataclass
class Fabric:
    platform: str
    site: sitelab.DeployedSite
    first_deploy: str  # what the first `racfg deploy` printed

    @property
    def lab(self) -> labsupport.LabHandle:
        return self.site.lab

    @property
    def name(self) -> str:
        return self.lab.site

    def node(self, suffix: str) -> str:
        return f"{self.name}-{suffix}"

    def addresses(self, host: str) -> dict[str, str]:
        """NIC -> address (no prefix length) of a host."""
        return {n.name: str(ipaddress.ip_interface(n.address).ip) for n in self.lab.host(host).nics}

    def leaf_of(self, address: str) -> str:
        return next(n.switch for h in self.lab.hosts() for n in h.nics if str(n.address.ip) == address)

    def ping(self, host: str, dst: str, src: str | None = None, count: int = 1, interval: str = "0.2") -> bool:
        argv = ["ping", "-M", "do", "-s", "8972", "-c", str(count), "-i", interval, "-W", "2", "-q", dst]
        return self.lab.exec(host, argv + (["-I", src] if src else []), check=False).returncode == 0

    def counter(self, node: str, ifname: str, what: str = "tx_packets") -> int:
        return int(self.lab.exec(node, ["cat", f"/sys/class/net/{ifname}/statistics/{what}"]).stdout)

    def spine_ports_to(self, leaf: str) -> dict[str, str]:
        """spine -> the veth of its ISL port towards ``leaf``."""
        out = {}
        for isl in self.lab.cluster.topology.isls:
            if isl.leaf == leaf:
                spine = self.lab.cluster.switches[isl.spine]
                parsed = parse_port(spine.platform, isl.spine_port, spine.model)
                out[isl.spine] = names.switch_port_ifname(parsed.index, parsed.lane)
        return out

    def isl(self, leaf: str, spine: str):
        return next(i for i in self.lab.cluster.topology.isls if i.leaf == leaf and i.spine == spine)

    def port_cli(self, port: str, *lines: str) -> list[str]:
        """Interface mode lines in the platform's own syntax."""
        return [f"interface ethernet {port}" if self.platform == "onyx" else f"interface {port}", *lines, "exit"]

    def leaf_routes(self, leaf: str):
        with SwitchSession(self.site.switch_target(leaf)) as session:
            return session.facts(routing=True).routes


def every_pair(fab: Fabric) -> list[tuple[str, str]]:
    """(GPU server, storage address): every GPU server to every storage node address."""
    return [(dgx.name, address) for dgx in fab.lab.hosts("dgx") for st in fab.lab.hosts("storage")
            for address in fab.addresses(st.name).values()]


def failing_pairs(fab: Fabric) -> list[tuple[str, str]]:
    return [(host, dst) for host, dst in every_pair(fab) if not fab.ping(host, dst)]


@pytest.fixture(scope="module", params=list(SITES))
def fab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fabric]:
    name, mgmt, data = SITES[request.param]
    directory = tmp_path_factory.mktemp(name)
    inventory = lslab.write_small_leafspine(directory, name, mgmt, data, request.param, dual_homed=True)
    with labsupport.running_lab(inventory) as handle:
        site = sitelab.DeployedSite(handle, directory / "state", inventory)
        first = site.racfg("deploy", str(inventory), "--yes")
        assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
        yield Fabric(request.param, site, first.stdout)


def test_first_deploy_converges_and_the_second_changes_nothing(fab: Fabric):
    verdict = next(line for line in fab.first_deploy.splitlines() if line.startswith("deploy: "))
    assert " changed=" in verdict and " failed=0 unreachable=0" in verdict, verdict
    second = fab.site.racfg("deploy", str(fab.site.inventory), "--yes")
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-2000:]
    verdict = next(line for line in second.stdout.splitlines() if line.startswith("deploy: "))
    assert verdict.startswith("deploy: no changes") and " changed=0 failed=0 unreachable=0" in verdict, verdict
    for host in [h.name for h in fab.lab.hosts()] + list(fab.lab.cluster.switches):
        assert host in second.stdout, f"{host} is not in the second deploy's recap"


def test_jumbo_frames_pass_between_every_gpu_server_and_every_storage_node(fab: Fabric):
    pairs = every_pair(fab)
    across = [(h, a) for h, a in pairs if fab.leaf_of(a) != fab.leaf_of(fab.addresses(h)["data0"])]
    assert len(pairs) == 6 and len(across) == 3, pairs  # half of them cross the spines
    sitelab.wait_for("9000-byte pings between every GPU server and storage address", lambda: not failing_pairs(fab),
                     CONVERGE_S)


def test_both_spines_carry_cross_leaf_traffic(fab: Fabric):
    leaf2 = fab.node("leaf2")
    ports = fab.spine_ports_to(leaf2)
    assert len(ports) == 2, ports
    dst = fab.addresses(fab.node("st2"))["data0"]
    before = {spine: fab.counter(spine, ifname) for spine, ifname in ports.items()}
    script = (f"import socket\nfor p in range({FLOWS}):\n s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
              f" s.bind(('', 30000+p)); s.sendto(b'x'*64, ('{dst}', 9)); s.close()\n")
    fab.lab.exec(fab.node("dgx1"), ["python3", "-c", script])
    spread = {spine: fab.counter(spine, ifname) - before[spine] for spine, ifname in ports.items()}
    assert sum(spread.values()) >= FLOWS, f"{FLOWS} flows leaf1 -> leaf2 should all cross a spine: {spread}"
    assert all(n >= MIN_SHARE * FLOWS for n in spread.values()), f"ECMP should use both spines: {spread}"


def test_a_dual_homed_host_has_a_route_per_nic_and_answers_by_the_nic_a_request_came_in_on(fab: Fabric):
    st1, own = fab.node("st1"), fab.addresses(fab.node("st1"))
    assert set(own) == {"data0", "data1"} and fab.leaf_of(own["data0"]) != fab.leaf_of(own["data1"])
    rules = json.loads(fab.lab.exec(st1, ["ip", "-j", "rule"]).stdout)
    for nic, address in own.items():
        table = next(r["table"] for r in rules if r.get("src") == address)
        routes = json.loads(fab.lab.exec(st1, ["ip", "-j", "route", "show", "table", str(table)]).stdout)
        gateway = str(next(ipaddress.ip_interface(n.address).network for n in fab.lab.host(st1).nics
                           if n.name == nic)[1])
        assert any(r.get("gateway") == gateway and r["dev"] == nic for r in routes), (nic, table, routes)
        assert all(r["dev"] == nic for r in routes), (nic, table, routes)
    # from each of its addresses, across the spines to a GPU server on the other leaf
    for nic, address in own.items():
        far = fab.node("dgx2") if fab.leaf_of(address) == fab.node("leaf1") else fab.node("dgx1")
        sitelab.wait_for(f"{st1} {nic} -> {far} across the spines",
                         lambda a=address, f=far: fab.ping(st1, fab.addresses(f)["data0"], src=a), CONVERGE_S)
    # a request to each address comes in by that NIC (from the other leaf, across the spines); the
    # replies leave by it too, not by the NIC whose subnet the requester is in
    for nic, other in (("data1", "data0"), ("data0", "data1")):
        sender = fab.node("dgx1") if fab.leaf_of(own[nic]) == fab.node("leaf2") else fab.node("dgx2")
        before = {n: fab.counter(st1, n) for n in own}
        assert fab.ping(sender, own[nic], count=PINGS, interval="0.02"), (sender, own[nic])
        sent = {n: fab.counter(st1, n) - before[n] for n in own}
        assert sent[nic] >= PINGS and sent[other] < PINGS / 2, f"replies to {own[nic]} by NIC: {sent}"


def test_an_isl_shut_on_one_spine_leaves_every_path_up_through_the_other(fab: Fabric):
    leaf1, spine1, spine2 = fab.node("leaf1"), fab.node("spine1"), fab.node("spine2")
    shut = fab.isl(leaf1, spine1)
    remote = str(ipaddress.ip_interface(fab.lab.host(fab.node("dgx2")).nics[0].address).network)
    via_spine2 = str(fab.isl(leaf1, spine2).spine_address.ip)

    def one_path_left() -> bool:
        route = fab.leaf_routes(leaf1).routes.get(remote)
        return route is not None and [h.address for h in route.next_hops] == [via_spine2]

    fab.site.switch_cli(fab.port_cli(shut.spine_port, "shutdown"), save=False, switch=spine1)
    try:
        sitelab.wait_for(f"{leaf1}: {remote} through {spine2} alone", one_path_left, CONVERGE_S)
        sitelab.wait_for("every GPU server to storage path up again", lambda: not failing_pairs(fab), CONVERGE_S)
        ports = fab.spine_ports_to(leaf1)
        before = fab.counter(spine2, ports[spine2])
        for host, dst in every_pair(fab):
            if fab.leaf_of(dst) == leaf1 and fab.leaf_of(fab.addresses(host)["data0"]) != leaf1:
                assert fab.ping(host, dst, count=5, interval="0.05"), (host, dst)
        assert fab.counter(spine2, ports[spine2]) - before >= 5, "the traffic to leaf1 should cross spine2"
    finally:
        fab.site.switch_cli(fab.port_cli(shut.spine_port, "no shutdown"), save=False, switch=spine1)


def test_lab_down_leaves_nothing_of_the_site(fab: Fabric):
    lifecycle.down(fab.site.inventory)
    assert leftovers(fab.name) == []
    assert frr.stray_pids(site_dir(fab.name)) == []
    assert not site_dir(fab.name).exists()


IB_TWO_TIER = Path(__file__).with_name("ibleafspine.yaml")


@pytest.fixture(scope="module")
def ib() -> Iterator[labsupport.LabHandle]:
    """The InfiniBand two-tier site up (no deploy: its hosts' addresses set as the fabric role sets them)."""
    with labsupport.running_lab(IB_TWO_TIER) as handle:
        for host in handle.hosts():
            for nic in host.nics:
                handle.exec(host.name, ["ip", "link", "set", nic.name, "mtu", "4092", "up"])
                handle.exec(host.name, ["ip", "addr", "replace", str(nic.address), "dev", nic.name])
        yield handle


def test_an_infiniband_two_tier_site_stands_in_as_routed_ethernet_over_both_spines(ib: labsupport.LabHandle):
    address = {h.name: str(ipaddress.ip_interface(h.nics[0].address).ip) for h in ib.hosts()}
    leaf_of = {h.name: h.nics[0].switch for h in ib.hosts()}

    def multipath(leaf: str, dst: str) -> bool:
        routes = json.loads(ib.exec(leaf, ["ip", "-j", "route", "show", f"{dst}/32"]).stdout)
        return len(routes) == 1 and len(routes[0].get("nexthops", [])) == 2

    for src in address:
        for dst in address:
            if leaf_of[src] != leaf_of[dst]:
                sitelab.wait_for(f"{leaf_of[src]}: {dst} over both spines",
                                 lambda lf=leaf_of[src], d=address[dst]: multipath(lf, d), CONVERGE_S)
    for src in address:  # one IPoIB subnet across the leaves: 4092-byte IP packets, DF, host to host
        for dst, ip_dst in address.items():
            if src != dst:
                argv = ["ping", "-M", "do", "-s", "4064", "-c", "1", "-W", "2", "-q", ip_dst]
                sitelab.wait_for(f"{src} -> {dst}", lambda s=src, a=argv: ib.exec(s, a, check=False).returncode == 0,
                                 CONVERGE_S)


def test_lab_down_of_the_infiniband_stand_in_leaves_nothing(ib: labsupport.LabHandle):
    lifecycle.down(IB_TWO_TIER)
    assert leftovers(ib.site) == []
    assert not site_dir(ib.site).exists()
