"""Lab logic that needs no root: names, sizes, prerequisites and their message."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from racfg.errors import CannotRunError
from racfg.inventory import load_cluster
from racfg_lab import drives, frr, names, prereq
from racfg_lab.fabric import (
    DEFAULT_SCALE_MBIT_PER_100G,
    LAB_CARRIES_MBIT,
    PORT_BUFFER_BYTES,
    Shaper,
    fitting_scale,
    lab_rate_mbit,
    mgmt_gateway,
    smoke_load_100g,
)


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


def test_a_labs_drives_share_one_read_budget_each_at_most_a_drives_rate() -> None:
    """Few drives read at a drive's rate; many share the lab's budget, so fio on all at once stays far
    from what the CPUs copy (docs/lab.md: lab.yaml's 4 drives, ra-leafspine's 96)."""
    assert drives.shaping(4) == (250_000_000, 10_000)
    assert drives.shaping(96) == (20_833_333, 416)
    assert drives.shaping(0) == (250_000_000, 10_000)
    for count in (1, 8, 9, 48, 96, 400):
        rate, iops = drives.shaping(count)
        assert rate * count <= drives.LAB_READ_BYTES_PER_S and iops * count <= drives.LAB_READ_IOPS, count


def test_lab_rate_scale() -> None:
    assert lab_rate_mbit(100, 1000) == 1000
    assert lab_rate_mbit(200, 1000) == 2000
    assert lab_rate_mbit(25, 500) == 125


@pytest.mark.parametrize(("rate_mbit", "burst", "limit"), [
    # the lab's 100G at the default scale: 5 ms of burst, a real switch's 16 MiB buffer (134 ms here)
    (1000, 625_000, PORT_BUFFER_BYTES + 625_000),
    (2000, 1_250_000, PORT_BUFFER_BYTES + 1_250_000),
    # a slow link: the burst never below a few jumbo frames
    (10, 64 * 1024, PORT_BUFFER_BYTES + 64 * 1024),
    # a fast one: 50 ms of line rate once that is more than the buffer
    (4000, 2_500_000, 25_000_000 + 2_500_000),
    # a rate read back from tc, fractional Mbit/s
    (1000.4, 625_250, PORT_BUFFER_BYTES + 625_250),
])
def test_shaper_buffer_holds_an_incast_and_the_burst_stays_small(rate_mbit: float, burst: int, limit: int) -> None:
    shaper = Shaper.for_rate(rate_mbit)
    assert (shaper.burst, shaper.limit) == (burst, limit)
    assert shaper.tc_args() == ["tbf", "rate", f"{round(rate_mbit * 1e6)}bit", "burst", str(burst), "limit", str(limit)]
    # 8 TCP flows into one port peaked at 3-7 MB of queue on this machine (see Shaper): room for twice that
    assert shaper.limit >= 2 * 7_000_000
    # the burst lets at most 0.5% more than line rate through in a second
    assert shaper.burst * 8 <= 0.005 * shaper.rate_bit or shaper.burst == 64 * 1024


@pytest.mark.parametrize(("model", "mib"), [("SN2700", 16), ("SN3700", 42), ("7368X", 64), ("no-such-model", 16)])
def test_a_switch_port_queues_its_models_packet_buffer(model: str, mib: int) -> None:
    from racfg_lab.fabric import port_buffer_bytes

    assert port_buffer_bytes(model) == mib * 1024 * 1024
    shaper = Shaper.for_rate(1000, port_buffer_bytes(model))
    assert shaper.limit == mib * 1024 * 1024 + shaper.burst


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


@pytest.mark.parametrize(("inventory", "scale"), [
    ("inventory/lab.yaml", 1000),           # smoke loads 2 x 100G at once: the default
    ("inventory/ra-leafspine.yaml", 250),   # 16 clients at once across the spines: 4 Gbit/s in all
    ("bench/pod128.yaml", 250),
    ("inventory/ra-arista.yaml", 125),      # 16 clients with two 100G rails each
])
def test_the_lab_shapes_a_site_so_smoke_s_largest_load_fits_what_it_carries(inventory: str, scale: int) -> None:
    cluster = load_cluster(Path(__file__).parents[2] / inventory)
    assert fitting_scale(cluster) == scale
    assert smoke_load_100g(cluster) * scale <= LAB_CARRIES_MBIT or scale == DEFAULT_SCALE_MBIT_PER_100G


def test_each_routed_switch_hashes_ecmp_with_its_own_seed():
    """One seed for every namespace polarizes a two-tier fabric (tests/lab/test_lab_routed.py shows it)."""
    settings = {name: frr.sysctls(name) for name in ("leaf1", "leaf2", "spine1", "spine2")}
    assert all(s["net.ipv4.fib_multipath_hash_policy"] == "3" for s in settings.values())
    seeds = {s.get(frr.HASH_SEED) for s in settings.values()}
    assert len(seeds) == 4 and "0" not in seeds and None not in seeds  # this machine's kernel has the setting
    assert frr.sysctls("spine1") == settings["spine1"]  # the same seed on every start
