"""Every host: reachable over SSH, its name, OS release and kernel (against pins when given)."""

from __future__ import annotations

import pytest

from racfg.errors import CannotRunError

FIX_TAGS = "common"
# The sections these checks read (racfg.validate.probe.collect_commands runs them in one script).
COMMANDS = {
    "hostname": "hostname",
    "os_release": "cat /etc/os-release",
    "kernel": "uname -r",  # also read by test_consistency
    "chrony_active": "systemctl is-active chrony",
    "chrony_tracking": "chronyc -n tracking",
}


def _os_release(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip().strip('"')
    return out


def test_reachable(node, probe, verdict):
    verdict.expect("reachable over SSH", "reachable over SSH", message=f"probed in {probe.seconds:.1f} s")


def test_hostname(node, probe, verdict):
    verdict.expect(node.target, probe.section("hostname").out.strip())


def test_os_release(node, probe, verdict, ctx):
    release = _os_release(probe.section("os_release").out)
    actual = release.get("PRETTY_NAME") or release.get("NAME", "?")
    pin = (ctx.site.group_vars.get("racfg_os") or {}).get("release")
    if not pin:
        verdict.info(f"{actual} (no pin: software.os.release)")
        return
    verdict.expect(pin, actual, ok=pin in actual or release.get("VERSION_ID") == pin,
                   fix="reinstall or upgrade the OS to the pinned release (software.os.release)")


def test_kernel(node, probe, verdict, ctx):
    actual = probe.section("kernel").out.strip()
    pin = (ctx.site.group_vars.get("racfg_os") or {}).get("kernel")
    if not pin:
        verdict.info(f"{actual} (no pin: software.os.kernel)")
        return
    verdict.expect(pin, actual, ok=actual.startswith(pin),
                   fix="boot the pinned kernel (software.os.kernel)")


def _agent_state(probe, section: str) -> str:
    out = probe.section(section, allow_fail=True).out.strip()
    return out.splitlines()[-1] if out else "missing"


@pytest.mark.roles("dgx", "storage")
def test_chronyd_running(node, probe, verdict):
    """The agent the clock check reads through: read first, so a stopped chronyd is named as itself."""
    verdict.expect("active", _agent_state(probe, "chrony_active"))


@pytest.mark.applies(not_fabric="infiniband")
@pytest.mark.roles("dgx", "storage")
def test_lldpd_running(node, probe, verdict, ctx):
    """The agent the LLDP checks read through (and that announces the host to its switch)."""
    if ctx.site.group_vars.get("racfg_fabric", {}).get("type") == "infiniband":
        pytest.skip("InfiniBand has no LLDP: cabling is checked from the subnet manager's view (ibnetdiscover)")
    verdict.expect("active", _agent_state(probe, "lldpd_active"))


@pytest.mark.roles("dgx", "storage")
def test_clock_synchronised(node, probe, verdict):
    from racfg.hostfacts.chrony import parse_chronyc_tracking

    if _agent_state(probe, "chrony_active") != "active":
        raise CannotRunError(f"cannot read: chronyd is not running on {node.target}")
    tracking = parse_chronyc_tracking(probe.section("chrony_tracking").out)
    verdict.expect("synchronised", tracking.leap_status, ok=tracking.synchronised,
                   message=f"reference {tracking.reference_name or tracking.reference_id}, stratum {tracking.stratum}")
