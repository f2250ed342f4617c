"""Switch automation against the virtual lab: real SSH to the emulated switches that `racfg lab up`
started on their management addresses, with the passwords the lab generated.

Own labs, so nothing collides with other suites on the machine: tests/switches/swlab.yaml (site
swlab: an Onyx SN2700 and an Arista 7368X, two DGX cabled to both; 198.18.40.0/24 + 198.19.40-41.0/24)
and tests/switches/swlab-ib.yaml (site swlabib: one SB7800; 198.18.41.0/24). Both are torn down
at the end of the module, also on failure.

State is checked where it lives: switch `show` output read with netmiko, the MTU of the switch-port
veths in the switch's network namespace (`ip -n`), and jumbo pings between lab hosts.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import labsupport as testing
import pytest
from netmiko import ConnectHandler

import racfg_lab
from racfg.switches import (
    ApplyResult,
    IntendedPort,
    IntendedSwitch,
    PfcFacts,
    SwitchDriver,
    SwitchFacts,
    SwitchTarget,
    apply_switch,
    get_driver,
)
from racfg.switches.intent import intended_for

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / ".venv" / "bin"
INVENTORY = Path(__file__).with_name("swlab.yaml")
IB_INVENTORY = Path(__file__).with_name("swlab-ib.yaml")
SITE, IB_SITE = "swlab", "swlabib"
JUMBO = ["ping", "-M", "do", "-s", "8972", "-c", "1", "-W", "1"]
SMALL = ["ping", "-c", "1", "-W", "1"]
# (switch, host NIC, address of dgx01, address of dgx02) per fabric path
PATHS = {"swonyx": ("data0", "198.19.40.11", "198.19.40.12"), "sweos": ("data1", "198.19.41.11", "198.19.41.12")}
CABLED = {"swonyx": ["1/1", "1/2"], "sweos": ["Ethernet1/1", "Ethernet1/2"]}


# --- labs -------------------------------------------------------------------------------------

def _lab(inventory: Path) -> Iterator[testing.LabHandle]:
    # fresh: no switch startup config left from an earlier run
    with testing.running_lab(inventory) as handle:
        yield handle


@pytest.fixture(scope="module")
def swlab() -> Iterator[testing.LabHandle]:
    yield from _lab(INVENTORY)


@pytest.fixture(scope="module")
def iblab() -> Iterator[testing.LabHandle]:
    yield from _lab(IB_INVENTORY)


@pytest.fixture(scope="module")
def rendered(swlab: testing.LabHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return testing.render(INVENTORY, tmp_path_factory.mktemp("swlab-rendered"))


# --- helpers ----------------------------------------------------------------------------------

def connect(lab: testing.LabHandle, name: str):
    """netmiko's own platform driver on the switch's management address, lab password."""
    sw = lab.cluster.switches[name]
    password = racfg_lab.switch_password(lab.site, name)
    conn = ConnectHandler(device_type=get_driver(sw.platform).device_type, host=sw.spec.mgmt,
                          username=sw.spec.credentials.username, password=password, secret=password,
                          fast_cli=True, timeout=10, conn_timeout=10)
    conn.enable()
    return conn


def show(lab: testing.LabHandle, name: str, *commands: str) -> list[str]:
    conn = connect(lab, name)
    try:
        return [str(conn.send_command(c)) for c in commands]
    finally:
        conn.disconnect()


def configure(lab: testing.LabHandle, name: str, lines: list[str]) -> str:
    conn = connect(lab, name)
    try:
        out = str(conn.send_config_set(lines))
    finally:
        conn.disconnect()
    assert "%" not in out, out
    return out


def veth_mtu(lab: testing.LabHandle, switch: str, port: str) -> int:
    """MTU of the veth that is switch port ``port``, read in the switch's network namespace."""
    state = lab.state
    cable = next(c for c in state.cables if c.switch == switch and c.port == port)
    out = subprocess.run(["ip", "-n", state.switches[switch].netns, "-j", "link", "show", cable.switch_ifname],
                         check=True, capture_output=True, text=True).stdout
    return int(json.loads(out)[0]["mtu"])


def port_mtus(lab: testing.LabHandle) -> dict[str, int]:
    return {f"{sw}:{port}": veth_mtu(lab, sw, port) for sw, ports in CABLED.items() for port in ports}


def pings(lab: testing.LabHandle, argv: list[str]) -> dict[str, bool]:
    """dgx01 -> dgx02 across each switch: did it answer?"""
    return {sw: lab.exec("dgx01", [*argv, peer], check=False).returncode == 0 for sw, (_, _, peer) in PATHS.items()}


Run = testing.PlaybookResult


def playbook(rendered: Path, *args: str) -> Run:
    """switches.yml by plain ansible-playbook, the lab's switch passwords in a private extra-vars file."""
    return testing.run_playbook(rendered, "switches.yml", *args, timeout=300,
                                overrides=racfg_lab.connection_overrides(SITE))


# --- 1. netmiko, each platform, on lab switches -----------------------------------------------

@pytest.mark.parametrize(("name", "banner", "iface", "port", "mtu"), [
    ("swonyx", "Product name                  : Onyx", "interface ethernet 1/2", "1/2", 4000),
    ("sweos", "Arista DCS-7368X", "interface Ethernet1/2", "Ethernet1/2", 4000),
])
def test_netmiko_connecthandler_on_lab_switch(swlab, name, banner, iface, port, mtu):
    platform = swlab.cluster.switches[name].platform
    assert get_driver(platform).device_type == {"onyx": "mellanox_mlnxos", "eos": "arista_eos"}[platform]
    conn = connect(swlab, name)
    try:
        assert banner in conn.send_command("show version")
        out = conn.send_config_set([iface, f"mtu {mtu}" + (" force" if platform == "onyx" else ""),
                                    "description netmiko-lab", "exit"])
        assert "%" not in out, out
        assert veth_mtu(swlab, name, port) == mtu  # the CLI acted on the data plane
        shown = conn.send_command(get_driver(platform).show["interfaces"])
        facts = get_driver(platform).parse_interfaces(shown)
        assert facts[port].mtu == mtu and facts[port].description == "netmiko-lab"
        assert "%" in conn.send_command("show no-such-thing")
        out = conn.send_config_set([iface, "mtu 1500" + (" force" if platform == "onyx" else ""),
                                    "no description", "exit"])
        assert "%" not in out, out
    finally:
        conn.disconnect()
    assert veth_mtu(swlab, name, port) == 1500


def test_lab_gives_the_modular_eos_switch_its_port_layout(swlab):
    """cli.json carries ports_per_slot, so the 7368X names its 128 ports Ethernet1/1 .. Ethernet16/8."""
    config = json.loads(Path(swlab.state.switches["sweos"].config).read_text())
    assert config["ports_per_slot"] == swlab.cluster.switches["sweos"].model.ports_per_slot == 8
    facts = get_driver("eos").parse_interfaces(show(swlab, "sweos", "show interfaces | json")[0])
    assert len(facts) == 128 and "Ethernet16/8" in facts and "Ethernet17/1" not in facts


def test_netmiko_connecthandler_on_lab_ib_switch(iblab):
    assert get_driver("mlnxos-ib").device_type == "mellanox_mlnxos"
    conn = connect(iblab, "swib")
    try:
        assert "MLNX-OS" in conn.send_command("show version")
        out = conn.send_config_set(["interface ib 1/1", "mtu 2K", "description netmiko-lab", "exit"])
        assert "%" not in out, out
        block = conn.send_command("show interfaces ib").split("\n\n")[0]
        assert re.search(r"MTU\s+:\s+2048", block) and "netmiko-lab" in block, block
    finally:
        conn.disconnect()
    assert veth_mtu(iblab, "swib", "1/1") == 2048


# --- 2 + 4. check mode, apply (MTU, planted PFC/RoCE removed), idempotence, jumbo ping ---------

PLANT = {
    "swonyx": ["dcb priority-flow-control enable force", "dcb priority-flow-control priority 3 enable", "roce",
               "interface ethernet 1/1 dcb priority-flow-control mode on force"],
    "sweos": ["interface Ethernet1/1", "priority-flow-control on", "priority-flow-control priority 3 no-drop", "exit"],
}


def lossless_state(lab: testing.LabHandle) -> dict[str, str]:
    """What each switch shows of PFC/RoCE: its running config lines about it, and its PFC show."""
    onyx_running, onyx_pfc = show(lab, "swonyx", "show running-config", "show dcb priority-flow-control")
    eos_running, eos_pfc = show(lab, "sweos", "show running-config", "show priority-flow-control | json")
    onyx_state = re.search(r"^PFC\s+:\s+(\w+)", onyx_pfc, re.M)
    return {
        "swonyx": lossless_lines(onyx_running),
        "swonyx_pfc": onyx_state.group(1) if onyx_state else onyx_pfc[:200],
        "sweos": lossless_lines(eos_running),
        "sweos_pfc": ",".join(sorted(p for p, s in json.loads(eos_pfc)["interfaceStatuses"].items() if s["enabled"])),
    }


def lossless_lines(running: str) -> str:
    return "\n".join(m.group(0).strip() for m in re.finditer(r"^.*\b(priority-flow-control|roce)\b.*$", running, re.M))


@dataclass
class Converge:
    planted: dict[str, str] = field(default_factory=dict)
    before_mtu: dict[str, int] = field(default_factory=dict)
    before_small: dict[str, bool] = field(default_factory=dict)
    before_jumbo: dict[str, bool] = field(default_factory=dict)
    check: Run | None = None
    after_check_mtu: dict[str, int] = field(default_factory=dict)
    after_check_lossless: dict[str, str] = field(default_factory=dict)
    after_check_jumbo: dict[str, bool] = field(default_factory=dict)
    apply: Run | None = None
    after_mtu: dict[str, int] = field(default_factory=dict)
    after_lossless: dict[str, str] = field(default_factory=dict)
    after_jumbo: dict[str, bool] = field(default_factory=dict)
    again: Run | None = None


@pytest.fixture(scope="module")
def converge(swlab: testing.LabHandle, rendered: Path) -> Converge:
    """Plant PFC/RoCE, give the hosts MTU 9000, then: check run, apply run, second run, pings between."""
    seen = Converge()
    for name, lines in PLANT.items():
        configure(swlab, name, lines)
    seen.planted = lossless_state(swlab)
    try:
        for index, host in enumerate(("dgx01", "dgx02")):
            for nic, *addresses in PATHS.values():
                swlab.exec(host, ["ip", "addr", "add", f"{addresses[index]}/24", "dev", nic])
                swlab.exec(host, ["ip", "link", "set", nic, "mtu", "9000", "up"])
        seen.before_mtu = port_mtus(swlab)
        seen.before_small = pings(swlab, SMALL)
        seen.before_jumbo = pings(swlab, JUMBO)

        seen.check = playbook(rendered, "--check", "--diff")
        seen.after_check_mtu = port_mtus(swlab)
        seen.after_check_lossless = lossless_state(swlab)
        seen.after_check_jumbo = pings(swlab, JUMBO)

        seen.apply = playbook(rendered, "--diff")
        seen.after_mtu = port_mtus(swlab)
        seen.after_lossless = lossless_state(swlab)
        seen.after_jumbo = pings(swlab, JUMBO)

        seen.again = playbook(rendered)
    finally:  # hosts' data NICs as the lab made them: no address, MTU 1500
        for host in ("dgx01", "dgx02"):
            for nic, *_ in PATHS.values():
                swlab.exec(host, ["ip", "addr", "flush", "dev", nic], check=False)
                swlab.exec(host, ["ip", "link", "set", nic, "mtu", "1500"], check=False)
    print(f"\nswitches.yml on the swlab lab: check {seen.check.seconds:.1f} s, apply {seen.apply.seconds:.1f} s, "
          f"no-change re-run {seen.again.seconds:.1f} s")
    return seen


def test_planted_lossless_config_is_on_the_switches(converge: Converge):
    assert converge.planted["swonyx_pfc"] == "enabled"
    assert "roce" in converge.planted["swonyx"] and "priority-flow-control" in converge.planted["swonyx"]
    assert converge.planted["sweos_pfc"] == "Ethernet1/1"
    assert "priority-flow-control priority 3 no-drop" in converge.planted["sweos"]


def test_check_mode_reports_a_diff_and_changes_nothing(converge: Converge):
    run = converge.check
    assert run is not None and run.rc == 0, run and run.output[-3000:]
    assert {h: r["changed"] for h, r in run.recap.items()} == {"swonyx": 1, "sweos": 1}, run.output[-3000:]
    assert "-interface ethernet 1/1 mtu 1500 force" in run.output
    assert "+interface ethernet 1/1 mtu 9000 force" in run.output
    assert "+   mtu 9000" in run.output and "-   mtu 1500" in run.output
    assert "-roce" in run.output  # the planted RoCE shows as a removal in the diff
    assert converge.after_check_mtu == converge.before_mtu == dict.fromkeys(converge.before_mtu, 1500)
    assert converge.after_check_lossless == converge.planted
    assert converge.after_check_jumbo == {"swonyx": False, "sweos": False}


def test_playbook_configures_mtu_and_removes_planted_pfc_and_roce(converge: Converge):
    run = converge.apply
    assert run is not None and run.rc == 0, run and run.output[-3000:]
    assert {h: r["changed"] for h, r in run.recap.items()} == {"swonyx": 1, "sweos": 1}, run.output[-3000:]
    assert converge.after_mtu == dict.fromkeys(converge.before_mtu, 9000)
    assert converge.after_lossless == {"swonyx": "", "swonyx_pfc": "disabled", "sweos": "", "sweos_pfc": ""}


def test_jumbo_ping_across_the_switch_fails_before_and_passes_after(converge: Converge):
    assert converge.before_small == {"swonyx": True, "sweos": True}  # the path works; only jumbo frames fail
    assert converge.before_jumbo == {"swonyx": False, "sweos": False}
    assert converge.after_jumbo == {"swonyx": True, "sweos": True}


def test_second_run_reports_no_change(converge: Converge):
    run = converge.again
    assert run is not None and run.rc == 0, run and run.output[-3000:]
    assert {h: r["changed"] for h, r in run.recap.items()} == {"swonyx": 0, "sweos": 0}, run.output[-3000:]
    assert all(r["failed"] == 0 for r in run.recap.values())


# --- 3. restart keeps saved config, drops unsaved ------------------------------------------------

@pytest.mark.parametrize(("name", "lines", "port", "spare"), [
    ("swonyx", ["interface ethernet 1/2 mtu 1500 force", "interface ethernet 1/5 description unsaved"],
     "1/2", "1/5"),
    ("sweos", ["interface Ethernet1/2", "mtu 1500", "exit", "interface Ethernet3/1", "description unsaved", "exit"],
     "Ethernet1/2", "Ethernet3/1"),
])
def test_switch_restart_keeps_saved_and_drops_unsaved(swlab, converge, name, lines, port, spare):
    platform = swlab.cluster.switches[name].platform
    driver = get_driver(platform)
    configure(swlab, name, lines)  # not saved
    assert veth_mtu(swlab, name, port) == 1500
    pid = swlab.state.switches[name].pid
    racfg_lab.restart_switch(SITE, name)
    assert swlab.state.switches[name].pid not in (None, pid)
    facts = driver.parse_interfaces(show(swlab, name, driver.show["interfaces"])[0])
    assert facts[port].mtu == 9000 and facts[port].description.endswith(":data0" if name == "swonyx" else ":data1")
    assert facts[spare].description == ""
    assert veth_mtu(swlab, name, port) == 9000  # the saved config is on the data plane again


# --- 5. bad input ----------------------------------------------------------------------------

def test_unreachable_switch_is_named_and_the_other_is_still_configured(swlab, rendered, converge):
    configure(swlab, "swonyx", ["interface ethernet 1/1 mtu 1500 force"])  # drift to repair
    assert veth_mtu(swlab, "swonyx", "1/1") == 1500
    racfg_lab.stop_switch(SITE, "sweos")
    try:
        run = playbook(rendered)
    finally:
        racfg_lab.start_switch(SITE, "sweos")
    assert run.rc != 0
    assert run.recap["sweos"]["failed"] == 1, run.output[-3000:]
    assert run.recap["swonyx"] == {"ok": 2, "changed": 1, "unreachable": 0, "failed": 0}, run.output[-3000:]
    assert re.search(r"fatal: \[sweos\].*switch sweos: cannot reach 198\.18\.40\.3:22 over SSH", run.output)
    assert "Traceback" not in run.output
    assert veth_mtu(swlab, "swonyx", "1/1") == 9000


def test_wrong_password_is_an_authentication_error_without_traceback(rendered, converge):
    secret = "not-the-lab-password-5d1e"
    run = playbook(rendered, "--limit", "swonyx", "-e", f"switch_password={secret}")
    assert run.rc != 0 and run.recap["swonyx"]["failed"] == 1
    assert "switch swonyx (198.18.40.2:22): authentication failed for user 'admin'" in run.output
    assert "Traceback" not in run.output
    assert secret not in run.output


@pytest.mark.parametrize(("name", "port", "line", "error", "undone"), [
    ("swonyx", "1/1", "mtu 9500 force", "MTU 9500 is out of range", "were undone: running config unchanged"),
    ("sweos", "Ethernet1/1", "mtu 9500", "MTU 9500 is out of range", "aborted, running config unchanged"),
])
def test_rejected_command_is_reported_with_the_line(swlab, rendered, converge, name, port, line, error, undone):
    ports = json.dumps({"racfg_switch_ports": [
        {"port": port, "description": "rejected-test", "mtu": 9500, "speed_gbps": 100.0}]})
    run = playbook(rendered, "--limit", name, "-e", ports)
    assert run.rc != 0 and run.recap[name]["failed"] == 1, run.output[-3000:]
    assert f"switch {name}: command '{line}' rejected: %" in run.output, run.output[-3000:]
    assert error and error in run.output and undone in run.output
    assert "Traceback" not in run.output
    driver = get_driver(swlab.cluster.switches[name].platform)
    facts = driver.parse_interfaces(show(swlab, name, driver.show["interfaces"])[0])
    assert facts[port].description != "rejected-test" and facts[port].mtu == 9000
    assert veth_mtu(swlab, name, port) == 9000


# --- 6. apply by postcondition; PFC/RoCE removed wherever the switch keeps them ------------------
# On ports no other test here touches (no cable: nothing on the data plane), not saved, and put back
# to factory state by the test itself, also on failure. The test's own reads and config go through
# one operator session per switch (a second SSH session next to the apply's, as a person would have).

SPARE = {"swonyx": ["1/7", "1/8", "1/9"], "sweos": ["Ethernet4/1", "Ethernet4/2", "Ethernet4/3"]}
FACTORY = {  # lines that put a spare port back as the switch came (MTU 1500, up, no description, no PFC)
    "swonyx": lambda port: [f"interface ethernet {port} {line}" for line in (
        "mtu 1500 force", "no description", "no shutdown", "no dcb priority-flow-control mode force")],
    "sweos": lambda port: [f"interface {port}", "mtu 1500", "no description", "no shutdown",
                           "no priority-flow-control", *(f"no priority-flow-control priority {p} no-drop"
                                                         for p in range(8)), "exit"],
}
ONYX_NO_LOSSLESS = ["no roce", "no dcb priority-flow-control enable force",
                    *(f"no dcb priority-flow-control priority {p} enable" for p in range(8))]


@dataclass
class Operator:
    """An SSH session of the test's own on one lab switch: plant config, read facts, put it back."""

    name: str
    conn: Any
    driver: SwitchDriver

    def configure(self, lines: list[str]) -> None:
        out = str(self.conn.send_config_set(lines))
        assert "%" not in out, out

    def show(self, command: str) -> str:
        return str(self.conn.send_command(command))

    def facts(self) -> SwitchFacts:
        """What the switch reports now, parsed as racfg parses it (not the apply's own re-read)."""
        return self.driver.facts_from_raw(self.name, {key: self.show(cmd) for key, cmd in self.driver.show.items()})

    def restore_factory(self) -> None:
        lines = [line for port in SPARE[self.name] for line in FACTORY[self.name](port)]
        self.configure(lines + (ONYX_NO_LOSSLESS if self.name == "swonyx" else []))


@contextmanager
def operator(lab: testing.LabHandle, name: str) -> Iterator[Operator]:
    conn = connect(lab, name)
    try:
        yield Operator(name, conn, get_driver(lab.cluster.switches[name].platform))
    finally:
        conn.disconnect()


def switch_target(lab: testing.LabHandle, name: str) -> SwitchTarget:
    """How racfg reaches the lab switch: its management address and the password the lab generated."""
    sw = lab.cluster.switches[name]
    return SwitchTarget(name, sw.platform, sw.spec.mgmt, 22, sw.spec.credentials.username,
                        racfg_lab.switch_password(lab.site, name), timeout=30, known_hosts=lab.known_hosts)


def spare_intent(lab: testing.LabHandle, name: str, *ports: IntendedPort) -> IntendedSwitch:
    """The switch's intent from the inventory (no PFC, no RoCE) with only ``ports`` managed, so an
    apply touches no cabled port whatever the tests before it left there."""
    return replace(intended_for(lab.cluster, name), ports={p.port: p for p in ports})


def test_apply_fails_with_expected_and_actual_when_the_switch_keeps_another_value(swlab, rendered):
    """The switch accepts the description line but keeps it without its trailing blank (netmiko
    sends a line without trailing blanks, and the CLI strips them too): the change was pushed
    without an error, yet the port is not as intended. The play must fail naming the port,
    expected and actual, and must not save."""
    wanted = "dgx09:data0 "
    ports = {name: [{"port": SPARE[name][0], "description": wanted, "mtu": 9000, "speed_gbps": 100.0}]
             for name in SPARE}
    extra = json.dumps({"racfg_switch_ports": "{{ postcondition_ports[inventory_hostname] }}",
                        "postcondition_ports": ports})
    after: dict[str, SwitchFacts] = {}
    try:
        run = playbook(rendered, "-e", extra)
    finally:
        for name in SPARE:
            with operator(swlab, name) as op:
                after[name] = op.facts()
                op.restore_factory()
    assert run.rc != 0, run.output[-3000:]
    assert {h: r["failed"] for h, r in run.recap.items()} == {"swonyx": 1, "sweos": 1}, run.output[-3000:]
    for name, (port, *_) in SPARE.items():
        assert (f"switch {name}: after applying, the switch is not as intended: {port} description: "
                f"Expected: {wanted!r} Actual: {wanted.strip()!r}") in run.output, run.output[-3000:]
        pushed = after[name].interfaces[port]
        assert pushed.description == wanted.strip() and pushed.mtu == 9000  # the lines were accepted ...
        assert after[name].config_saved is False  # ... and a failed apply saved nothing
    assert "Traceback" not in run.output


def test_apply_verifies_port_and_removes_onyx_roce_and_pfc_independently(swlab):
    """RoCE without PFC, then PFC without RoCE: each is removed by an apply on its own. The apply's
    result carries the facts it re-read after the push (MTU, admin state, description, no PFC)."""
    name = "swonyx"
    check_port, pfc_port = SPARE[name][0], SPARE[name][1]
    plants = {
        "roce without pfc": ["roce", "dcb priority-flow-control priority 3 enable"],
        "pfc without roce": ["dcb priority-flow-control enable force",
                             f"interface ethernet {pfc_port} dcb priority-flow-control mode on force"],
    }
    # The port changes ride along in the first round; the second one has PFC alone to change.
    want = spare_intent(swlab, name, IntendedPort(check_port, "postcondition-check", 9000, None, admin_up=False))
    seen: dict[str, tuple[PfcFacts, ApplyResult]] = {}
    with operator(swlab, name) as op:
        try:
            for case, lines in plants.items():
                op.configure(lines)
                planted = op.facts().pfc  # round 2: also shows that round 1's removal held
                seen[case] = (planted, apply_switch(switch_target(swlab, name), want, save=False))
            after = op.facts()
        finally:
            op.restore_factory()
    assert not after.pfc.any_enabled, after.pfc
    assert (after.interfaces[check_port].mtu, after.interfaces[check_port].admin_up,
            after.interfaces[check_port].description) == (9000, False, "postcondition-check")

    planted, result = seen["roce without pfc"]
    assert planted.roce and planted.lossless_priorities == (3,)
    assert not planted.enabled and not any(planted.ports.values())
    assert result.facts is not None and not result.facts.pfc.any_enabled, result.facts  # verified on re-read facts
    port = result.facts.interfaces[check_port]  # before the push: MTU 1500, up, no description
    assert (port.mtu, port.admin_up, port.description) == (9000, False, "postcondition-check")
    assert "RoCE off" in result.changes and "PFC priority 3 off" in result.changes, result.changes

    planted, result = seen["pfc without roce"]
    assert planted.enabled and planted.ports.get(pfc_port), planted
    assert not planted.roce and not planted.lossless_priorities, planted  # round 1's removal held
    assert result.facts is not None and not result.facts.pfc.any_enabled, result.facts
    assert result.changes == [f"{pfc_port} PFC off", "PFC off (global)"], result.changes


def test_eos_no_drop_priorities_are_removed_on_every_port(swlab):
    """EOS keeps no-drop priorities per port, also where PFC is off: a priority on a port with PFC on,
    one on a port with PFC off (RoCE config without PFC) and PFC on a port without any priority (PFC
    without RoCE) are all removed by one apply, and a second apply has nothing left to do."""
    name = "sweos"
    on_nodrop, off_nodrop, pfc_only = SPARE[name]
    plant = [f"interface {on_nodrop}", "priority-flow-control on", "priority-flow-control priority 3 no-drop", "exit",
             f"interface {off_nodrop}", "priority-flow-control priority 4 no-drop", "exit",
             f"interface {pfc_only}", "priority-flow-control on", "exit"]
    intended = spare_intent(swlab, name)
    with operator(swlab, name) as op:
        try:
            op.configure(plant)
            planted, running_before = op.facts().pfc, op.show("show running-config")
            result = apply_switch(switch_target(swlab, name), intended, save=False)
            after, running_after = op.facts(), op.show("show running-config")
            pfc_text = op.show("show priority-flow-control")
            again = apply_switch(switch_target(swlab, name), intended, check=True)
        finally:
            op.restore_factory()
    assert planted.port_priorities == {on_nodrop: (3,), off_nodrop: (4,)}, planted
    assert {p for p, on in planted.ports.items() if on} == {on_nodrop, pfc_only}
    assert "priority-flow-control priority 4 no-drop" in running_before
    assert not after.pfc.any_enabled and after.pfc.port_priorities == {}, after.pfc
    assert lossless_lines(running_after) == "", running_after
    assert not any(port in pfc_text for port in SPARE[name]), pfc_text
    assert {f"{on_nodrop} priority 3 lossy", f"{off_nodrop} priority 4 lossy", f"{on_nodrop} PFC off",
            f"{pfc_only} PFC off"} <= set(result.changes), result.changes
    assert result.facts is not None and not result.facts.pfc.any_enabled
    assert not again.changed, again.changes


# --- 6. host keys (issue 51) ------------------------------------------------------------------

def racfg_run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "racfg"), *args], capture_output=True, text=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL)


def switch_results(proc: subprocess.CompletedProcess[str], name: str) -> list[dict[str, Any]]:
    results = [r for r in json.loads(proc.stdout)["results"] if r["target"] == name]
    assert results, proc.stdout[-2000:] + proc.stderr[-2000:]
    return results


def test_switch_host_keys_are_checked_as_hosts_are(swlab, tmp_path):
    """The lab records its switches' keys in its known_hosts by management address, as its hosts'.
    A switch whose key no known_hosts file lists is `racfg validate` exit 3 naming the switch, its
    key type and fingerprint and the command that records it; `racfg hostkey accept` with the
    fingerprint read on the switch itself (its key file, out of band) records it in the user's
    known_hosts and validate reads the switch; a re-keyed switch is refused naming both keys, and
    accept never replaces the known key. An unknown key also stops a deploy before any change and a
    drift, both exit 3. HOME is the test's own (no write to /root/.ssh)."""
    import os

    name, mgmt = "swonyx", "198.18.40.2"
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "RACFG_STATE_DIR": str(tmp_path / "state"), "RACFG_PLAIN": "1"}
    lab_file = racfg_lab.lab_known_hosts(SITE)
    assert lab_file is not None
    recorded = lab_file.read_text()
    assert f"\n{mgmt} ssh-ed25519 " in f"\n{recorded}" and "\n198.18.40.3 ssh-ed25519 " in f"\n{recorded}"
    key_file = swlab.state.switches[name].config.replace("cli.json", "ssh_host_ed25519_key.pub")
    fingerprint = subprocess.run(["ssh-keygen", "-lf", key_file], check=True, capture_output=True,
                                 text=True).stdout.split()[1]  # read on the switch itself
    validate = ("validate", str(INVENTORY), "--limit", name, "--format", "json")
    old_key = None
    try:
        lab_file.write_text("".join(line for line in recorded.splitlines(True) if not line.startswith(f"{mgmt} ")))
        unknown = racfg_run(env, *validate)
        assert unknown.returncode == 3, unknown.stdout[-2000:] + unknown.stderr[-2000:]
        messages = {r["message"] for r in switch_results(unknown, name) if r["status"] == "error"}
        assert any(f"switch {name}: host key of {mgmt} is not known: ssh-ed25519 {fingerprint}" in m
                   and f"racfg hostkey accept INVENTORY {name} --fingerprint {fingerprint}" in m
                   for m in messages), messages

        # deploy refuses before any change (a key exchange per switch in its preflight), drift cannot read it
        deploy = racfg_run(env, "deploy", str(INVENTORY), "--yes", "--limit", name, "--tags", "switch")
        assert deploy.returncode == 3, deploy.stdout[-2000:] + deploy.stderr[-2000:]
        assert f"switch {name}: host key of {mgmt} is not known: ssh-ed25519 {fingerprint}" in deploy.stderr
        assert not list((tmp_path / "state").glob("runs/*-deploy")), "a refused deploy leaves no run"
        drift = racfg_run(env, "drift", str(INVENTORY), "--limit", name, "--format", "json")
        assert drift.returncode == 3, drift.stdout[-2000:] + drift.stderr[-2000:]
        assert f"host key of {mgmt} is not known: ssh-ed25519 {fingerprint}" in drift.stdout + drift.stderr, (
            drift.stdout[-2000:] + drift.stderr[-2000:])

        accepted = racfg_run(env, "hostkey", "accept", str(INVENTORY), name, "--fingerprint", fingerprint)
        assert accepted.returncode == 0, accepted.stdout + accepted.stderr
        assert (home / ".ssh" / "known_hosts").read_text().startswith(f"{mgmt} ssh-ed25519 ")
        known = racfg_run(env, *validate)
        assert known.returncode in (0, 1), known.stdout[-2000:] + known.stderr[-2000:]
        assert all(r["status"] != "error" for r in switch_results(known, name)), switch_results(known, name)

        lab_file.write_text(recorded)
        old_key = racfg_lab.rekey_switch(SITE, name)
        new_fingerprint = subprocess.run(["ssh-keygen", "-lf", key_file], check=True, capture_output=True,
                                         text=True).stdout.split()[1]
        changed = racfg_run(env, *validate)
        assert changed.returncode == 3, changed.stdout[-2000:] + changed.stderr[-2000:]
        messages = {r["message"] for r in switch_results(changed, name) if r["status"] == "error"}
        assert any(f"host key of {mgmt} does not match the known one: presented ssh-ed25519 {new_fingerprint}, "
                   f"known ssh-ed25519 {fingerprint} ({lab_file}:" in m for m in messages), messages
        users = (home / ".ssh" / "known_hosts").read_text()
        refused = racfg_run(env, "hostkey", "accept", str(INVENTORY), name, "--fingerprint", new_fingerprint)
        assert refused.returncode == 3 and "does not match the known one" in refused.stderr, refused.stderr
        assert (home / ".ssh" / "known_hosts").read_text() == users  # never replaced
    finally:
        lab_file.write_text(recorded)
        if old_key is not None:
            racfg_lab.rekey_switch(SITE, name, old_key)
