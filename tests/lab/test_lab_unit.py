"""Lab logic that needs no root: names, sizes, prerequisites and their message."""

from __future__ import annotations

import sys

import pytest

from racfg.errors import CannotRunError
from racfg.lab import drives, names, prereq
from racfg.lab.fabric import lab_rate_mbit, mgmt_gateway


def test_link_names_fit_the_kernel_limit() -> None:
    long_site = "a-very-long-site-name-indeed"
    assert len(names.mgmt_bridge(long_site)) <= 15
    assert len(names.mgmt_veth(long_site, "storage-node-0042")) <= 15
    assert len(names.switch_port_ifname(128, 4)) <= 15
    assert names.mgmt_veth("a", "x") != names.mgmt_veth("a", "y")


def test_netns_prefix_does_not_match_another_site() -> None:
    assert not names.netns("lab-two", "dgx01").startswith(names.netns_prefix("lab"))


def test_drive_sizes() -> None:
    assert drives.size_bytes("1G") == 1 << 30
    assert drives.size_bytes("256M") == 256 << 20
    assert drives.size_bytes("3.84TB") == int(3.84 * (1 << 40))


def test_lab_rate_scale() -> None:
    assert lab_rate_mbit(100, 1000) == 1000
    assert lab_rate_mbit(200, 1000) == 2000
    assert lab_rate_mbit(25, 500) == 125


def test_mgmt_gateway_is_first_address_of_subnet(tmp_path) -> None:
    from racfg.inventory import load_cluster

    cluster = load_cluster("inventory/lab.yaml")
    assert str(mgmt_gateway(cluster)) == "198.18.0.1/24"


def test_missing_prerequisites_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    gone = ("systemd-nspawn", "debootstrap")
    monkeypatch.setattr(prereq.shutil, "which", lambda tool: None if tool in gone else "/usr/bin/" + tool)
    monkeypatch.setattr(prereq.os, "geteuid", lambda: 0)
    with pytest.raises(CannotRunError) as info:
        prereq.require()
    text = str(info.value)
    assert "systemd-nspawn" in text and "apt-get install debootstrap systemd-container" in text
    assert info.value.exit_code == 3


def test_lab_up_as_non_root_exits_3(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from racfg.cli import invoke as run

    monkeypatch.setattr(prereq.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(sys, "argv", ["racfg", "lab", "up", "inventory/lab.yaml"])
    assert run() == 3
    assert "must run as root" in capsys.readouterr().err


def test_lab_help_lists_the_subcommands(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from racfg.cli import invoke as run

    monkeypatch.setattr(sys, "argv", ["racfg", "lab", "--help"])
    run()
    out = capsys.readouterr().out
    for command in ("up", "down", "status", "exec", "link", "stop", "start"):
        assert command in out
