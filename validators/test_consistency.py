"""Same across hosts: within each role, kernel, OFED, NIC firmware, NIC MTU, drives and GPU
driver should be one value. The majority value is the expectation; each odd host is named."""

from __future__ import annotations

import json

import pytest

FIX = None


def _value(probe, attribute: str) -> str | None:
    from racfg.hostfacts.errors import ParseError
    from racfg.hostfacts.ethtool import parse_driver_info
    from racfg.hostfacts.nvidia_smi import parse_query_xml
    from racfg.hostfacts.nvme import parse_lsblk_json

    try:
        if attribute == "kernel":
            return probe.section("kernel").out.strip()
        if attribute == "ofed":
            section = probe.section("ofed_info", allow_fail=True)
            return section.out.strip() if section.ok else "inbox"
        if attribute == "nic_firmware":
            infos = [parse_driver_info(s.out) for k, s in sorted(probe.sections.items())
                     if k.startswith("ethtool_i:") and s.ok]
            return ", ".join(sorted({f"{i.driver} {i.firmware_version or '-'}" for i in infos})) or None
        if attribute == "nic_mtu":
            links = json.loads(probe.section("ip_addr").out or "[]")
            names = {k.split(":", 1)[1] for k in probe.sections if k.startswith("ethtool_i:")}
            return ", ".join(sorted({str(link["mtu"]) for link in links if link.get("ifname") in names})) or None
        if attribute == "drives":
            # the declared drives as each host resolves them: how many are there, of which models
            found = [parse_lsblk_json(s.out) for k, s in sorted(probe.sections.items())
                     if k.startswith("drive:") and s.ok]
            disks = [d[0] for d in found if d]
            models = sorted({d.model or "(no model)" for d in disks})
            return f"{len(disks)} x {', '.join(models)}" if disks else "0 drives"
        if attribute == "gpu_driver":
            section = probe.get("nvidia_smi")
            if section is None or not section.ok:
                return None
            return parse_query_xml(section.out).driver_version
    except (ParseError, RuntimeError, ValueError):
        return None
    return None


def test_same_as_peers(attribute, probe, verdict, ctx):
    from racfg.validate.analysis import odd_ones

    peers = {name: ctx.host_vars(name).get("racfg_role") for name in ctx.host_names}
    values = {name: _value(p, attribute.label) for name, p in ctx.probes().items()
              if peers.get(name) == attribute.role and not p.error}
    if len(values) < 2:
        pytest.skip(f"fewer than two reachable {attribute.role} hosts to compare")
    mine = values.get(attribute.target)
    if mine is None:
        pytest.skip(f"{attribute.label} is not reported on this host")
    majority, odd = odd_ones(values)
    verdict.expect(majority, mine, ok=attribute.target not in odd,
                   message=f"majority of {len(values)} {attribute.role} hosts",
                   fix=f"bring {attribute.target}'s {attribute.label.replace('_', ' ')} in line with its peers")
