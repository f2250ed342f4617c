"""nvidia-smi parsers on recordings of V100S, P100, T4 (DTD v11) and A100 (DTD v12) and a DGX-1 NVLink status."""

from __future__ import annotations

import pytest

from racfg.hostfacts import ParseError
from racfg.hostfacts.nvidia_smi import EccErrors, driver_branch, parse_nvlink_status, parse_query_xml

ZERO = EccErrors(0, 0, 0, 0)


@pytest.mark.parametrize(
    ("fixture", "driver", "attached", "bus_ids", "product", "persistence", "ecc", "errors"),
    [
        ("nvidia-smi-q-x_8x-Tesla-V100S-PCIE-32GB_driver-460.73.01_datakit.xml", "460.73.01", 8,
         [f"00000000:00:{n:02X}.0" for n in range(0x0D, 0x15)], "Tesla V100S-PCIE-32GB", False, True, ZERO),
        # The telegraf fixture keeps one <gpu> of the four the driver counts: count != elements.
        ("nvidia-smi-q-x_A100-SXM4_dtd-v12_telegraf-testdata.xml", "535.54.03", 4,
         ["00000000:01:00.0"], "NVIDIA A100-SXM4-80GB", False, True, ZERO),
        # 3 corrected single-bit errors since the counters were reset, none uncorrectable.
        ("nvidia-smi-q-x_Tesla-P100-PCIE_netdata-testdata.xml", "510.47.03", 1,
         ["00000000:00:04.0"], "Tesla P100-PCIE-16GB", False, True, EccErrors(0, 0, 0, 3)),
        ("nvidia-smi-q-x_Tesla-T4_telegraf-testdata.xml", "515.105.01", 1,
         ["00000000:00:1E.0"], "Tesla T4", False, True, ZERO),
    ],
)
def test_query_xml(read, fixture, driver, attached, bus_ids, product, persistence, ecc, errors):
    log = parse_query_xml(read(fixture))
    assert log.driver_version == driver
    assert log.attached_gpus == attached
    assert [gpu.bus_id for gpu in log.gpus] == bus_ids
    for gpu in log.gpus:
        assert (gpu.product_name, gpu.persistence_mode, gpu.ecc_mode, gpu.ecc_errors) == (product, persistence, ecc,
                                                                                           errors)
        assert gpu.uuid is not None and gpu.uuid.startswith("GPU-")


def test_query_xml_with_crlf_and_a_warning_before_it(read):
    text = read("nvidia-smi-q-x_Tesla-T4_telegraf-testdata.xml")
    log = parse_query_xml("Warning: persistence mode is disabled on device 00000000:00:1E.0\r\n"
                          + text.replace("\n", "\r\n"))
    assert [gpu.product_name for gpu in log.gpus] == ["Tesla T4"]


def test_nvlink_status_dgx1_with_snipped_gpus(read):
    gpus = parse_nvlink_status(read("nvidia-smi-nvlink--status_DGX-1_V100-SXM2-32GB_EXCERPT-snipped_microway-via-"
                                    "FelixFu520.txt"))
    assert [(gpu.index, gpu.name, gpu.count, gpu.up, gpu.down) for gpu in gpus] == [
        (0, "Tesla V100-SXM2-32GB", 6, 6, 0), (7, "Tesla V100-SXM2-32GB", 6, 6, 0)]
    assert set(gpus[0].links.values()) == {25.781}


def test_nvlink_status_counts_inactive_links_as_down(read):
    # The recorded DGX-1 output with link 5 of GPU 7 the way a down link prints (``<inactive>``).
    text = read("nvidia-smi-nvlink--status_DGX-1_V100-SXM2-32GB_EXCERPT-snipped_microway-via-FelixFu520.txt")
    head, _, tail = text.rpartition("Link 5: 25.781 GB/s")
    gpus = parse_nvlink_status(head + "Link 5: <inactive>" + tail)
    assert (gpus[1].up, gpus[1].down, gpus[1].links[5]) == (5, 1, None)


@pytest.mark.parametrize(("version", "branch"), [("418.67", "418"), ("460.73.01", "460"), ("535", "535")])
def test_driver_branch(version, branch):
    assert driver_branch(version) == branch


def test_driver_branch_rejects_garbage():
    with pytest.raises(ParseError, match="not a driver version"):
        driver_branch("latest")
