"""The fabric end to end: jumbo frames on every storage path, and each cable where the plan says.

Jumbo: a small ping, then ``ping -M probe -s MTU-28``, from every dgx data NIC to every storage data
NIC and between storage NICs, by destination as applications send (the host's routing picks the NIC;
a route that leaves by another NIC or from another address fails the path as "route").
The matrix is read as a whole (racfg.validate.pathmatrix): an end
that breaks every path into (or out of) it is named once, a lone path as itself, and a healthy
sender never; a small ping that fails reads "unreachable", a DF ping alone "MTU".
Cabling: LLDP from both ends (the switch's neighbour table and the host's lldpd) against the
cabling plan; a swapped pair is named as such. A host whose lldpd is down cannot be read
(system/lldpd_running names it), so its LLDP check is an error, not a cable.
"""

from __future__ import annotations

import pytest

from racfg.errors import CannotRunError

FIX_TAGS = "fabric"
# The sections these checks read (the LLDP one also feeds ValidateContext.cabling).
COMMANDS = {"lldp": "lldpcli -f json show neighbors", "lldpd_active": "systemctl is-active lldpd"}


def test_jumbo_frames(nic, probe, verdict, ctx):
    paths, verdicts = ctx.jumbo()
    v = verdicts.get((nic.target, nic.name))
    if v is None:
        pytest.skip(f"no jumbo-frame path through {nic.target}:{nic.name} "
                    "(paths run dgx->storage and storage->storage)")
    size = next((p.size for p in paths if nic.target in (p.src_host, p.dst_host)), int(nic.nic["mtu"]) - 28)
    where = f"{nic.target}:{nic.name} ({nic.nic.get('switch')} port {nic.nic.get('port')})"
    fix = (f"check the address and MTU of {where} on the host and the switch: racfg deploy {ctx.inventory_display} "
           f"--limit {nic.target},{nic.nic.get('switch')} --tags fabric,switch")
    if any(f.causes for f in v.findings if (f.host, f.nic) == (nic.target, nic.name)):
        # the host's own routes or neighbour entries (racfg.validate.dataplane): the fabric role repairs them
        fix = f"racfg deploy {ctx.inventory_display} --limit {nic.target} --tags fabric"
    found = "; ".join(f.describe(size) for f in v.findings)
    verdict.expect(f"small and {size + 28}-byte DF pings pass", found or f"pass on {v.paths_text()}", ok=v.ok,
                   fix=fix)


@pytest.mark.applies(not_fabric="infiniband")
def test_lldp_neighbour(nic, probe, verdict, ctx):
    if ctx.site.group_vars.get("racfg_fabric", {}).get("type") == "infiniband":
        pytest.skip("InfiniBand has no LLDP: cabling is checked from the subnet manager's view (ibnetdiscover)")
    lldp = probe.section("lldp", allow_fail=True)
    if lldp.missing:
        verdict.expect("lldpd running", "lldpcli not installed", ok=False,
                       fix=f"racfg deploy {ctx.inventory_display} --limit {nic.target} --tags common")
    active = probe.section("lldpd_active", allow_fail=True).out.strip()
    if active != "active":  # read the reader first: no neighbour heard means nothing when lldpd is down
        raise CannotRunError(f"cannot read: lldpd is not running on {nic.target}")
    v = ctx.cabling().get((nic.nic.get("switch"), nic.nic.get("port")))
    want = f"{nic.nic.get('switch')} {nic.nic.get('port')}"
    have = f"{v.host_sees[0]} {v.host_sees[1]}" if v and v.host_sees else "(no neighbour heard)"
    if v and v.swapped_with:
        verdict.expect(want, have, ok=False, message=v.problems[0],
                       fix=f"swap the cables of {nic.target}:{nic.name} and {v.swapped_with.host}:"
                           f"{v.swapped_with.nic} at {nic.nic.get('switch')} (ports {v.cable.port} and "
                           f"{v.swapped_with.port})")
    verdict.expect(want, have, fix=f"re-cable {nic.target}:{nic.name} to {want}, or correct the inventory")
