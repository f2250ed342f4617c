"""dgx hosts: GPUs through nvidia-smi, the kernel log and DCGM, judged against the server model.

Count, model, driver branch, persistence and ECC; then what a GPU cluster's acceptance checks: the
GPU model and its NVLink links against racfg's catalog of server models (a V100S PCIe card in a
DGX-1 fails), the PCIe link each GPU trained at, pending page retirement / row remapping, clocks
held back by heat or power at idle, Xid events since boot, and DCGM's diagnostic where DCGM is
installed. Without an NVIDIA driver every check is skipped with that reason only where the site
allows it (``racfg_gpu_required`` false, e.g. the virtual lab); on a GPU server that must have GPUs,
a missing nvidia-smi is a failure, never a pass.
"""

from __future__ import annotations

import re

import pytest

FIX_TAGS = "gpu"
pytestmark = pytest.mark.roles("dgx")


def COMMANDS(hv, gv, sysctl_keys):
    """On a dgx: nvidia-smi's query (also read by test_consistency) and NVLink status; the kernel log
    since boot for Xids where the NVIDIA kernel module is loaded (only it logs them; a host without
    it is not read): journald's (exact boot), else the ring buffer; exit 3 when neither can be read,
    so "no Xid" is never an unread log. DCGM's diagnostic where dcgmi is installed (exit 127
    otherwise): level 1 takes seconds, level 2 (``validate --deep``) minutes."""
    if hv.get("racfg_role") != "dgx":
        return {}
    return {
        "nvidia_smi": "nvidia-smi -q -x",
        "nvlink": "nvidia-smi nvlink --status",
        "xid": "[ -d /proc/driver/nvidia ] || exit 0; "
               "log=$(journalctl -k -b -q --no-pager 2>/dev/null || dmesg 2>&1) || exit 3; "
               "printf '%s\\n' \"$log\" | grep -E 'NVRM: Xid|SXid' || true",
        "dcgm": "command -v dcgmi >/dev/null || { echo 'dcgmi: not found'; exit 127; }; "
                f"dcgmi diag -r {2 if gv.get('racfg_validate_deep') else 1}",
    }
RMA = "drain the node and collect nvidia-bug-report.sh for the vendor (RMA the GPU if it recurs after a reset)"


def _smi(node, probe, verdict):
    from racfg.hostfacts.nvidia_smi import parse_query_xml

    expected = int(node.vars.get("racfg_gpus") or 0)
    if expected == 0:
        pytest.skip("the inventory declares no GPUs on this host (gpus: 0)")
    section = probe.section("nvidia_smi", allow_fail=True)
    if section.missing or not section.ok:
        required = node.vars.get("racfg_gpu_required", True)
        reason = "nvidia-smi not found" if section.missing else f"nvidia-smi failed: {section.out.strip()[:120]}"
        if not required:
            pytest.skip(f"no GPU here ({reason}); this site does not require GPUs (gpu_required: false)")
        verdict.expect(f"{expected} GPUs", reason, ok=False)
    return parse_query_xml(section.out), expected


def _catalog(node):
    """The GPU the host should have (racfg.catalog), and how the inventory named it."""
    from racfg.catalog import host_gpu

    model, named = node.vars.get("racfg_model"), node.vars.get("racfg_gpu_model")
    return host_gpu(model, named), named or "", str(model or "")


def test_count(node, probe, verdict):
    smi, expected = _smi(node, probe, verdict)
    verdict.expect(expected, len(smi.gpus),
                   fix="reseat or replace the missing GPU (nvidia-smi -q lists the present ones)")


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def test_model(node, probe, verdict):
    smi, _ = _smi(node, probe, verdict)
    names = sorted({g.product_name for g in smi.gpus})
    gpu, named, model = _catalog(node)
    fix = f"fit the GPUs the {model or 'server'} is built with, or correct gpu_model/model in the inventory"
    if gpu is not None:
        other = [n for n in names if not gpu.matches(n)]
        verdict.expect(f"{gpu.name} (server model {model})" if model else gpu.name, ", ".join(names),
                       ok=not other, fix=fix)
    elif named:
        other = [n for n in names if _squash(named) not in _squash(n)]
        verdict.expect(named, ", ".join(names), ok=not other, fix=fix)
    else:
        pytest.skip(f"server model {model or '(none)'} is not in racfg's catalog and the inventory gives no "
                    f"gpu_model: the GPUs ({', '.join(names)}) have nothing to be compared with")


def test_driver_branch(node, probe, verdict, ctx):
    from racfg.hostfacts.nvidia_smi import driver_branch

    smi, _ = _smi(node, probe, verdict)
    pin = ctx.site.group_vars.get("racfg_nvidia_driver")
    if not pin:
        verdict.info(f"driver {smi.driver_version} (no pin: software.nvidia_driver)")
        return
    verdict.expect(str(pin), driver_branch(smi.driver_version), message=f"driver {smi.driver_version}")


def test_persistence_mode(node, probe, verdict):
    smi, _ = _smi(node, probe, verdict)
    off = [g.bus_id for g in smi.gpus if g.persistence_mode is False]
    verdict.expect("on for every GPU", f"off on {', '.join(off)}" if off else "on for every GPU", ok=not off)


def test_ecc(node, probe, verdict):
    smi, _ = _smi(node, probe, verdict)
    off = [g.bus_id for g in smi.gpus if g.ecc_mode is False]
    errors = [f"{g.bus_id}: {g.ecc_errors.volatile_uncorrectable}" for g in smi.gpus
              if g.ecc_errors and (g.ecc_errors.volatile_uncorrectable or 0) > 0]
    actual = "; ".join([*(f"ECC off on {b}" for b in off), *(f"uncorrectable errors {e}" for e in errors)])
    verdict.expect("ECC on, no uncorrectable errors", actual or "ECC on, no uncorrectable errors",
                   ok=not off and not errors,
                   fix="replace or RMA the GPU with uncorrectable errors; enable ECC (nvidia-smi -e 1) and reboot")


def test_nvlink(node, probe, verdict):
    from racfg.hostfacts.nvidia_smi import parse_nvlink_status

    smi, _ = _smi(node, probe, verdict)
    gpu, _, model = _catalog(node)
    if gpu is not None and not gpu.nvlink_links:
        pytest.skip(f"{gpu.name} GPUs have no NVLink (PCIe cards)")
    section = probe.section("nvlink", allow_fail=True)
    # Driver 580 prints nothing (exit 0) for a GPU with no NVLink to report (tests/recordings/h100-device):
    # no links, not unreadable output, so it is judged below instead of raising the parser's "no output".
    links = parse_nvlink_status(section.out) if section.ok and section.out.strip() else []
    fix = "reseat the GPU baseboard / NVLink bridge; check nvidia-smi nvlink --status"
    if gpu is None:
        if not links or not any(g.count for g in links):
            pytest.skip("these GPUs report no NVLink links and the server model names none (PCIe GPUs)")
        down = [f"GPU {g.index} {g.down} down" for g in links if g.down]
        verdict.expect("every NVLink up", "; ".join(down) or "every NVLink up", ok=not down, fix=fix)
        return
    floor = gpu.nvlink_gbytes_per_s * 0.95  # Volta prints 25.781 GB/s for its nominal 25
    wrong = []
    for g in links or []:
        dead = [f"link {n} inactive" for n, speed in sorted(g.links.items()) if speed is None]
        slow = [f"link {n} at {speed:g} GB/s" for n, speed in sorted(g.links.items()) if speed and speed < floor]
        if g.up < gpu.nvlink_links or dead or slow:
            wrong.append(f"GPU {g.index}: {g.up} of {gpu.nvlink_links} links up"
                         + "".join(f", {p}" for p in dead + slow))
    if not links:
        said = section.out.strip()[:80] or ("nvidia-smi nvlink --status printed nothing" if section.ok
                                            else f"nvidia-smi nvlink --status: exit {section.rc}")
        wrong.append(f"no NVLink reported: 0 of {gpu.nvlink_links} links up on each of {len(smi.gpus)} GPU(s) ({said})")
    expected = (f"{gpu.nvlink_links} links per GPU at {gpu.nvlink_gbytes_per_s:g} GB/s "
                f"(NVLink {gpu.nvlink_gen}, {model})")
    verdict.expect(expected, "; ".join(wrong) or expected, ok=not wrong, fix=fix)


def test_pcie_link(node, probe, verdict):
    smi, _ = _smi(node, probe, verdict)
    gpu, _, _ = _catalog(node)
    short = []
    for g in smi.gpus:
        if g.pcie is None or g.pcie.max_gen is None or g.pcie.current_width is None:
            continue
        gen, width = (gpu.pcie_gen, gpu.pcie_width) if gpu else (g.pcie.max_gen, g.pcie.max_width or 0)
        if g.pcie.max_gen < gen or g.pcie.current_width < width:
            short.append(f"{g.bus_id} Gen{g.pcie.max_gen} x{g.pcie.current_width}")
    if not any(g.pcie and g.pcie.max_gen for g in smi.gpus):
        pytest.skip("nvidia-smi reports no PCIe link for these GPUs")
    expected = (f"Gen{gpu.pcie_gen} x{gpu.pcie_width} or better ({gpu.name})" if gpu
                else "every GPU at its own maximum width (server model not in racfg's catalog)")
    verdict.expect(expected, "; ".join(short) or expected, ok=not short,
                   fix="reseat the GPU (or its riser); check the slot's BIOS PCIe setting")


def test_memory_health(node, probe, verdict):
    smi, _ = _smi(node, probe, verdict)
    known = [g for g in smi.gpus if g.memory.retirement_pending is not None or g.memory.remap_pending is not None]
    if not known:
        pytest.skip("these GPUs report neither page retirement nor row remapping (N/A)")
    bad = []
    for g in known:
        m = g.memory
        bad += [f"{g.bus_id}: {what}" for what, on in (("page retirement pending", m.retirement_pending),
                                                        ("row remapping pending", m.remap_pending),
                                                        ("row remapping failed", m.remap_failed)) if on]
    verdict.expect("nothing pending or failed", "; ".join(bad) or "nothing pending or failed", ok=not bad,
                   fix="reset the GPU (nvidia-smi -r, or reboot) to apply pending retirement/remapping; "
                   "a failed remap means RMA")


def test_clocks_at_idle(node, probe, verdict):
    smi, _ = _smi(node, probe, verdict)
    held = []
    for g in smi.gpus:
        reasons = g.slowdowns
        if g.utilization:  # under load the power cap is the board doing its job
            reasons = [r for r in reasons if r != "sw_power_cap"]
        if reasons:
            held.append(f"{g.bus_id}: {', '.join(reasons)}")
    if not any(g.clock_reasons for g in smi.gpus):
        pytest.skip("nvidia-smi reports no clock slowdown reasons for these GPUs")
    verdict.expect("no thermal or power slowdown", "; ".join(held) or "no thermal or power slowdown", ok=not held,
                   fix="check airflow, fans and inlet temperature, and the power limit (nvidia-smi -q -d "
                   "PERFORMANCE,POWER)")


def test_xid(node, probe, verdict):
    from racfg.hostfacts.xid import bus_key, parse_kernel_log, summarise

    smi, _ = _smi(node, probe, verdict)
    section = probe.section("xid")
    events = parse_kernel_log(section.out)
    names = {bus_key(g.bus_id): g.bus_id for g in smi.gpus}
    faults = [e for e in events if not e.application]
    apps = summarise([e for e in events if e.application], names)
    note = f"; application faults, not the board: {'; '.join(apps)}" if apps else ""
    verdict.expect("no hardware Xid since boot", "; ".join(summarise(faults, names)) + note if faults
                   else "no hardware Xid since boot" + note, ok=not faults, fix=RMA)


def test_dcgm_diag(node, probe, verdict, ctx):
    from racfg.hostfacts.dcgm import parse_diag

    _smi(node, probe, verdict)
    section = probe.section("dcgm", allow_fail=True)
    if section.missing:
        pytest.skip("DCGM is not installed (dcgmi not found): its diagnostic did not run; install "
                    "datacenter-gpu-manager to have validate run it")
    if "| Diagnostic" not in section.out:
        last = section.out.strip().splitlines()[-1][:160] if section.out.strip() else f"exit {section.rc}"
        pytest.skip(f"dcgmi diag did not run: {last}")
    diag = parse_diag(section.out)
    level = 2 if ctx.site.group_vars.get("racfg_validate_deep") else 1
    failed = [f"{t.name} failed on GPU {', '.join(t.failed_gpus)}" + (f" ({t.warnings[0][:160]})" if t.warnings else "")
              for t in diag.failures]
    verdict.expect(f"every level-{level} test passes", "; ".join(failed) or f"every level-{level} test passes",
                   ok=not failed, fix=RMA)
