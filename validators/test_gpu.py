"""dgx hosts: GPUs through nvidia-smi: count, model, driver branch, persistence, ECC, NVLink.

Without an NVIDIA driver the checks are skipped with that reason only where the site allows it
(``racfg_gpu_required`` false, e.g. the virtual lab); on a GPU server that must have GPUs, a
missing nvidia-smi is a failure, never a pass.
"""

from __future__ import annotations

import pytest

FIX_TAGS = "gpu"
pytestmark = pytest.mark.roles("dgx")


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


def test_count(node, probe, verdict):
    smi, expected = _smi(node, probe, verdict)
    verdict.expect(expected, len(smi.gpus),
                   fix="reseat or replace the missing GPU (nvidia-smi -q lists the present ones)")


def test_model(node, probe, verdict):
    smi, _ = _smi(node, probe, verdict)
    names = sorted({g.product_name for g in smi.gpus})
    model = str(node.vars.get("racfg_model") or "")
    verdict.expect("one GPU model", ", ".join(names), ok=len(names) == 1, message=f"server model {model}")


def test_driver_branch(node, probe, verdict, ctx):
    from racfg.hostfacts.nvidia_smi import driver_branch

    smi, _ = _smi(node, probe, verdict)
    pin = ctx.site.group_vars.get("racfg_nvidia_driver")
    if not pin:
        verdict.note(f"driver {smi.driver_version} (no pin: software.nvidia_driver)")
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

    _smi(node, probe, verdict)
    section = probe.section("nvlink", allow_fail=True)
    links = parse_nvlink_status(section.out) if section.ok else []
    if not links or not any(g.count for g in links):
        pytest.skip("these GPUs report no NVLink links (PCIe GPUs)")
    down = [f"GPU {i} {g.down} down" for i, g in enumerate(links) if g.down]
    verdict.expect("every NVLink up", "; ".join(down) or "every NVLink up", ok=not down,
                   fix="reseat the GPU baseboard / NVLink bridge; check nvidia-smi nvlink --status")
