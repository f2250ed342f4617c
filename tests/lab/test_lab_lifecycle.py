"""Lab lifecycle on a small lab of its own (tests/lab/cycle.yaml): down leaves nothing, a failed
up cleans up after itself and names the step."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from labsupport import require_lab_prerequisites

from racfg.errors import CannotRunError
from racfg.inventory import load_cluster
from racfg_lab import drives, lifecycle, names
from racfg_lab.state import site_dir
from racfg_lab.teardown import leftovers

pytestmark = pytest.mark.lab
CYCLE = Path(__file__).parent / "cycle.yaml"
SITE = load_cluster(CYCLE).name


def _system_view() -> str:
    """What `ip netns`, `ip link`, `mount` and `losetup` show, as one text."""
    return "\n".join(subprocess.run(argv, capture_output=True, text=True).stdout for argv in (
        ["ip", "netns", "list"], ["ip", "-br", "link"], ["mount"], ["losetup", "-a"], ["ps", "-eo", "args"]))


def _traces(view: str) -> list[str]:
    marks = (names.netns_prefix(SITE), names.mgmt_bridge(SITE), str(site_dir(SITE)) + "/", "cyc-dgx01")
    return [line for line in view.splitlines() if any(m in line for m in marks)]


def _throttle_rules(devices: set[str]) -> set[str]:
    """The block throttle's read rules (bytes/s and IOPS) on ``devices`` (``major:minor``)."""
    found = set()
    for name in ("blkio.throttle.read_bps_device", "blkio.throttle.read_iops_device"):
        found |= {line for line in (drives.BLKIO / name).read_text().splitlines() if line.split()[0] in devices}
    return found


def test_down_leaves_nothing_behind() -> None:
    require_lab_prerequisites()
    numbers: set[str] = set()
    try:
        result = lifecycle.up(CYCLE)
        assert result.changed and result.state is not None
        assert _traces(_system_view()), "the lab should be visible while it is up"
        loops = [d for hs in result.state.hosts.values() for d in hs.drives.values()]
        numbers = {f"{os.major(r)}:{os.minor(r)}" for r in (Path(d).stat().st_rdev for d in loops)}
        rate, iops = drives.shaping(len(loops))
        assert loops and _throttle_rules(numbers) == {f"{n} {v}" for n in numbers for v in (rate, iops)}
        controller = result.state.controller  # the inventory's Slurm controller, a machine like the hosts
        assert controller is not None and (Path(controller.root) / "etc/munge/munge.key").is_file()
    finally:
        lifecycle.down(CYCLE)
    assert _traces(_system_view()) == []
    assert leftovers(SITE) == []
    assert not site_dir(SITE).exists()
    assert _throttle_rules(numbers) == set()  # the next user of those loop devices gets them unshaped


def test_failed_up_tears_down_and_names_the_step() -> None:
    require_lab_prerequisites()
    gateway = "198.18.9.1/24"
    dummy = "rftestblock"
    subprocess.run(["ip", "link", "add", dummy, "type", "bridge"], check=True)
    try:
        subprocess.run(["ip", "addr", "add", gateway, "dev", dummy], check=True)
        with pytest.raises(CannotRunError, match=r"step 'management network'.*already on interface rftestblock"):
            lifecycle.up(CYCLE)
    finally:
        subprocess.run(["ip", "link", "delete", dummy], check=False)
    assert leftovers(SITE) == []
    assert _traces(_system_view()) == []


def test_down_without_state_file_finds_everything_by_name() -> None:
    require_lab_prerequisites()
    try:
        lifecycle.up(CYCLE)
        (site_dir(SITE) / "state.json").unlink()  # as if the state were lost
    finally:
        lifecycle.down(site=SITE)
    assert leftovers(SITE) == []
    assert _traces(_system_view()) == []
