"""The lab's data plane tells the truth: real LLDP on both ends of every cable, a cable swap that
both ends report, cables shaped both ways, and switch counters that are the ports' own.

Own lab (tests/lab/dataplane.yaml: site lablldp, 198.18.52.0/24 + 198.19.52.0/24; an Onyx switch
with every host and an EOS switch with the DGX second NICs), brought up once for the module and
always torn down. The hosts run lldpd through the common role (``--tags common``), as a deploy
leaves them, with a 1 s LLDP interval so that every wait below is a few seconds.
Every wait polls for the expected state with a deadline; none sleeps and hopes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import labsupport as testing
import pytest

from racfg.switches import read_facts
from racfg.switches.session import SwitchSession, SwitchTarget
from racfg_lab import api, status
from racfg_lab.switchcli import lldp

LAB = pytest.mark.lab  # every test here but the recorded-output ones
pytestmark = pytest.mark.solo  # the shaped cables' rates: measured with the machine to itself
REPO = Path(__file__).resolve().parents[2]
BIN = REPO / ".venv" / "bin"
INVENTORY = Path(__file__).with_name("dataplane.yaml")
FIXTURES = Path(__file__).with_name("fixtures")
SITE = "lablldp"
DEADLINE_S = 20.0  # LLDP every 1 s, TTL 4 s: a new wiring shows in a few seconds
T = TypeVar("T")


@pytest.fixture(scope="module")
def dlab() -> Iterator[testing.LabHandle]:
    with testing.running_lab(INVENTORY) as handle:
        yield handle


@pytest.fixture(scope="module")
def common_role(dlab: testing.LabHandle, tmp_path_factory: pytest.TempPathFactory) -> testing.PlaybookResult:
    """The common role on every host, once: it installs, configures and starts lldpd. (Its second
    run changing nothing, lldp.yml included, is tests/roles' check of site.yml; not repeated here.)"""
    out = testing.render(INVENTORY, tmp_path_factory.mktemp("rendered"))
    run = testing.run_playbook(out, "site.yml", "--tags", "common", "--limit", "cluster",
                               "-e", "racfg_lldp_tx_interval=1", timeout=600, overrides=dlab.overrides)
    assert run.rc == 0, run.output[-3000:]
    print(f"\ncommon role on {SITE}: {run.seconds:.1f} s")
    return run


def eventually(read: Callable[[], T], want: Callable[[T], bool], what: str, deadline: float = DEADLINE_S) -> T:
    """Poll ``read`` until ``want`` holds or the deadline passes (then fail with the last reading)."""
    end = time.monotonic() + deadline
    while True:
        value = read()
        if want(value):
            return value
        if time.monotonic() > end:
            pytest.fail(f"{what}: not reached in {deadline:.0f} s; last reading: {value!r}")
        time.sleep(0.5)


def switch_target(lab: testing.LabHandle, name: str) -> SwitchTarget:
    sw = lab.cluster.switches[name]
    return SwitchTarget(name, sw.platform, str(sw.spec.mgmt), 22, sw.spec.credentials.username,
                        api.switch_password(lab.site, name), known_hosts=lab.known_hosts)


def switch_lldp(lab: testing.LabHandle, name: str) -> dict[str, tuple[str, str]]:
    """{port: (neighbor system, neighbor port)} as racfg reads it from the switch over SSH."""
    return {port: (n.system_name, n.port) for port, n in read_facts(switch_target(lab, name)).lldp.items()}


def host_lldp(lab: testing.LabHandle, host: str) -> dict[str, tuple[str, str]]:
    """{NIC: (switch, switch port)} from the host's own lldpd, read over SSH."""
    out = lab.ssh(host, "lldpcli -f json0 show neighbors").stdout
    return {n.interface: (n.system_name, n.port_id) for n in lldp.parse_neighbors(out)}


def wiring(lab: testing.LabHandle) -> dict[str, dict[str, tuple[str, str]]]:
    """What LLDP must show per switch, from the lab's record of where each cable lands now."""
    want: dict[str, dict[str, tuple[str, str]]] = {name: {} for name in lab.cluster.switches}
    for cable in lab.state.cables:
        want[cable.switch][cable.port] = (cable.host, cable.nic)
    return want


def device_port(lab: testing.LabHandle, switch: str, port: str) -> str:
    return {"onyx": f"Eth{port}", "eos": port}[lab.cluster.switches[switch].platform]


def host_view(lab: testing.LabHandle, host: str) -> dict[str, tuple[str, str]]:
    """What the host's lldpd must show: each NIC -> (switch, platform port name)."""
    return {c.nic: (c.switch, device_port(lab, c.switch, c.port)) for c in lab.state.cables if c.host == host}


# --- lldpcli output, as recorded in this lab (no lab needed) --------------------------------------

def test_parse_recorded_lldpcli_output() -> None:
    """``lldpcli -f json0 show neighbors`` recorded on a lab switch (sw1, two storage hosts
    announcing by ifname) and on a lab host (stor01, hearing sw1's Eth1/17)."""
    switch = lldp.parse_neighbors((FIXTURES / "lldpcli-json0-neighbors-switch.json").read_text())
    assert [(n.interface, n.system_name, n.port_id, n.port_id_type) for n in switch] == [
        ("swp17", "stor01", "data0", "ifname"), ("swp18", "stor02", "data0", "ifname")]
    assert all(n.chassis_id_type == "mac" and n.ttl == 4 and n.capabilities for n in switch)
    host = lldp.parse_neighbors((FIXTURES / "lldpcli-json0-neighbors-host.json").read_text())
    assert [(n.interface, n.system_name, n.port_id, n.port_id_type, n.port_description) for n in host] == [
        ("data0", "sw1", "Eth1/17", "local", "Eth1/17")]
    assert host[0].capabilities.get("Bridge") is True
    assert lldp.parse_neighbors("") == [] and lldp.parse_neighbors("not json") == []
    assert lldp.read_neighbors(FIXTURES / "no-such.socket") == []  # no lldpd (as on IB): an empty table
    assert not lldp.runs_lldp("mlnxos-ib") and lldp.runs_lldp("onyx") and lldp.runs_lldp("eos")


def test_switch_lldpd_config_names_ports_as_the_platform_does() -> None:
    text = lldp.daemon_config("sw1", {"swp17": "Eth1/17", "swp1": "Eth1/1"}, 1)
    assert text.splitlines() == ["configure system hostname sw1", "configure lldp tx-interval 1",
                                 "configure ports swp1 lldp portidsubtype local Eth1/1 description Eth1/1",
                                 "configure ports swp17 lldp portidsubtype local Eth1/17 description Eth1/17"]


# --- LLDP ---------------------------------------------------------------------------------------

@LAB
def test_lldp_on_both_ends_matches_the_cabling(dlab, common_role) -> None:
    assert set(common_role.recap) == {h.name for h in dlab.hosts()}
    want = wiring(dlab)
    assert want["sw1"]["1/1"] == ("dgx01", "data0") and want["sweos"]["Ethernet1/2"] == ("dgx02", "data1")
    for name in dlab.cluster.switches:
        eventually(lambda name=name: switch_lldp(dlab, name), lambda got, name=name: got == want[name],
                   f"LLDP of {name}")
    for host in dlab.hosts():
        expected = host_view(dlab, host.name)
        eventually(lambda host=host: host_lldp(dlab, host.name), lambda got, e=expected: got == e,
                   f"LLDP of {host.name}")


@pytest.fixture
def swapped(dlab, common_role) -> Iterator[tuple[str, str]]:
    """dgx01:data0 (sw1 1/1) and stor01:data0 (sw1 1/17) swapped, port settings set apart first;
    put back and reset afterwards, also when the test fails."""
    api.set_link(SITE, "sw1", "1/1", mtu=9000)
    api.set_link(SITE, "sw1", "1/17", rate_mbit=300)
    try:
        api.swap_cables(SITE, ("dgx01", "data0"), ("stor01", "data0"))
        yield "dgx01", "stor01"
    finally:
        api.unswap_cables(SITE, ("dgx01", "data0"), ("stor01", "data0"))
        api.set_link(SITE, "sw1", "1/1", mtu=1500)
        api.set_link(SITE, "sw1", "1/17", rate_mbit=1000)


@LAB
def test_swap_is_reported_by_both_ends_and_undone(dlab, swapped) -> None:
    a, b = swapped
    cables = {c.key: c for c in dlab.state.cables}
    assert (cables["dgx01:data0"].port, cables["stor01:data0"].port) == ("1/17", "1/1")
    assert cables["dgx01:data0"].swapped_with == "stor01:data0"
    st = status.collect(dlab.state)
    by_key = {f"{c.host}:{c.nic}": c for c in st.cables}
    assert by_key["dgx01:data0"].swapped_with == "stor01:data0" and any("swapped" in n for n in st.notes)
    # the port's settings stayed with the port, not with the moved cable
    assert by_key["stor01:data0"].switch_mtu == 9000 and by_key["dgx01:data0"].switch_mtu == 1500
    assert round(by_key["dgx01:data0"].rate_mbit) == 300 and round(by_key["dgx01:data0"].host_rate_mbit) == 300
    assert round(by_key["stor01:data0"].rate_mbit) == 1000

    want = wiring(dlab)
    assert want["sw1"]["1/1"] == ("stor01", "data0") and want["sw1"]["1/17"] == ("dgx01", "data0")
    eventually(lambda: switch_lldp(dlab, "sw1"), lambda got: got == want["sw1"], "sw1 LLDP after the swap")
    eventually(lambda: host_lldp(dlab, a)["data0"], lambda got: got == ("sw1", "Eth1/17"), f"{a} LLDP after the swap")
    eventually(lambda: host_lldp(dlab, b)["data0"], lambda got: got == ("sw1", "Eth1/1"), f"{b} LLDP after the swap")

    # the same swap again puts them back
    api.swap_cables(SITE, ("dgx01", "data0"), ("stor01", "data0"))
    assert not any(c.swapped_with for c in dlab.state.cables)
    back = wiring(dlab)
    assert back["sw1"]["1/1"] == ("dgx01", "data0")
    eventually(lambda: switch_lldp(dlab, "sw1"), lambda got: got == back["sw1"], "sw1 LLDP after undo")
    eventually(lambda: host_lldp(dlab, a)["data0"], lambda got: got == ("sw1", "Eth1/1"), f"{a} LLDP after undo")


@LAB
def test_swap_refuses_a_cable_already_swapped_elsewhere(dlab, swapped) -> None:
    from racfg.errors import UsageError

    with pytest.raises(UsageError, match="already swapped"):
        api.swap_cables(SITE, ("dgx01", "data0"), ("dgx02", "data0"))


# --- shaping and counters -------------------------------------------------------------------------

@pytest.fixture
def pair(dlab) -> Iterator[tuple[str, str, str]]:
    """stor01 and dgx01 with their inventory data0 addresses (MTU 1500); stor01's cable at 200 Mbit/s."""
    hosts = ("stor01", "dgx01")
    for name in hosts:
        nic = dlab.host(name).nics[0]
        dlab.exec(name, ["ip", "addr", "replace", str(nic.address), "dev", nic.name])
    api.set_link(SITE, "stor01", "data0", rate_mbit=200)
    try:
        yield "stor01", "dgx01", str(dlab.host("dgx01").nics[0].address.ip)
    finally:
        api.set_link(SITE, "stor01", "data0", rate_mbit=1000)
        for name in hosts:
            dlab.exec(name, ["ip", "addr", "flush", "dev", "data0"], check=False)


def iperf3(lab: testing.LabHandle, client: str, server: str, address: str, *args: str) -> dict:
    lab.exec(server, ["iperf3", "-s", "-D", "-1", "-B", address])
    eventually(lambda: lab.exec(server, ["ss", "-Htln", "sport = :5201"]).stdout, bool, "iperf3 server listening",
               deadline=10)
    return json.loads(lab.exec(client, ["iperf3", "-c", address, "-J", *args], timeout=60).stdout)


@LAB
def test_switch_ports_queue_their_models_buffer_and_keep_it_at_a_new_rate(dlab) -> None:
    """sw1 is an SN2700 (Spectrum, 16 MiB), sweos a 7368X (Tomahawk 3, 64 MiB): each port gets its
    model's buffer; a host NIC's egress the default; a new lab rate keeps the port's buffer."""
    from racfg_lab import fabric

    def buffers() -> dict[str, int | None]:
        state = dlab.state
        out = {}
        for cable in state.cables:
            if cable.host == "dgx01":
                out[cable.switch] = fabric.read_buffer_bytes(state.switches[cable.switch].netns, cable.switch_ifname)
                out[f"dgx01:{cable.nic}"] = fabric.read_buffer_bytes(state.hosts["dgx01"].netns, cable.nic)
        return out

    mib = 1024 * 1024
    want = {"sw1": 16 * mib, "sweos": 64 * mib, "dgx01:data0": 16 * mib, "dgx01:data1": 16 * mib}

    def near(got: dict[str, int | None]) -> bool:  # tc keeps the queue as microseconds at the rate
        return got.keys() == want.keys() and all(abs((got[k] or 0) - v) <= 1024 for k, v in want.items())

    assert near(buffers()), buffers()
    api.set_link(dlab.site, "dgx01", "data1", rate_mbit=300)
    try:
        assert near(buffers()), buffers()
    finally:
        api.set_link(dlab.site, "dgx01", "data1", rate_mbit=1000)


@LAB
@pytest.mark.parametrize("direction", ["storage sends", "storage receives"])
def test_a_shaped_cable_limits_both_directions(dlab, pair, direction) -> None:
    storage, dgx, dgx_address = pair
    reverse = ["-R"] if direction == "storage receives" else []
    result = iperf3(dlab, storage, dgx, dgx_address, "-t", "3", *reverse)
    mbit = result["end"]["sum_received"]["bits_per_second"] / 1e6
    print(f"\niperf3 {direction} through a 200 Mbit/s cable: {mbit:.1f} Mbit/s")
    assert 180 <= mbit <= 200, f"Expected: 180-200 Mbit/s ({direction}) Actual: {mbit:.1f} Mbit/s"


def onyx_counters(lab: testing.LabHandle, port: str) -> dict[str, dict[str, int]]:
    with SwitchSession(switch_target(lab, "sw1")) as session:
        data = json.loads(session.show("show interfaces ethernet | json-print"))
    entry = next(e for e in data if e["header"] == f"Eth{port}")
    return {side: {k: int(v) for k, v in entry[side].items()} for side in ("Rx", "Tx")}


@LAB
def test_switch_counters_are_the_ports_own(dlab, pair) -> None:
    storage, dgx, dgx_address = pair
    sent = 20 * 1024 * 1024
    before_in, before_out = onyx_counters(dlab, "1/17"), onyx_counters(dlab, "1/1")
    result = iperf3(dlab, storage, dgx, dgx_address, "-n", str(sent))
    after_in, after_out = onyx_counters(dlab, "1/17"), onyx_counters(dlab, "1/1")
    # what reached dgx01's socket (iperf3 -n stops counting once the sender has written its bytes)
    received = result["end"]["sum_received"]["bytes"]
    assert received >= sent // 2, result["end"]["sum_received"]
    assert after_in["Rx"]["bytes"] - before_in["Rx"]["bytes"] >= received, (received, before_in, after_in)
    assert after_out["Tx"]["bytes"] - before_out["Tx"]["bytes"] >= received, (received, before_out, after_out)
    # veths carry GSO frames of up to 64 KiB: at least that many packets
    assert after_in["Rx"]["packets"] - before_in["Rx"]["packets"] >= received // 65536

    # UDP at twice the 200 Mbit/s of stor01's port: the switch drops at that port's egress
    before = onyx_counters(dlab, "1/17")
    iperf3(dlab, dgx, storage, str(dlab.host(storage).nics[0].address.ip), "-u", "-b", "400M", "-t", "2")
    after = onyx_counters(dlab, "1/17")
    assert after["Tx"]["discard packets"] > before["Tx"]["discard packets"], (before, after)
