"""The lab's EOS switch answers the clients EOS operators use (issue 15), unmodified, over the real
management network of a lab (tests/switches/eoslab.yaml: site eoslab, one 7060CX-32S, two DGX):

- Arista's Ansible collection (arista.eos, network_cli): eos_facts (all subsets and the interfaces
  and lldp_interfaces resources), eos_command (text and ``| json``), eos_config in check mode with
  diff (nothing changes), a real change, then the same change again reporting no change;
- pyeapi over HTTPS eAPI: JSON and text, EOS's error 1002, one state with the SSH CLI;
- ANTA: ``anta nrfu`` with the catalog ``racfg render`` wrote, all pass on the deployed switch,
  then the named tests fail after an MTU fault typed on the switch CLI and after a cable swap;
- scrapli's arista_eos driver: a session and show commands.

The lab is torn down at the end of the module, also on failure. ``racfg validate``'s switch checks
run on the same faults and must fail exactly where ANTA's tests do.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import labsupport as testing
import pyeapi
import pytest
from scrapli.driver.core import EOSDriver

import racfg_lab
from racfg.switches import SwitchTarget, apply_switch, read_facts
from racfg.switches.intent import intended_for
from racfg_lab import api
from tests.switches.eos_clients import EosSwitch, run_ansible, run_anta

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
INVENTORY = Path(__file__).with_name("eoslab.yaml")
SWITCH = "eos1"
LLDP_DEADLINE_S = 60.0


@pytest.fixture(scope="module")
def lab() -> Iterator[testing.LabHandle]:
    with testing.running_lab(INVENTORY) as handle:
        yield handle


@pytest.fixture(scope="module")
def rendered(lab: testing.LabHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return testing.render(INVENTORY, tmp_path_factory.mktemp("eoslab-rendered"))


@pytest.fixture(scope="module")
def hosts_announce_lldp(lab: testing.LabHandle, rendered: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """lldpd on the hosts, set up by the deploy's own tasks (roles/common/tasks/lldp.yml) and nothing
    else of the deploy, so the switch hears each host and NIC on the port it is cabled to."""
    play = tmp_path_factory.mktemp("eoslab-play") / "lldp.yml"
    play.write_text("- hosts: cluster\n  gather_facts: false\n  tasks:\n"
                    "    - ansible.builtin.include_role: {name: common, tasks_from: lldp.yml}\n")
    result = testing.run_playbook(rendered, str(play), "-e", "racfg_lldp_tx_interval=1", overrides=lab.overrides)
    assert result.rc == 0, result.output[-3000:]


@pytest.fixture(scope="module")
def eos(lab: testing.LabHandle, hosts_announce_lldp: None) -> EosSwitch:
    """The lab switch, deployed as racfg intends it (MTU, descriptions; saved)."""
    sw = lab.cluster.switches[SWITCH]
    password = racfg_lab.switch_password(lab.site, SWITCH)
    target = SwitchTarget(SWITCH, "eos", sw.spec.mgmt, 22, sw.spec.credentials.username, password, timeout=10,
                          known_hosts=lab.known_hosts)
    result = apply_switch(target, intended_for(lab.cluster, SWITCH))
    assert result.saved and not apply_switch(target, intended_for(lab.cluster, SWITCH)).changed
    return EosSwitch(SWITCH, sw.spec.mgmt, password, username=sw.spec.credentials.username)


@pytest.fixture(scope="module")
def catalog(rendered: Path) -> Path:
    return rendered / "anta-catalog.yml"


def node(sw: EosSwitch) -> pyeapi.client.Node:
    return pyeapi.connect(transport="https", host=sw.host, port=sw.eapi_port, username=sw.username,
                          password=sw.password, return_node=True)


def cli(sw: EosSwitch) -> EOSDriver:
    return EOSDriver(host=sw.host, port=sw.ssh_port, auth_username=sw.username, auth_password=sw.password,
                     auth_secondary=sw.password, auth_strict_key=False, transport="system", timeout_socket=10,
                     timeout_ops=30)


def validate_switch_failures(tmp: Path) -> set[str]:
    """The switch checks ``racfg validate`` fails on the lab now (its own run, as a user runs it)."""
    proc = subprocess.run([str(REPO / ".venv" / "bin" / "racfg"), "validate", str(INVENTORY), "--category",
                           "switches", "--format", "json"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RACFG_STATE_DIR": str(tmp / "state")})
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert not [r for r in report["results"] if r["status"] == "error"], proc.stdout[-2000:]
    return {r["check"] for r in report["results"] if r["status"] == "fail"}


def anta_until(tmp: Path, sw: EosSwitch, catalog: Path, done: Callable[[dict[str, str]], bool]) -> dict[str, str]:
    """ANTA's verdicts once ``done`` holds (LLDP takes a few seconds to follow the wiring), or at the deadline."""
    deadline = time.monotonic() + LLDP_DEADLINE_S
    verdicts = run_anta(tmp, sw, catalog)
    while not done(verdicts) and time.monotonic() < deadline:
        time.sleep(1)
        verdicts = run_anta(tmp, sw, catalog)
    return verdicts


def test_anta_catalog_passes_then_names_the_faults(lab, eos, catalog, tmp_path):
    expected = {"VerifyL2MTU", "VerifyInterfacesStatus", "VerifyInterfacesPFCCounters", "VerifyLLDPNeighbors",
                "VerifyRunningConfigDiffs", "VerifyEOSVersion"}
    verdicts = anta_until(tmp_path, eos, catalog, lambda v: set(v.values()) == {"success"})
    assert set(verdicts) == expected
    assert verdicts == dict.fromkeys(expected, "success")

    # MTU fault typed on the switch CLI (SSH), not saved: eAPI sees the same running config.
    with cli(eos) as conn:
        assert not conn.send_configs(["interface Ethernet1", "mtu 1500"]).failed
    try:
        verdicts = run_anta(tmp_path, eos, catalog)
        assert {t for t, r in verdicts.items() if r == "failure"} == {"VerifyL2MTU", "VerifyRunningConfigDiffs"}
        # racfg validate agrees: its switch checks fail exactly where ANTA's tests do
        assert validate_switch_failures(tmp_path) == {f"{SWITCH}/switches/port_mtu[Ethernet1]",
                                                      f"{SWITCH}/switches/config_saved"}
    finally:
        with cli(eos) as conn:
            assert not conn.send_configs(["interface Ethernet1", "mtu 9000"]).failed
    assert run_anta(tmp_path, eos, catalog)["VerifyL2MTU"] == "success"

    # Cabling fault: dgx01 and dgx02 swap switch ports; LLDP follows the wiring within seconds.
    a, b = ("dgx01", "data0"), ("dgx02", "data0")
    api.swap_cables(lab.site, a, b)
    try:
        verdicts = anta_until(tmp_path, eos, catalog, lambda v: v["VerifyLLDPNeighbors"] == "failure")
        assert {t for t, r in verdicts.items() if r == "failure"} == {"VerifyLLDPNeighbors"}
        # racfg validate names the same fault: both swapped ports' LLDP neighbours, and nothing else
        assert validate_switch_failures(tmp_path) == {f"{SWITCH}/switches/port_lldp_neighbour[Ethernet1]",
                                                      f"{SWITCH}/switches/port_lldp_neighbour[Ethernet2]"}
    finally:
        api.unswap_cables(lab.site, a, b)
    verdicts = anta_until(tmp_path, eos, catalog, lambda v: v["VerifyLLDPNeighbors"] == "success")
    assert verdicts["VerifyLLDPNeighbors"] == "success"


def test_pyeapi_json_text_errors_and_one_state_with_ssh(lab, eos):
    n = node(eos)
    version = n.enable("show version")[0]["result"]
    assert version["modelName"] == "DCS-7060CX-32S" and version["version"] == "4.30.0F"
    text = n.run_commands(["show hostname"], encoding="text")[0]["output"]
    assert text.startswith(f"Hostname: {SWITCH}")
    with pytest.raises(pyeapi.eapilib.CommandError) as err:
        n.run_commands(["show version", "show bogus-thing"])
    assert err.value.error_code == 1002
    assert err.value.output[-1] == {"errors": ["Invalid input (at token 1: 'bogus-thing')"]}
    assert err.value.output[1]["version"] == "4.30.0F"  # results up to the failing command (after pyeapi's enable)

    with pytest.raises(pyeapi.eapilib.ConnectionError):  # basic auth with the SSH password only
        pyeapi.connect(transport="https", host=eos.host, username=eos.username, password="wrong",
                       return_node=True).enable("show version")

    assert n.config(["interface Ethernet7", "description set-over-eapi"]) == [{}, {}]
    facts = read_facts(SwitchTarget(SWITCH, "eos", eos.host, 22, eos.username, eos.password, timeout=10,
                                    known_hosts=lab.known_hosts))
    assert facts.interfaces["Ethernet7"].description == "set-over-eapi"  # the SSH CLI sees it
    n.config(["interface Ethernet7", "no description"])


def test_scrapli_arista_eos_driver(lab, eos):
    with cli(eos) as conn:
        version = conn.send_command("show version")
        assert not version.failed and "Software image version: 4.30.0F" in version.result
        status = conn.send_command("show interfaces status")
        assert "Et1 " in status.result and "connected" in status.result
        assert "Invalid input" in conn.send_command("show bogus-thing").result


def test_arista_eos_collection(lab, eos, tmp_path):
    facts, commands = run_ansible(tmp_path, eos, [
        {"arista.eos.eos_facts": {"gather_subset": "all",
                                  "gather_network_resources": ["interfaces", "lldp_interfaces"]}},
        {"arista.eos.eos_command": {"commands": ["show version | json", "show interfaces status",
                                                 {"command": "show hostname", "output": "json"}]}},
    ])
    f = facts["ansible_facts"]
    assert f["ansible_net_hostname"] == SWITCH and f["ansible_net_version"] == "4.30.0F"
    assert f["ansible_net_model"] == "DCS-7060CX-32S" and f["ansible_net_filesystems"] == ["flash:", "file:"]
    assert f["ansible_net_interfaces"]["Ethernet1"]["mtu"] == 9000
    assert "interface Ethernet1" in f["ansible_net_config"]
    resources = {i["name"]: i for i in f["ansible_network_resources"]["interfaces"]}
    assert resources["Ethernet1"]["mtu"] == 9000 and resources["Ethernet1"]["description"] == "dgx01:data0"
    # gathered; empty as on a real EOS with LLDP at its defaults (no lldp lines in the running config)
    assert sorted(f["ansible_net_gather_network_resources"]) == ["interfaces", "lldp_interfaces"]
    assert f["ansible_network_resources"].get("lldp_interfaces", []) == []
    assert commands["stdout"][0]["version"] == "4.30.0F"
    assert commands["stdout"][1].startswith("Port ") and commands["stdout"][2] == {"fqdn": SWITCH, "hostname": SWITCH}

    change = {"arista.eos.eos_config": {"lines": ["description racfg-ansible"], "parents": ["interface Ethernet9"],
                                        "save_when": "modified"}}
    (checked,) = run_ansible(tmp_path, eos, [change], check=True)
    assert checked["changed"] and "+   description racfg-ansible" in checked["diff"]["prepared"]
    assert node(eos).enable("show interfaces description")[0]["result"][
        "interfaceDescriptions"]["Ethernet9"]["description"] == ""  # check mode changed nothing
    (applied,) = run_ansible(tmp_path, eos, [change])
    assert applied["changed"] and applied["commands"] == ["interface Ethernet9", "description racfg-ansible"]
    (again,) = run_ansible(tmp_path, eos, [change])
    assert not again["changed"]
    assert node(eos).run_commands(["show running-config diffs"], encoding="text")[0]["output"] == ""  # saved
