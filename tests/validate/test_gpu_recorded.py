"""The GPU checks on recorded real output: nvidia-smi, kernel logs with Xids, dcgmi diag tables.

Same table shape as test_checks_recorded: a host's rendered variables, the probe sections it would
have captured (recordings from tests/hostfacts/fixtures, copies of shared/device-outputs/hosts), the
check and the status and actual text it must report. Each check has a pass, a fail and a skip row
where a real recording gives one; where none exists (no recording of an active thermal slowdown or a
pending row remap from a real host) the row says so instead of inventing output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from racfg.results import Status
from racfg.validate.context import RenderedSite, ValidateContext
from racfg.validate.probe import HostProbe, Section, parse_output
from racfg.validate.validate_run import ValidateOptions, run_checks

FIXTURES = Path(__file__).parents[1] / "hostfacts" / "fixtures"
DEVICE = Path(__file__).parents[1] / "recordings" / "h100-device"
V100S = "nvidia-smi-q-x_8x-Tesla-V100S-PCIE-32GB_driver-460.73.01_datakit.xml"
A100 = "nvidia-smi-q-x_A100-SXM4_dtd-v12_telegraf-testdata.xml"
T4 = "nvidia-smi-q-x_Tesla-T4_telegraf-testdata.xml"
P100 = "nvidia-smi-q-x_Tesla-P100-PCIE_netdata-testdata.xml"
NVLINK_DGX1 = "nvidia-smi-nvlink--status_DGX-1_V100-SXM2-32GB_EXCERPT-snipped_microway-via-FelixFu520.txt"
NVLINK_A100 = "nvidia-smi-nvlink--status_8x-A100-SXM4-80GB_12-links-25GBps_gpud-testdata.txt"
XID_119 = "dmesg-T_Xid-119-GSP-RPC-timeout_Dell-XE9680_gpud-testdata.log"
XID_13 = "dmesg-decode-time-format-iso_Xid-13-burst_EXCERPT_gpud-testdata.log"
DCGM_R1 = "dcgmi-diag-r1_4x-A10G_DCGM-3.3.9_drv-570.195.03_pass_sagemaker-health-check.txt"
DCGM_R2_B200 = "dcgmi-diag-r2_8x-B200_DCGM-4.4.1_drv-570.172.08_v4-format_pcie-FAIL-internal-error_DCGM-issue-253.txt"
DCGM_R3_POWER = "dcgmi-diag-r3_4x-A10G_DCGM-3.3.9_TargetedPower-FAIL-GPU1_EUD-Skip_sagemaker-health-check.txt"
MISSING = Section(127, "sh: 1: nvidia-smi: not found")
DCGM_MISSING = Section(127, "dcgmi: not found")


def rec(name: str) -> Section:
    return Section(0, (FIXTURES / name).read_text(encoding="utf-8"))


def h100(**changed: Section) -> dict[str, Section]:
    """The sections racfg's own probe script captured on a real H100 with driver 580 (one GPU passed
    through to a VM: no NVLink, no DCGM), split as validate splits them; ``changed`` replaces some."""
    text = (DEVICE / "racfg-probe_dgx-gpu-sections_1x-H100-80GB-HBM3_driver-580.159.04_h100-device.txt").read_text()
    return {**parse_output(text), **changed}


def sram_secded(count: int) -> Section:
    """The H100's real ``-q -x`` (DTD v13) with its volatile SRAM SECDED uncorrectable counter set."""
    text = h100()["nvidia_smi"].out
    return Section(0, text.replace("<sram_uncorrectable_secded>0<", f"<sram_uncorrectable_secded>{count}<", 1))


def dgx(model: str | None = "DGX-1", **extra: Any) -> dict[str, Any]:
    return {"ansible_host": "198.18.0.11", "racfg_role": "dgx", "racfg_gpus": 8, "racfg_nics": [],
            "racfg_drives": [], "racfg_model": model, **extra}


GROUP = {"racfg_site": "rec", "racfg_fabric": {"type": "ethernet", "speed_gbps": 100.0}, "racfg_ofed": None,
         "racfg_weka": None, "racfg_nvidia_driver": None, "racfg_tuning": {"profile": "none"}}
LAB = dgx(racfg_gpu_required=False)

# (id, host vars, probe sections, check glob, status, text in actual or message)
CASES = [
    # GPU model against the server model's catalog entry
    ("dgx-1 with V100S PCIe", dgx(), {"nvidia_smi": rec(V100S)}, "*/gpu/model", Status.FAIL,
     "Tesla V100S-PCIE-32GB"),
    ("dgx a100 with A100 SXM4", dgx("DGX A100"), {"nvidia_smi": rec(A100)}, "*/gpu/model", Status.PASS,
     "A100-SXM4-80GB"),
    ("unknown model, gpu_model given", dgx("Custom 4U", racfg_gpu_model="Tesla T4"), {"nvidia_smi": rec(T4)},
     "*/gpu/model", Status.PASS, "Tesla T4"),
    ("unknown model, gpu_model other", dgx("Custom 4U", racfg_gpu_model="Tesla P100 PCIe"), {"nvidia_smi": rec(T4)},
     "*/gpu/model", Status.FAIL, "Tesla T4"),
    ("unknown model, no gpu_model", dgx("Custom 4U"), {"nvidia_smi": rec(T4)}, "*/gpu/model", Status.SKIP,
     "nothing to be compared"),
    # NVLink against the model
    ("dgx-1 nvlink 6 links of 25.781", dgx(), {"nvidia_smi": rec(V100S), "nvlink": rec(NVLINK_DGX1)},
     "*/gpu/nvlink", Status.PASS, "6 links per GPU"),
    ("dgx h100 wants 18 links, a100 has 12", dgx("DGX H100"), {"nvidia_smi": rec(A100), "nvlink": rec(NVLINK_A100)},
     "*/gpu/nvlink", Status.FAIL, "GPU 0: 12 of 18 links up"),
    ("dgx a100 12 links", dgx("DGX A100"), {"nvidia_smi": rec(A100), "nvlink": rec(NVLINK_A100)},
     "*/gpu/nvlink", Status.PASS, "12 links per GPU"),
    ("pcie model has no nvlink", dgx("Custom", racfg_gpu_model="Tesla T4"), {"nvidia_smi": rec(T4)},
     "*/gpu/nvlink", Status.SKIP, "no NVLink"),
    # PCIe link
    ("v100s gen3 x16", dgx("Custom", racfg_gpu_model="Tesla V100 PCIe"), {"nvidia_smi": rec(V100S)},
     "*/gpu/pcie_link", Status.PASS, "Gen3 x16"),
    ("t4 trained at x8", dgx("Custom", racfg_gpu_model="Tesla T4"), {"nvidia_smi": rec(T4)},
     "*/gpu/pcie_link", Status.FAIL, "Gen3 x8"),
    ("a100 sxm4 gen4 x16 in a dgx a100", dgx("DGX A100"), {"nvidia_smi": rec(A100)}, "*/gpu/pcie_link",
     Status.PASS, "Gen4 x16"),
    ("v100s gen3 in a dgx h100 (gen5)", dgx("DGX H100"), {"nvidia_smi": rec(V100S)}, "*/gpu/pcie_link",
     Status.FAIL, "Gen3 x16"),
    # memory: retired pages (Volta/Turing/Pascal) and row remapping (N/A on these)
    ("v100s no retirement pending", dgx(), {"nvidia_smi": rec(V100S)}, "*/gpu/memory_health", Status.PASS,
     "nothing pending"),
    ("a100 excerpt: all N/A", dgx("DGX A100"), {"nvidia_smi": rec(A100)}, "*/gpu/memory_health", Status.SKIP,
     "N/A"),
    # clocks: none of the real recordings has an active slowdown (SOURCES.md: not found from a real host)
    ("p100 idle, only the idle reason", dgx(), {"nvidia_smi": rec(P100)}, "*/gpu/clocks_at_idle", Status.PASS,
     "no thermal or power slowdown"),
    ("v100s busy, no slowdown", dgx(), {"nvidia_smi": rec(V100S)}, "*/gpu/clocks_at_idle", Status.PASS,
     "no thermal or power slowdown"),
    # Xid
    ("xid 119 gsp timeout", dgx(), {"nvidia_smi": rec(V100S), "xid": rec(XID_119)}, "*/gpu/xid", Status.FAIL,
     "Xid 119 GSP RPC Timeout (5x)"),
    ("xid 13 is an application fault", dgx(), {"nvidia_smi": rec(V100S), "xid": rec(XID_13)}, "*/gpu/xid",
     Status.PASS, "Xid 13 Graphics Engine Exception"),
    ("clean kernel log", dgx(), {"nvidia_smi": rec(V100S), "xid": Section(0, "")}, "*/gpu/xid", Status.PASS,
     "no hardware Xid"),
    # DCGM
    ("dcgm r1 pass", dgx(), {"nvidia_smi": rec(V100S), "dcgm": rec(DCGM_R1)}, "*/gpu/dcgm_diag", Status.PASS,
     "every level-1 test passes"),
    ("dcgm r2 pcie internal error", dgx(), {"nvidia_smi": rec(V100S), "dcgm": rec(DCGM_R2_B200)},
     "*/gpu/dcgm_diag", Status.FAIL, "pcie failed on GPU all (There was an internal error"),
    ("dcgm targeted power gpu 1", dgx(), {"nvidia_smi": rec(V100S), "dcgm": rec(DCGM_R3_POWER)},
     "*/gpu/dcgm_diag", Status.FAIL, "Targeted Power failed on GPU 1"),
    ("dcgm absent", dgx(), {"nvidia_smi": rec(V100S), "dcgm": DCGM_MISSING}, "*/gpu/dcgm_diag", Status.SKIP,
     "DCGM is not installed"),
    ("dcgm hostengine down", dgx(), {"nvidia_smi": rec(V100S), "dcgm": Section(
        255, "Error: unable to establish a connection to the specified host: localhost")},
     "*/gpu/dcgm_diag", Status.SKIP, "unable to establish a connection"),
    # A real H100 (driver 580, DTD v13), recorded on the device (tests/recordings/h100-device)
    ("h100: one gpu where a dgx h100 has 8", dgx("DGX H100"), h100(), "*/gpu/count", Status.FAIL, "Expected: 8"),
    ("h100: one gpu declared", dgx("DGX H100", racfg_gpus=1), h100(), "*/gpu/count", Status.PASS, "1"),
    ("h100: model of a dgx h100", dgx("DGX H100"), h100(), "*/gpu/model", Status.PASS, "NVIDIA H100 80GB HBM3"),
    ("h100: persistence on", dgx("DGX H100"), h100(), "*/gpu/persistence_mode", Status.PASS, "on for every GPU"),
    ("h100: ecc on, counters 0", dgx("DGX H100"), h100(), "*/gpu/ecc", Status.PASS, "no uncorrectable errors"),
    ("h100: v13 sram secded error", dgx("DGX H100"), h100(nvidia_smi=sram_secded(2)), "*/gpu/ecc", Status.FAIL,
     "uncorrectable errors 00000000:00:06.0: 2"),
    ("h100: nvlink prints nothing, dgx h100 wants 18", dgx("DGX H100"), h100(), "*/gpu/nvlink", Status.FAIL,
     "0 of 18 links up on each of 1 GPU(s) (nvidia-smi nvlink --status printed nothing)"),
    ("h100: nvlink prints nothing, model unknown", dgx("Custom 1U"), h100(), "*/gpu/nvlink", Status.SKIP,
     "report no NVLink links"),
    ("h100: gen5 x16", dgx("DGX H100"), h100(), "*/gpu/pcie_link", Status.PASS, "Gen5 x16"),
    ("h100: remapped rows, none pending", dgx("DGX H100"), h100(), "*/gpu/memory_health", Status.PASS,
     "nothing pending or failed"),
    ("h100: idle, no slowdown", dgx("DGX H100"), h100(), "*/gpu/clocks_at_idle", Status.PASS,
     "no thermal or power slowdown"),
    ("h100: kernel log read, no xid", dgx("DGX H100"), h100(), "*/gpu/xid", Status.PASS, "no hardware Xid"),
    ("h100: dcgmi not installed", dgx("DGX H100"), h100(), "*/gpu/dcgm_diag", Status.SKIP, "DCGM is not installed"),
]
GPU_CHECKS = ("count", "model", "nvlink", "pcie_link", "memory_health", "clocks_at_idle", "xid", "dcgm_diag")


def run(hv: dict[str, Any], sections: dict[str, Section], glob: str):
    site = RenderedSite(group_vars=GROUP, hosts={"h1": hv}, switches={})
    ctx = ValidateContext(site, inventory_display="rec.yaml")
    ctx._probes = {"h1": HostProbe("h1", sections=sections)}
    ctx._switch_facts = {}
    return run_checks(ctx, ValidateOptions(checks=[glob]))


@pytest.mark.parametrize(("hv", "sections", "glob", "status", "text"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_recorded(hv, sections, glob, status, text):
    results = run(hv, sections, glob)
    assert len(results) == 1, results
    result = results[0]
    assert result.status is status, (result.check, result.status, result.message)
    assert text in f"{result.actual or ''} {result.message}", result
    if status is Status.FAIL:
        assert result.message.startswith("Expected: ") and result.fix
        if glob.removeprefix("*/gpu/") in GPU_CHECKS:  # hardware: a person's work, never a deploy (issue 52)
            assert "racfg deploy" not in result.fix, result.fix


@pytest.mark.parametrize("check", GPU_CHECKS)
def test_no_gpu_on_a_lab_skips_every_check_with_the_reason(check):
    sections = {"nvidia_smi": MISSING, "nvlink": MISSING, "xid": Section(0, ""), "dcgm": DCGM_MISSING}
    [result] = run(LAB, sections, f"*/gpu/{check}")
    assert result.status is Status.SKIP
    assert "no GPU here (nvidia-smi not found)" in result.message


@pytest.mark.parametrize("check", GPU_CHECKS)
def test_no_gpu_where_gpus_are_required_fails_every_check(check):
    sections = {"nvidia_smi": MISSING, "nvlink": MISSING, "xid": Section(0, ""), "dcgm": DCGM_MISSING}
    [result] = run(dgx(), sections, f"*/gpu/{check}")
    assert result.status is Status.FAIL
    assert "nvidia-smi not found" in (result.actual or "")


def test_unreadable_kernel_log_is_an_error_not_a_clean_log():
    [result] = run(dgx(), {"nvidia_smi": rec(V100S), "xid": Section(3, "dmesg: read kernel buffer failed")},
                   "*/gpu/xid")
    assert result.status is Status.ERROR


def test_deep_runs_dcgm_level_2():
    """validate --deep: the probe asks DCGM for level 2 and the verdict says which level ran."""
    site = RenderedSite(group_vars={**GROUP, "racfg_validate_deep": True}, hosts={"h1": dgx()}, switches={})
    ctx = ValidateContext(site, inventory_display="rec.yaml")
    assert run_checks(ctx, ValidateOptions(checks=["-none-"])) == [] and ctx.commands  # the validators' declarations
    assert ctx.commands(dgx(), GROUP, [])["dcgm"].endswith("dcgmi diag -r 1")
    assert ctx.commands(dgx(), site.group_vars, [])["dcgm"].endswith("dcgmi diag -r 2")
    ctx._probes = {"h1": HostProbe("h1", sections={"nvidia_smi": rec(V100S), "dcgm": rec(
        "dcgmi-diag-r2-i0_1x-A10G_DCGM-4.4.2_drv-580.105.08_v4-format_pass_DCGM-issue-124.txt")})}
    ctx._switch_facts = {}
    [result] = run_checks(ctx, ValidateOptions(checks=["*/gpu/dcgm_diag"]))
    assert result.status is Status.PASS and "every level-2 test passes" in (result.actual or "")


def test_h100_probe_sections_as_validate_reads_them():
    """racfg's probe script on the H100: every GPU section present, with the exit code racfg keeps."""
    sections = h100()
    assert {key: section.rc for key, section in sections.items()} == {"nvidia_smi": 0, "nvlink": 0, "xid": 0,
                                                                       "dcgm": 127}
    assert sections["nvlink"].out == "" and sections["xid"].out == ""
    assert sections["dcgm"].missing and not sections["nvlink"].missing


def test_h100_nvlink_failure_names_the_links_expected():
    [result] = run(dgx("DGX H100"), h100(), "*/gpu/nvlink")
    assert result.status is Status.FAIL
    assert result.expected == "18 links per GPU at 25 GB/s (NVLink 4, DGX H100)"
