"""Same across hosts: within each role, kernel, OFED, NIC firmware, NIC MTU, drives and GPU
driver should be one value. Intent before majority: where the inventory states the value (NIC
MTU, OFED pin, drive model, GPU driver pin) each host is compared with it, so a tie cannot blame
the healthy host. The majority rule is for what the inventory leaves open (kernel, NIC firmware);
without a strict majority no host is named and the split is reported once, on the role's first host."""

from __future__ import annotations

import shlex

import pytest

FIX = None


def COMMANDS(hv, gv, sysctl_keys):
    """What the compared attributes are read from. The same sections test_system (kernel), test_rdma
    (ofed_info), test_network (ip_addr, ethtool_i), test_storage (drive) and test_gpu (nvidia_smi)
    declare, named here too so this module run alone still reads them; each runs once per host, and
    racfg.validate.probe.collect_commands refuses two modules naming one section with different commands."""
    commands = {"kernel": "uname -r", "ofed_info": "ofed_info -s", "ip_addr": "ip -j addr show"}
    for nic in hv.get("racfg_nics", []):
        commands[f"ethtool_i:{nic['name']}"] = f"ethtool -i {shlex.quote(nic['name'])}"
    if hv.get("racfg_role") == "storage":
        for drive in hv.get("racfg_drives", []):
            path = shlex.quote(drive["path"])
            lsblk = f"lsblk -J -b -d -o NAME,PATH,TYPE,SIZE,MODEL,SERIAL {path}"
            commands[f"drive:{drive['path']}"] = f"test -b {path} && {lsblk}"
    if hv.get("racfg_role") == "dgx":
        commands["nvidia_smi"] = "nvidia-smi -q -x"
    return commands


def _value(probe, attribute: str) -> str | None:
    from racfg.hostfacts.ethtool import parse_driver_info
    from racfg.hostfacts.ip import parse_ip_json
    from racfg.hostfacts.nvidia_smi import parse_query_xml
    from racfg.hostfacts.nvme import parse_lsblk_json
    from racfg.hostfacts.parse_error import ParseError

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
            links = parse_ip_json(probe.section("ip_addr").out)
            names = {k.split(":", 1)[1] for k in probe.sections if k.startswith("ethtool_i:")}
            return ", ".join(sorted({str(link.mtu) for name, link in links.items() if name in names})) or None
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


def _intent(attribute: str, hv: dict, gv: dict) -> tuple[str | None, str]:
    """What the inventory states for ``attribute`` on this host (None: it leaves it open), and where."""
    if attribute == "nic_mtu":
        mtus = sorted({str(n["mtu"]) for n in hv.get("racfg_nics", []) if n.get("mtu")})
        return (", ".join(mtus) or None), "fabric.host_mtu / nics[].mtu"
    if attribute == "ofed":
        ofed = hv.get("racfg_ofed", gv.get("racfg_ofed")) or {}
        if ofed.get("flavor") == "mlnx" and ofed.get("version"):
            return str(ofed["version"]), "software.ofed.version"
        return ("inbox" if ofed.get("flavor") == "inbox" else None), "software.ofed.flavor"
    if attribute == "drives":
        drives = hv.get("racfg_drives", [])
        models = sorted({d.get("model") for d in drives})
        from racfg.validate.expectations import drive_models_unchecked

        unchecked = drive_models_unchecked(hv)
        if drives and unchecked is not None:
            return f"{len(drives)} x", f"drives[] count (models not checked: {unchecked})"
        if drives and None not in models:
            return f"{len(drives)} x {', '.join(models)}", "drives[].model"
    if attribute == "gpu_driver" and gv.get("racfg_nvidia_driver"):
        return str(gv["racfg_nvidia_driver"]), "software.nvidia_driver"
    return None, ""


def _matches(attribute: str, want: str, have: str) -> bool:
    if attribute in ("ofed", "gpu_driver") and want != "inbox":
        return want in have  # a pin names a release (5.8-3.0.7.0, 535): the reading holds it
    if attribute == "drives" and want.endswith(" x"):  # the count alone ("6 x"): models not checked
        return have.startswith(want + " ")
    return want.lower() == have.lower()


def test_same_as_peers(attribute, probe, verdict, ctx):
    from racfg.validate.analysis import odd_ones, split

    mine = _value(probe, attribute.label)
    if mine is None:
        pytest.skip(f"{attribute.label} is not reported on this host")
    what = attribute.label.replace("_", " ")
    want, source = _intent(attribute.label, ctx.host_vars(attribute.target), ctx.site.group_vars)
    if want is not None:
        verdict.expect(want, mine, ok=_matches(attribute.label, want, mine), message=f"the inventory's {source}",
                       fix=f"bring {attribute.target}'s {what} to the inventory's value")
        return
    peers = {name: ctx.host_vars(name).get("racfg_role") for name in ctx.host_names}
    values = {name: _value(p, attribute.label) for name, p in ctx.probes().items()
              if peers.get(name) == attribute.role and not p.error}
    if len(values) < 2:
        pytest.skip(f"fewer than two reachable {attribute.role} hosts to compare")
    majority, odd = odd_ones(values)
    if majority is None:
        first = min(h for h, v in values.items() if v is not None)
        text = f"{attribute.role} hosts disagree on {what}: {split(values)}"
        if attribute.target != first:
            verdict.info(f"{text} (no majority: reported once, on {first})")
            return
        verdict.expect("one value", split(values), ok=False, message=text,
                       fix=f"bring the {attribute.role} hosts' {what} to one value (or state it in the inventory)")
    verdict.expect(majority, mine, ok=attribute.target not in odd,
                   message=f"majority of {len(values)} {attribute.role} hosts",
                   fix=f"bring {attribute.target}'s {what} in line with its peers")
