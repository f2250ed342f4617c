"""The GPU parsers on what a real H100 with driver 580 printed (tests/recordings/h100-device, recorded by
scripts/record_gpu_outputs.sh): ``-q -x`` in DTD v13, an empty ``nvlink --status``, a clean kernel log."""

from __future__ import annotations

import pytest

from racfg.catalog import host_gpu
from racfg.hostfacts import ParseError
from racfg.hostfacts.nvidia_smi import (
    EccErrors,
    MemoryHealth,
    PcieLink,
    driver_branch,
    parse_nvlink_status,
    parse_query_xml,
)
from racfg.hostfacts.xid import parse_kernel_log

from .conftest import read_device

QUERY = "nvidia-smi-q-x_1x-H100-80GB-HBM3_driver-580.159.04_dtd-v13_h100-device.xml"
NVLINK = "nvidia-smi-nvlink--status_1x-H100-80GB-HBM3_passthrough-no-NVLink_EMPTY-rc0_driver-580.159.04_h100-device.txt"
TOPO = ("nvidia-smi-topo-m_1x-H100-80GB-HBM3_one-GPU-no-peers_ANSI-underline-header_driver-580.159.04_"
        "h100-device.txt")
LIST = "nvidia-smi-L_1x-H100-80GB-HBM3_driver-580.159.04_h100-device.txt"
XID = "kernel-log-Xid-read_racfg-probe_clean-EMPTY_1x-H100-80GB-HBM3_driver-580.159.04_h100-device.txt"
DMESG = "dmesg_NVRM-lines-no-Xid_1x-H100-80GB-HBM3_driver-580.159.04_h100-device.txt"


def test_query_xml_of_an_h100_with_driver_580():
    smi = parse_query_xml(read_device(QUERY))
    assert (smi.driver_version, smi.cuda_version, smi.attached_gpus) == ("580.159.04", "13.0", 1)
    assert driver_branch(smi.driver_version) == "580"
    [gpu] = smi.gpus
    assert (gpu.bus_id, gpu.product_name) == ("00000000:00:06.0", "NVIDIA H100 80GB HBM3")
    assert host_gpu("DGX H100", None).matches(gpu.product_name)
    assert (gpu.persistence_mode, gpu.ecc_mode, gpu.ecc_mode_pending, gpu.utilization) == (True, True, True, 0)
    assert gpu.pcie == PcieLink(max_gen=5, current_gen=5, max_width=16, current_width=16)
    assert gpu.ecc_errors == EccErrors(0, 0, 0, 0)
    # Hopper has no page retirement (N/A) but real remapped-row counters: the first recording with them.
    assert gpu.memory == MemoryHealth(remap_correctable=0, remap_uncorrectable=0, remap_pending=False,
                                      remap_failed=False)
    assert gpu.clock_reasons["gpu_idle"] is True and gpu.slowdowns == []
    assert set(gpu.clock_reasons) >= {"sw_power_cap", "hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown"}


@pytest.mark.parametrize(
    ("counter", "volatile_uncorrectable", "volatile_correctable"),
    [
        (None, 0, 0),  # the recording as printed
        ("sram_uncorrectable_secded", 2, 0),  # v13 has no sram_uncorrectable sum: these two stand in for it
        ("sram_uncorrectable_parity", 2, 0),
        ("dram_uncorrectable", 2, 0),
        ("sram_correctable", 0, 2),
    ],
)
def test_v13_ecc_counters_are_all_counted(counter, volatile_uncorrectable, volatile_correctable):
    """The real v13 recording with one volatile counter set to 2, as a GPU with that error prints it
    (the element names and their place are the driver's; only the number is changed)."""
    text = read_device(QUERY)
    if counter is not None:
        element = f"<{counter}>0</{counter}>"
        assert element in text
        text = text.replace(element, f"<{counter}>2</{counter}>", 1)  # the first is the volatile block's
    [gpu] = parse_query_xml(text).gpus
    assert gpu.ecc_errors == EccErrors(volatile_uncorrectable, 0, volatile_correctable, 0)


def test_nvlink_status_of_a_gpu_without_nvlink_is_empty():
    """Driver 580 prints nothing and exits 0 for the single passed-through H100 (topo -m shows no NV#
    peer either). The parser keeps its contract (no output is a ParseError); the validator, which has
    the exit code, judges an empty rc-0 answer as no links (tests/validate/test_gpu_recorded.py)."""
    assert read_device(NVLINK) == ""
    with pytest.raises(ParseError, match="no output"):
        parse_nvlink_status(read_device(NVLINK))
    matrix = [line for line in read_device(TOPO).splitlines() if line.startswith("GPU0")]
    assert matrix and not any("NV" in line.split() for line in matrix)


def test_one_gpu_listed_as_smoke_and_validate_count_it():
    listed = [line for line in read_device(LIST).splitlines() if line.startswith("GPU ")]  # smoke's nccl phase's rule
    assert len(listed) == len(parse_query_xml(read_device(QUERY)).gpus) == 1


@pytest.mark.parametrize("recording", [XID, DMESG], ids=["racfg's Xid read", "the driver's NVRM lines"])
def test_a_clean_kernel_log_of_driver_580(recording):
    """The probe's Xid read printed nothing; the NVRM lines the driver did log (module load, an FBHUB
    interrupt cleared at boot, the persistence-mode notice) are not Xid events."""
    assert parse_kernel_log(read_device(recording)) == []
