"""The fabric end to end: jumbo frames on every storage path, and each cable where the plan says.

Jumbo: ``ping -M do -s MTU-28`` from every dgx data NIC to every storage data NIC and between
storage NICs. The matrix is read as a whole (racfg.validate.analysis): a NIC or switch port
that breaks every path through it is named once, not once per path.
Cabling: LLDP from both ends (the switch's neighbour table and the host's lldpd) against the
cabling plan; a swapped pair is named as such.
"""

from __future__ import annotations

import pytest

FIX_TAGS = "fabric"


def test_jumbo_frames(nic, probe, verdict, ctx):
    paths, verdicts = ctx.jumbo()
    v = verdicts.get((nic.target, nic.name))
    if v is None:
        pytest.skip(f"no jumbo-frame path through {nic.target}:{nic.name} "
                    "(paths run dgx->storage and storage->storage)")
    size = next((p.size for p in paths if nic.target in (p.src_host, p.dst_host)), int(nic.nic["mtu"]) - 28)
    where = f"{nic.target}:{nic.name} ({nic.nic.get('switch')} port {nic.nic.get('port')})"
    fix = (f"check the MTU of {where} on the host and the switch: racfg deploy {ctx.inventory_display} "
           f"--limit {nic.target},{nic.nic.get('switch')} --tags fabric,switch")
    if v.dead:
        verdict.expect(f"{size}-byte DF ping passes", f"fails on all {v.paths} paths through {where}", ok=False,
                       fix=fix)
    verdict.expect(f"{size}-byte DF ping passes", f"fails to {', '.join(v.failed)}" if v.failed else
                   f"passes on {v.paths} paths", ok=not v.failed, fix=fix)


def test_lldp_neighbour(nic, probe, verdict, ctx):
    if ctx.site.group_vars.get("racfg_fabric", {}).get("type") == "infiniband":
        pytest.skip("InfiniBand has no LLDP: cabling is checked from the subnet manager's view (ibnetdiscover)")
    verdicts = ctx.cabling()
    v = verdicts.get((nic.nic.get("switch"), nic.nic.get("port")))
    lldp = probe.section("lldp", allow_fail=True)
    if lldp.missing:
        verdict.expect("lldpd running", "lldpcli not installed", ok=False,
                       fix=f"racfg deploy {ctx.inventory_display} --limit {nic.target} --tags common")
    want = f"{nic.nic.get('switch')} {nic.nic.get('port')}"
    have = f"{v.host_sees[0]} {v.host_sees[1]}" if v and v.host_sees else "(no neighbour heard)"
    if v and v.swapped_with:
        verdict.expect(want, have, ok=False, message=v.problems[0],
                       fix=f"swap the cables of {nic.target}:{nic.name} and {v.swapped_with.host}:"
                           f"{v.swapped_with.nic} at {nic.nic.get('switch')} (ports {v.cable.port} and "
                           f"{v.swapped_with.port})")
    verdict.expect(want, have, fix=f"re-cable {nic.target}:{nic.name} to {want}, or correct the inventory")
