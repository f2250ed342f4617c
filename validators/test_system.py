"""Every host: reachable over SSH (or read in a Slurm job step), its name, OS release and kernel
(against pins when given)."""

from __future__ import annotations

import pytest

from racfg.errors import CannotRunError
from racfg.hostfacts.chrony import CHRONY_CONF_COMMAND

FIX_TAGS = "common"
LLDPD_CONF = "/etc/lldpd.d/racfg.conf"  # roles/common: common_lldpd_conf
# The sections these checks read (racfg.validate.probe.collect_commands runs them in one script).
COMMANDS = {
    "hostname": "hostname",
    "os_release": "cat /etc/os-release",
    "kernel": "uname -r",  # also read by test_consistency
    "chrony_active": "systemctl is-active chrony",
    "chrony_tracking": "chronyc -n tracking",
    "chrony_conf": CHRONY_CONF_COMMAND,  # the sources chronyd is configured with (the cause of a clock off)
    "lldpd_conf": "cat /etc/lldpd.conf /etc/lldpd.d/*.conf 2>/dev/null; true",  # what lldpd announces
}


def _os_release(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip().strip('"')
    return out


def test_reachable(node, probe, verdict):
    how = "reachable over SSH" if probe.via == "over SSH" else f"read {probe.via}"  # validate --read-via slurm
    verdict.expect(how, how, message=f"probed {probe.via} in {probe.seconds:.1f} s")


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


@pytest.mark.applies(not_fabric="infiniband")
@pytest.mark.roles("dgx", "storage")
def test_lldpd_config(node, probe, verdict):
    """What lldpd is configured to announce (its lldpcli commands in /etc/lldpd.conf and /etc/lldpd.d/):
    the host's inventory name as system name, the interface name as port id. Read beside the LLDP
    checks so that a wrong announcement is named as itself, not as a cable in the wrong port."""
    said = {"hostname": "(none: the host name)", "portidsubtype": "(none: the MAC address)"}
    for line in probe.section("lldpd_conf", allow_fail=True).out.splitlines():
        words = line.split()
        if words[:3] == ["configure", "system", "hostname"] and len(words) > 3:
            said["hostname"] = words[3]
        elif words[:3] == ["configure", "lldp", "portidsubtype"] and len(words) > 3:
            said["portidsubtype"] = words[3]
    want = f"system name {node.target}, port id ifname"
    have = f"system name {said['hostname']}, port id {said['portidsubtype']}"
    verdict.expect(want, have, message=f"lldpd's configuration ({LLDPD_CONF})")


@pytest.mark.roles("dgx", "storage")
def test_time_sources(node, probe, verdict, ctx):
    """chrony's configured sources against the site's (site.time_sources): read beside the clock's
    state so that a clock that cannot synchronise is named by its cause where the configuration shows it."""
    from racfg.hostfacts.chrony import parse_chrony_sources

    # as the role reads it: a host's (or the provider's) variable over the site's
    want = [str(s) for s in ctx.host_vars(node.target).get("racfg_time_sources",
                                                            ctx.site.group_vars.get("racfg_time_sources")) or []]
    section = probe.section("chrony_conf", allow_fail=True)
    if not section.ok:
        verdict.expect(", ".join(want) or "a chrony configuration", "no chrony configuration "
                       "(neither /etc/chrony/chrony.conf nor /etc/chrony.conf)", ok=False)
    have = parse_chrony_sources(section.out)
    if not want:
        verdict.info(f"{', '.join(have) or 'no source'} (site.time_sources is empty: the host keeps its own)")
        return
    verdict.expect(", ".join(want), ", ".join(have) or "(no source)", ok=sorted(have) == sorted(want),
                   message="chrony's configured sources against site.time_sources")


@pytest.mark.roles("dgx", "storage")
def test_clock_synchronised(node, probe, verdict):
    from racfg.hostfacts.chrony import parse_chronyc_tracking

    if _agent_state(probe, "chrony_active") != "active":
        raise CannotRunError(f"cannot read: chronyd is not running on {node.target}")
    tracking = parse_chronyc_tracking(probe.section("chrony_tracking").out)
    verdict.expect("synchronised", tracking.leap_status, ok=tracking.synchronised,
                   message=f"reference {tracking.reference_name or tracking.reference_id}, stratum {tracking.stratum}")
