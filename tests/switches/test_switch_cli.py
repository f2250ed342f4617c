"""Against the emulated switch CLI over real SSH: netmiko's own drivers, apply, restart, errors."""

from __future__ import annotations

import pytest
from netmiko import ConnectHandler

from racfg.switches import (
    IntendedPort,
    IntendedSwitch,
    SwitchAuthError,
    SwitchConfigError,
    SwitchTarget,
    SwitchUnreachable,
    apply_switch,
    get_driver,
    read_facts,
)
from tests.switches.conftest import PASSWORD

CONFIG = {
    "onyx": (["interface ethernet 1/2", "mtu 9000 force", "description test", "exit"], "show interfaces ethernet"),
    "eos": (["interface Ethernet1/2", "mtu 9000", "description test"], "show interfaces"),
    "mlnxos-ib": (["interface ib 1/2", "mtu 2K", "description test", "exit"], "show interfaces ib"),
}


def connect(sw, password: str = PASSWORD):
    return ConnectHandler(device_type=get_driver(sw.platform).device_type, host="127.0.0.1", port=sw.port,
                          username="admin", password=password, fast_cli=True)


def target(sw, password: str = PASSWORD) -> SwitchTarget:
    return SwitchTarget(sw.name, sw.platform, "127.0.0.1", sw.port, "admin", password, timeout=5,
                        known_hosts=sw.known_hosts)


def intended(sw, mtu: int = 9000, port: str | None = None) -> IntendedSwitch:
    first = port or ("Ethernet1/1" if sw.platform == "eos" else "1/1")
    mtu = 4096 if sw.platform == "mlnxos-ib" and mtu == 9000 else mtu
    model, count, per_slot = {"onyx": ("SN2700", 32, 0), "eos": ("7368X", 128, 8), "mlnxos-ib": ("SB7800", 36, 0)}[
        sw.platform]
    return IntendedSwitch(sw.name, sw.platform, model, count, per_slot,
                          {first: IntendedPort(first, "dgx01:data0", mtu, 100.0)})


def test_netmiko_drivers_unmodified(any_switch):
    lines, show = CONFIG[any_switch.platform]
    conn = connect(any_switch)
    conn.enable()
    out = conn.send_config_set(lines)
    assert "%" not in out
    facts = get_driver(any_switch.platform).parse_interfaces(conn.send_command(
        show + {"onyx": " | json-print", "eos": " | json", "mlnxos-ib": ""}[any_switch.platform]))
    port = "Ethernet1/2" if any_switch.platform == "eos" else "1/2"
    assert facts[port].description == "test" and facts[port].mtu in (9000, 2048)
    assert "%" in conn.send_command("show bogus-thing")
    conn.disconnect()


@pytest.mark.parametrize("platform", ["onyx", "mlnxos-ib"])
def test_mellanox_login_reads_to_the_first_prompt_instead_of_waiting_for_a_quiet_channel(
        switch_factory, platform, monkeypatch):
    """netmiko's generic session start, which its MLNX-OS driver inherits, waits until the channel has
    been quiet for 2 s (read_channel_timing); racfg's MLNX-OS connection reads to the first prompt.
    Otherwise it is netmiko's driver: its prompt, enable mode and paging, then commands as usual."""
    from netmiko.base_connection import BaseConnection
    from netmiko.mellanox.mellanox_mlnxos_ssh import MellanoxMlnxosSSH

    from racfg.switches.session import SwitchSession

    sw = switch_factory(platform)

    def quiet_wait(*args: object, **kwargs: object) -> str:
        raise AssertionError("the login waited for a quiet channel")

    with monkeypatch.context() as login:
        login.setattr(BaseConnection, "read_channel_timing", quiet_wait)
        session = SwitchSession(target(sw)).__enter__()
    try:
        assert isinstance(session.conn, MellanoxMlnxosSSH)
        assert session.conn.base_prompt.strip() == "sw1 [standalone: master]" and session.conn.check_enable_mode()
        assert session.facts().interfaces
    finally:
        session.close()


def test_apply_check_then_apply_then_idempotent(any_switch):
    want = intended(any_switch)
    check = apply_switch(target(any_switch), want, check=True)
    assert check.changed and check.commands and check.before != check.after
    assert apply_switch(target(any_switch), want, check=True).changed  # check changed nothing
    applied = apply_switch(target(any_switch), want)
    assert applied.changed and applied.saved
    assert not apply_switch(target(any_switch), want).changed
    port = next(iter(want.ports))
    assert read_facts(target(any_switch)).interfaces[port].mtu == want.ports[port].mtu


@pytest.mark.parametrize("platform", ["onyx", "eos"])
def test_planted_pfc_and_roce_are_removed(switch_factory, platform):
    sw = switch_factory(platform)
    conn = connect(sw)
    conn.enable()
    if platform == "onyx":
        plant = ["dcb priority-flow-control enable force", "dcb priority-flow-control priority 3 enable", "roce",
                 "interface ethernet 1/5 dcb priority-flow-control mode on force"]
    else:
        plant = ["interface Ethernet2/1", "priority-flow-control on", "priority-flow-control priority 3 no-drop"]
    assert "%" not in conn.send_config_set(plant)
    conn.disconnect()
    assert read_facts(target(sw)).pfc.any_enabled
    result = apply_switch(target(sw), intended(sw))
    assert any("PFC" in c or "RoCE" in c for c in result.changes)
    assert not read_facts(target(sw)).pfc.any_enabled
    assert not apply_switch(target(sw), intended(sw)).changed


def test_eos_change_goes_through_a_session(switch_factory):
    sw = switch_factory("eos")
    result = apply_switch(target(sw), intended(sw))
    assert "+   mtu 9000" in result.session_diff and "system:/running-config" in result.session_diff


@pytest.mark.parametrize("platform", ["onyx", "eos"])
def test_restart_keeps_saved_and_drops_unsaved(switch_factory, platform):
    sw = switch_factory(platform)
    apply_switch(target(sw), intended(sw))  # saved
    lines, _ = CONFIG[platform]
    conn = connect(sw)
    conn.enable()
    conn.send_config_set(lines)  # unsaved
    conn.disconnect()
    sw.restart()
    facts = read_facts(target(sw))
    saved_port = next(iter(intended(sw).ports))
    unsaved_port = "Ethernet1/2" if platform == "eos" else "1/2"
    assert facts.interfaces[saved_port].mtu == 9000
    assert facts.interfaces[unsaved_port].description == "" and facts.interfaces[unsaved_port].mtu == 1500


def test_wrong_password_is_an_auth_error(switch_factory):
    sw = switch_factory("onyx")
    with pytest.raises(SwitchAuthError, match="authentication failed for user 'admin'"):
        read_facts(target(sw, "wrong"))


def test_unreachable_names_the_address():
    from tests.switches.conftest import free_port

    port = free_port()
    with pytest.raises(SwitchUnreachable, match=f"127.0.0.1:{port}"):
        read_facts(SwitchTarget("swx", "eos", "127.0.0.1", port, "admin", "x", timeout=2))


def test_rejected_command_is_reported_and_undone(switch_factory):
    sw = switch_factory("onyx")
    with pytest.raises(SwitchConfigError) as err:
        apply_switch(target(sw), intended(sw, mtu=9500))  # Onyx accepts 1500-9216
    assert err.value.rejected == "mtu 9500 force"
    assert "description dgx01:data0" in err.value.applied and "undone" in str(err.value)
    assert read_facts(target(sw)).interfaces["1/1"].description == ""  # fully old


def test_eos_rejected_command_aborts_the_session(switch_factory):
    sw = switch_factory("eos")
    with pytest.raises(SwitchConfigError, match="aborted, running config unchanged"):
        apply_switch(target(sw), intended(sw, mtu=9500))  # EOS max 9214
    assert read_facts(target(sw)).interfaces["Ethernet1/1"].description == ""


def test_eos_eapi_answers_from_the_cli_state(tmp_path):
    """eAPI (HTTPS JSON-RPC) in the same process as the SSH CLI: one running config, EOS's errors."""
    import json as _json

    import pyeapi

    from tests.switches.conftest import free_port, make_switch

    sw = make_switch(tmp_path, "eos")
    config = _json.loads(sw.config.read_text())
    config["eapi_port"] = free_port()
    sw.config.write_text(_json.dumps(config))
    sw.start()
    try:
        conn = connect(sw)
        conn.enable()
        assert "%" not in conn.send_config_set(["interface Ethernet1/3", "description over-ssh"])
        conn.disconnect()
        node = pyeapi.connect(transport="https", host="127.0.0.1", port=config["eapi_port"], username="admin",
                              password=PASSWORD, return_node=True)
        described = node.enable("show interfaces description")[0]["result"]["interfaceDescriptions"]
        assert described["Ethernet1/3"]["description"] == "over-ssh"
        assert node.run_commands(["show hostname"], encoding="text")[0]["output"].startswith("Hostname: sw1")
        with pytest.raises(pyeapi.eapilib.CommandError) as bad:
            node.run_commands(["show bogus-thing"])
        assert bad.value.error_code == 1002
        with pytest.raises(pyeapi.eapilib.CommandError) as text_only:
            node.run_commands(["show running-config diffs"])  # no JSON form on EOS either
        assert text_only.value.error_code == 1003
        assert node.config(["interface Ethernet1/4", "mtu 9000"]) == [{}, {}]
        assert read_facts(target(sw)).interfaces["Ethernet1/4"].mtu == 9000  # SSH sees the eAPI change
        with pytest.raises(pyeapi.eapilib.ConnectionError):
            pyeapi.connect(transport="https", host="127.0.0.1", port=config["eapi_port"], username="admin",
                           password="wrong", return_node=True).enable("show version")
    finally:
        sw.stop()
