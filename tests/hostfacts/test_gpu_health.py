"""Xid, DCGM and nvidia-smi health fields on recordings (kernel logs, dcgmi diag tables, -q -x)."""

from __future__ import annotations

import re

import pytest

from racfg.hostfacts import ParseError
from racfg.hostfacts.dcgm import parse_diag
from racfg.hostfacts.nvidia_smi import PcieLink, parse_query_xml
from racfg.hostfacts.xid import bus_key, parse_kernel_log, summarise


def unquote(text: str) -> str:
    """The gpud README recordings are Markdown quotes: ``> `` before every line, lone ``>`` between."""
    return "\n".join(re.sub(r"^> ?", "", line) for line in text.splitlines() if line.strip() != ">")


@pytest.mark.parametrize(
    ("fixture", "quoted", "codes", "summary"),
    [
        ("dmesg-T_Xid-119-GSP-RPC-timeout_Dell-XE9680_gpud-testdata.log", False, [119] * 5,
         ["GPU 0000:9b:00: Xid 119 GSP RPC Timeout (5x)"]),
        ("dmesg-ctime_Xid-13-and-109-CTX-SWITCH-TIMEOUT_MARKDOWN-QUOTED_gpud-readme.txt", True, [13, 13, 13, 109],
         ["GPU 0000:cb:00: Xid 13 Graphics Engine Exception (3x)",
          "GPU 0000:cb:00: Xid 109 Context Switch Timeout Error"]),
        ("dmesg-decode-time-format-iso_Xid-13-burst_EXCERPT_gpud-testdata.log", False, [13] * 16,
         ["GPU 0000:38:00: Xid 13 Graphics Engine Exception (16x)"]),
        ("dmesg_Xid-79-fallen-off-bus_with-NVSwitch-SXid-20034_MARKDOWN-QUOTED_gpud-readme.txt", True,
         [79] + [20034] * 8, None),
    ],
)
def test_xid_events(read, fixture, quoted, codes, summary):
    text = read(fixture)
    events = parse_kernel_log(unquote(text) if quoted else text)
    assert [e.code for e in events] == codes
    if summary is not None:
        assert summarise(events) == summary


def test_xid_79_and_nvswitch_sxids_are_hardware(read):
    text = unquote(read("dmesg_Xid-79-fallen-off-bus_with-NVSwitch-SXid-20034_MARKDOWN-QUOTED_gpud-readme.txt"))
    events = parse_kernel_log(text)
    assert events[0].meaning == "GPU has fallen off the bus" and not events[0].application
    assert {e.switch for e in events[1:]} == {"nvidia-nvswitch0", "nvidia-nvswitch1", "nvidia-nvswitch2"}
    assert "nvidia-nvswitch1: SXid 20034 NVSwitch error (fatal)" in summarise(events)
    assert all(not e.application for e in events)


def test_xid_names_the_gpu_by_its_nvidia_smi_bus_id():
    line = "NVRM: Xid (PCI:0000:0d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    events = parse_kernel_log(line)
    assert bus_key("00000000:00:0D.0") == bus_key("0000:00:0d") == "00:0d"
    named = summarise(events, {"0d:00": "00000000:0D:00.0"})
    assert named == ["GPU 00000000:0D:00.0: Xid 79 GPU has fallen off the bus"]


def test_a_log_without_xid_is_clean():
    assert parse_kernel_log("[    0.000000] Linux version 6.1.0\n") == []


@pytest.mark.parametrize(
    ("fixture", "version", "failures"),
    [
        ("dcgmi-diag-r1_4x-A10G_DCGM-3.3.9_drv-570.195.03_pass_sagemaker-health-check.txt", "3.3.9", []),
        ("dcgmi-diag-r2-i0_1x-A10G_DCGM-4.4.2_drv-580.105.08_v4-format_pass_DCGM-issue-124.txt", "4.4.2", []),
        ("dcgmi-diag-r3_4x-A10G_DCGM-3.3.9_pass_EUD-Skip_other-node_sagemaker-health-check.txt", "3.3.9", []),
        ("dcgmi-diag-r2_8x-B200_DCGM-4.4.1_drv-570.172.08_v4-format_pcie-FAIL-internal-error_DCGM-issue-253.txt",
         "4.4.1", [("pcie", ["all"])]),
        ("dcgmi-diag-r3-fail-early_8x-H100_DCGM-3.3.8_drv-560.35.03_GPUMemory-FAIL-cuInit_PCIe-Skip_"
         "nccl-tests-issue-264.txt",
         "3.3.8", [("GPU Memory", ["all"])]),
        ("dcgmi-diag-r3_4x-A10G_DCGM-3.3.9_TargetedPower-FAIL-GPU1_EUD-Skip_sagemaker-health-check.txt", "3.3.9",
         [("Targeted Power", ["1"])]),
    ],
)
def test_dcgm_diag(read, fixture, version, failures):
    diag = parse_diag(read(fixture))
    assert diag.metadata["DCGM Version"] == version
    assert [(t.name, t.failed_gpus) for t in diag.failures] == failures


def test_dcgm_warning_rows_are_joined_where_dcgm_cut_them(read):
    diag = parse_diag(read("dcgmi-diag-r3_4x-A10G_DCGM-3.3.9_TargetedPower-FAIL-GPU1_EUD-Skip_"
                           "sagemaker-health-check.txt"))
    [power] = diag.failures
    assert power.warnings == ["GPU 1 Max power of 224.1 did not reach desired power minimum target_power_min_ratio "
                              "of 224.2 for GPU 1 Verify that the clock speeds and GPU utilization are high."]
    skipped = [t.name for t in diag.tests if t.status == "Skip"]
    assert skipped == ["EUD Test"]


def test_dcgm_without_a_table_is_a_parse_error():
    with pytest.raises(ParseError):
        parse_diag("Error: unable to establish a connection to the specified host: localhost\n")


@pytest.mark.parametrize(
    ("fixture", "pcie", "idle", "retirement_pending"),
    [
        ("nvidia-smi-q-x_8x-Tesla-V100S-PCIE-32GB_driver-460.73.01_datakit.xml", PcieLink(3, 3, 16, 16), False, False),
        ("nvidia-smi-q-x_A100-SXM4_dtd-v12_telegraf-testdata.xml", PcieLink(4, 4, 16, 16), False, None),
        ("nvidia-smi-q-x_Tesla-P100-PCIE_netdata-testdata.xml", PcieLink(3, 3, 16, 16), True, False),
        ("nvidia-smi-q-x_Tesla-T4_telegraf-testdata.xml", PcieLink(3, 3, 16, 8), False, False),
    ],
)
def test_health_fields(read, fixture, pcie, idle, retirement_pending):
    gpu = parse_query_xml(read(fixture)).gpus[0]
    assert gpu.pcie == pcie
    assert gpu.clock_reasons["gpu_idle"] is idle  # throttle (v11) and event (v12, A100) naming alike
    assert gpu.slowdowns == []
    assert gpu.memory.retirement_pending is retirement_pending
    assert gpu.memory.remap_pending is None  # remapped_rows is N/A in every recording
