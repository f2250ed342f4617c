"""Same across hosts, intent before majority: through the real validator and collector, on probes
whose sections are given (only the SSH round trip is replaced)."""

from __future__ import annotations

import json

from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.results import Status
from racfg.validate.analysis import odd_ones, split
from racfg.validate.context import RenderedSite, ValidateContext
from racfg.validate.probe import HostProbe, Section
from racfg.validate.validate_run import ValidateOptions, run_checks
from tests.validate.test_checks_recorded import GROUP, host


def run(attribute: str, readings: dict[str, dict[str, Section]]) -> dict[str, tuple[Status, str]]:
    """host -> (status, message) of ``consistency/same_as_peers[attribute]``, every host a dgx."""
    site = RenderedSite(group_vars=GROUP, hosts={name: host("dgx") for name in readings}, switches={})
    ctx = ValidateContext(site, inventory_display="rec.yaml")
    ctx._probes = {name: HostProbe(name, sections=sections) for name, sections in readings.items()}
    ctx._switch_facts = {}
    results = run_checks(ctx, ValidateOptions(checks=[f"*/consistency/same_as_peers[[]{attribute}[]]"]))
    return {r.target: (r.status, r.message) for r in results}


def mtu(value: int) -> dict[str, Section]:
    return {"ip_addr": Section(0, json.dumps([{"ifname": "data0", "mtu": value}])),
            "ethtool_i:data0": Section(0, "driver: mlx5_core\n")}


def kernel(value: str) -> dict[str, Section]:
    return {"kernel": Section(0, value)}


def test_a_tie_on_a_stated_value_names_the_host_off_the_inventory_not_the_healthy_one() -> None:
    got = run("nic_mtu", {"dgx01": mtu(9000), "dgx02": mtu(1500)})
    assert got["dgx01"][0] is Status.PASS
    assert got["dgx02"] == (Status.FAIL, "Expected: 9000 Actual: 1500 (the inventory's fabric.host_mtu / nics[].mtu)")


def test_a_stated_value_wins_over_a_majority_that_is_wrong() -> None:
    got = run("nic_mtu", {"dgx01": mtu(1500), "dgx02": mtu(1500), "dgx03": mtu(9000)})
    assert {h: s for h, (s, _) in got.items()} == {"dgx01": Status.FAIL, "dgx02": Status.FAIL, "dgx03": Status.PASS}


def test_with_no_intent_a_strict_majority_names_the_odd_host() -> None:
    got = run("kernel", {"dgx01": kernel("6.1.0"), "dgx02": kernel("6.1.0"), "dgx03": kernel("6.8.0")})
    assert {h: s for h, (s, _) in got.items()} == {"dgx01": Status.PASS, "dgx02": Status.PASS, "dgx03": Status.FAIL}
    assert "majority of 3 dgx hosts" in got["dgx03"][1]


def test_with_no_intent_a_tie_names_no_host_and_reports_the_split_once() -> None:
    got = run("kernel", {f"dgx0{i}": kernel(v) for i, v in enumerate(("6.1.0", "6.8.0", "6.1.0", "6.8.0"), 1)})
    assert got["dgx01"] == (Status.FAIL, "Expected: one value Actual: 2 on 6.1.0, 2 on 6.8.0 "
                                         "(dgx hosts disagree on kernel: 2 on 6.1.0, 2 on 6.8.0)")
    assert {got[h][0] for h in ("dgx02", "dgx03", "dgx04")} == {Status.INFO}
    assert "reported once, on dgx01" in got["dgx02"][1]


def test_majority_is_strict() -> None:
    assert odd_ones({"a": "x", "b": "y"}) == (None, {})
    assert odd_ones({"a": "x", "b": "x", "c": "y"}) == ("x", {"c": "y"})
    assert split({"a": "y", "b": "x", "c": "y", "d": None}) == "2 on y, 1 on x"


def drives(count: int, model: str | None) -> dict[str, Section]:
    """The probe's lsblk reading of each declared drive (a loop device reports no model)."""
    return {f"drive:/dev/nvme{i}n1": Section(0, json.dumps({"blockdevices": [
        {"name": f"nvme{i}n1", "size": 960197124096, "model": model}]})) for i in range(count)}


def run_storage(readings: dict[str, dict[str, Section]], declared: int,
                overrides: ConnectionOverrides = NO_OVERRIDES) -> dict[str, tuple[Status, str]]:
    """host -> (status, message) of ``consistency/same_as_peers[drives]``, every host a storage node that
    declares ``declared`` drives of model Micron 9200."""
    stated = [{"path": f"/dev/nvme{i}n1", "model": "Micron 9200"} for i in range(declared)]
    site = RenderedSite(group_vars=GROUP, switches={},
                        hosts={name: host("storage", racfg_drives=stated) for name in readings})
    ctx = ValidateContext(site, inventory_display="rec.yaml", overrides=overrides)
    ctx._probes = {name: HostProbe(name, sections=sections) for name, sections in readings.items()}
    ctx._switch_facts = {}
    results = run_checks(ctx, ValidateOptions(checks=["*/consistency/same_as_peers[[]drives[]]"]))
    return {r.target: (r.status, r.message) for r in results}


LAB = ConnectionOverrides(provider="lab", host_vars={
    "nvme_storage_check_model": False, "nvme_storage_check_model_reason": "lab loop devices report no model"})


def test_drives_are_held_to_the_stated_count_and_model() -> None:
    got = run_storage({"st01": drives(6, "Micron 9200"), "st02": drives(6, None)}, 6)
    assert got["st01"][0] is Status.PASS
    assert got["st02"] == (Status.FAIL, "Expected: 6 x Micron 9200 Actual: 6 x (no model) (the inventory's "
                                        "drives[].model)")


def test_where_a_provider_says_models_are_not_checked_only_the_count_is_held_to_the_inventory() -> None:
    """The lab's loop devices report no model: healthy storage nodes pass on their count; one short of a
    drive is still named."""
    got = run_storage({"st01": drives(6, None), "st02": drives(6, None), "st03": drives(5, None)}, 6, LAB)
    assert {h: s for h, (s, _) in got.items()} == {"st01": Status.PASS, "st02": Status.PASS, "st03": Status.FAIL}
    assert got["st03"][1] == ("Expected: 6 x Actual: 5 x (no model) (the inventory's drives[] count "
                              "(models not checked: lab loop devices report no model))")
