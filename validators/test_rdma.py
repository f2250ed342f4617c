"""The RDMA stack: MLNX_OFED at its pinned version, or the inbox rdma-core packages; on
InfiniBand every port ACTIVE at the fabric's MTU and rate, IPoIB in the configured mode."""

from __future__ import annotations

import shlex

import pytest

FIX_TAGS = "ofed"


def COMMANDS(hv, gv, sysctl_keys):
    """OFED's version (also read by test_consistency), the RDMA devices and ports, and on an
    InfiniBand fabric each data NIC's IPoIB mode."""
    commands = {"ofed_info": "ofed_info -s", "rdma_devices": "ls /sys/class/infiniband", "ibv_devinfo": "ibv_devinfo"}
    if (gv.get("racfg_fabric") or {}).get("type") == "infiniband":
        for nic in hv.get("racfg_nics", []):
            commands[f"ipoib_mode:{nic['name']}"] = f"cat /sys/class/net/{shlex.quote(nic['name'])}/mode"
    return commands


def test_ofed_version(node, probe, verdict, ctx):
    from racfg.hostfacts.ofed import parse_ofed_info_s

    # node.vars carries a provider's replacement (the lab: inbox for MLNX_OFED) over the inventory's pin
    declared = ctx.site.group_vars.get("racfg_ofed") or {}
    ofed = node.vars.get("racfg_ofed", declared) or {}
    if declared.get("flavor") == "mlnx" and ofed.get("flavor") != "mlnx":
        # The pin was replaced for this run (the lab has no MLNX_OFED): checking the stand-in
        # against the pin would either fail for nothing or, worse, pass for what was not installed.
        pytest.skip(f"MLNX_OFED {declared.get('version') or ''} not checked: this run substitutes the "
                    "distribution's inbox RDMA stack for it (its packages are checked under packages)")
    section = probe.section("ofed_info", allow_fail=True)
    if ofed.get("flavor") != "mlnx":
        if section.ok:
            verdict.expect("inbox RDMA stack", section.out.strip(), ok=False,
                           message="MLNX_OFED is installed but the inventory asks for the inbox stack")
        verdict.info("inbox RDMA stack (no MLNX_OFED expected; its packages are checked under packages)")
        return
    pin = str(ofed.get("version") or "")
    if not section.ok:
        verdict.expect(f"MLNX_OFED {pin}", "ofed_info not found (MLNX_OFED not installed)", ok=False)
    have = parse_ofed_info_s(section.out)
    verdict.expect(pin, have.version, ok=not pin or have.matches(pin))


def _ports(probe):
    from racfg.hostfacts.infiniband import parse_ibv_devinfo

    devices = probe.section("rdma_devices", allow_fail=True)
    if not devices.ok or not devices.out.strip():
        pytest.skip("no RDMA device on this host (/sys/class/infiniband is empty): no RDMA port to check")
    return [p for d in parse_ibv_devinfo(probe.section("ibv_devinfo").out) for p in d.ports]


def _ib(ctx):
    if ctx.site.group_vars.get("racfg_fabric", {}).get("type") != "infiniband":
        pytest.skip("Ethernet fabric without RoCE: no InfiniBand port to check")
    return ctx.site.group_vars["racfg_fabric"]


@pytest.mark.applies(fabric="infiniband")
def test_ib_ports_active(node, probe, verdict, ctx):
    _ib(ctx)
    every = _ports(probe)
    ports = [p for p in every if p.link_layer in (None, "InfiniBand")]
    if not ports:
        layers = ", ".join(sorted({f"{p.device}/{p.port} {p.link_layer}" for p in every}))
        verdict.expect("InfiniBand ports", f"no InfiniBand port ({layers})", ok=False,
                       fix=f"set the HCA ports of {node.target} to InfiniBand (mlxconfig LINK_TYPE_P1=1) and reboot")
    down = [f"{p.device}/{p.port} {p.state}" for p in ports if not p.active]
    verdict.expect("every IB port ACTIVE", "; ".join(down) or "every IB port ACTIVE", ok=not down,
                   fix=f"check the IB cables of {node.target} and the subnet manager")


@pytest.mark.applies(fabric="infiniband")
def test_ib_mtu(node, probe, verdict, ctx):
    fabric = _ib(ctx)
    want = int(fabric.get("ib_mtu") or 4096)
    ports = [p for p in _ports(probe) if p.link_layer in (None, "InfiniBand") and p.active]
    wrong = [f"{p.device}/{p.port} {p.active_mtu}" for p in ports if p.active_mtu != want]
    verdict.expect(want, "; ".join(wrong) or want, ok=not wrong,
                   fix="set the IB MTU on the switch (racfg deploy --tags switch) and the subnet manager partition")


@pytest.mark.applies(fabric="infiniband")
def test_ib_rate(node, probe, verdict, ctx):
    fabric = _ib(ctx)
    want = float(fabric.get("speed_gbps") or 100)
    ports = [p for p in _ports(probe) if p.link_layer in (None, "InfiniBand") and p.active and p.rate_gbps]
    if not ports:
        pytest.skip("the RDMA tool prints no port rate here")
    slow = [f"{p.device}/{p.port} {p.rate_gbps:g} Gb/s" for p in ports if p.rate_gbps and p.rate_gbps < want]
    verdict.expect(f"{want:g} Gb/s", "; ".join(slow) or f"{want:g} Gb/s", ok=not slow,
                   fix=f"check the cable and switch port speed of {node.target}")


@pytest.mark.applies(fabric="infiniband")
def test_ipoib_mode(nic, probe, verdict, ctx):
    fabric = _ib(ctx)
    want = fabric.get("ipoib_mode") or "datagram"
    fix = f"racfg deploy {ctx.inventory_display} --limit {nic.target} --tags fabric"
    unavailable = ctx.host_vars(nic.target).get("fabric_ipoib_unavailable")
    if unavailable:  # a provider's stand-in NIC (the lab), never a real host's
        pytest.skip(unavailable)
    section = probe.get(f"ipoib_mode:{nic.name}")
    if section is None or not section.ok:
        verdict.expect(want, f"no IPoIB mode (/sys/class/net/{nic.name}/mode absent: not an IPoIB interface)",
                       ok=False, fix=f"make {nic.name} an IPoIB interface of an InfiniBand port "
                       f"(mlxconfig LINK_TYPE_P1=1, ib_ipoib loaded), then {fix}")
    verdict.expect(want, section.out.strip(), fix=fix)
