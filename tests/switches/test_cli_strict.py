"""The emulated switch CLI is as strict as the real ones where racfg relies on it (issue 11, point 7).

One test per rule, on the engine directly (no SSH, no lab): what a real switch refuses, the lab
refuses too, so a driver that sends it fails in the lab as it would on site.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racfg_lab.switchcli.config import CabledPort, CliConfig
from racfg_lab.switchcli.engine import CliSession
from racfg_lab.switchcli.switch import EmulatedSwitch

MODELS = {"onyx": ("SN2700", 32), "eos": ("7060CX-32S", 32), "mlnxos-ib": ("SB7800", 36)}


def cli(tmp_path: Path, platform: str) -> CliSession:
    """A CLI session in config mode on a fresh switch with one cabled port and no data plane."""
    model, count = MODELS[platform]
    pw = tmp_path / "password"
    pw.write_text("x")
    first = "Ethernet1" if platform == "eos" else "1/1"
    cfg = CliConfig(name="sw1", platform=platform, model=model, ports_count=count, listen="127.0.0.1", ssh_port=0,
                    username="admin", password_file=str(pw), state_dir=tmp_path / "state",
                    ports={first: CabledPort(None, 100.0, "dgx01", "data0")})
    session = CliSession(EmulatedSwitch(cfg))
    for line in ("enable", "configure terminal"):
        assert run(session, line) == ""
    return session


def run(session: CliSession, line: str) -> str:
    return session.handle(line)[0]


def test_onyx_slot_must_exist(tmp_path):
    s = cli(tmp_path, "onyx")
    assert run(s, "interface ethernet 2/5") == "% Interface ethernet 2/5 does not exist"
    assert s.mode == "config"
    assert run(s, "interface ethernet 1/5") == ""
    assert s.port == "1/5"


def test_eos_slot_must_exist_on_a_fixed_switch(tmp_path):
    s = cli(tmp_path, "eos")
    assert run(s, "interface Ethernet2/5") == "% Interface does not exist: Ethernet2/5"
    assert run(s, "interface Ethernet5") == "" and s.port == "Ethernet5"


def test_onyx_mtu_on_an_enabled_port_needs_force(tmp_path):
    s = cli(tmp_path, "onyx")
    run(s, "interface ethernet 1/1")
    refused = run(s, "mtu 9000")
    assert refused.startswith("% Cannot change MTU") and "force" in refused
    assert s.config.ports["1/1"].mtu == 1500
    assert run(s, "mtu 9000 force") == ""
    assert s.config.ports["1/1"].mtu == 9000
    assert "interface ethernet 1/1 mtu 9000 force" in run(s, "show running-config")


def test_onyx_mtu_on_a_shut_port_needs_no_force(tmp_path):
    s = cli(tmp_path, "onyx")
    run(s, "interface ethernet 1/2")
    assert run(s, "shutdown") == ""
    assert run(s, "mtu 9000") == ""
    assert s.config.ports["1/2"].mtu == 9000


def test_onyx_speed_on_an_enabled_port_needs_force(tmp_path):
    s = cli(tmp_path, "onyx")
    assert run(s, "interface ethernet 1/1 speed 40G").startswith("% Cannot change speed")
    assert run(s, "interface ethernet 1/1 speed 40G force") == ""
    assert s.config.ports["1/1"].speed_gbps == 40.0


def test_onyx_refuses_infiniband_values(tmp_path):
    s = cli(tmp_path, "onyx")
    run(s, "interface ethernet 1/1")
    assert run(s, "speed edr force").startswith("% Unrecognized command")
    assert run(s, "mtu 4K force").startswith("% Unrecognized command")


def test_ib_mtu_takes_ib_values_only(tmp_path):
    s = cli(tmp_path, "mlnxos-ib")
    run(s, "interface ib 1/1")
    assert run(s, "mtu 9000").startswith("% Invalid MTU 9000")
    assert run(s, "mtu 4096").startswith("% Invalid MTU 4096")
    assert run(s, "mtu 2K") == ""
    assert s.config.ports["1/1"].mtu == 2048
    assert "interface ib 1/1 mtu 2K" in run(s, "show running-config")


def test_ib_speed_takes_ib_names_only(tmp_path):
    s = cli(tmp_path, "mlnxos-ib")
    run(s, "interface ib 1/1")
    assert run(s, "speed 100G").startswith("% Invalid speed 100G")
    assert run(s, "speed fdr") == ""
    assert s.config.ports["1/1"].speed_gbps == 56.0


def test_ib_slot_must_exist(tmp_path):
    s = cli(tmp_path, "mlnxos-ib")
    assert run(s, "interface ib 2/1") == "% Interface ib 2/1 does not exist"


def test_eos_no_drop_priorities_exist(tmp_path):
    """Configured per interface, shown in the running config and in ``show priority-flow-control``."""
    s = cli(tmp_path, "eos")
    run(s, "interface Ethernet3")
    assert run(s, "priority-flow-control priority 3 no-drop") == ""
    assert run(s, "priority-flow-control priority 9 no-drop").startswith("% Invalid priority 9")
    running = run(s, "show running-config")
    assert "interface Ethernet3\n   priority-flow-control priority 3 no-drop\n!" in running
    status = json.loads(run(s, "show priority-flow-control | json"))["interfaceStatuses"]["Ethernet3"]
    assert status["priorities"] == [3] and status["enabled"] is False
    text = run(s, "show priority-flow-control")
    assert any(line.split()[:1] == ["Et3"] and "3" in line.split()[1:] for line in text.splitlines())
    assert run(s, "no priority-flow-control priority 3 no-drop") == ""
    assert "priority 3" not in run(s, "show running-config")


@pytest.mark.parametrize("platform", ["onyx", "eos", "mlnxos-ib"])
def test_unknown_port_word_is_refused(tmp_path, platform):
    s = cli(tmp_path, platform)
    keyword = {"onyx": "interface ethernet", "eos": "interface", "mlnxos-ib": "interface ib"}[platform]
    assert run(s, f"{keyword} 0/0").startswith("%")
