"""The parsers of the tools smoke runs (racfg.hostfacts.iperf3, .fio, .perftest) and the switch counters,
on real, quirky output (tests/smoke/fixtures, see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from racfg.hostfacts.fio import parse_fio
from racfg.hostfacts.iperf3 import parse_iperf3
from racfg.hostfacts.parse_error import ParseError
from racfg.hostfacts.perftest import parse_perftest
from racfg.switches.parsers.port_counters import PortCounters, eos_counters, onyx_counters

FIXTURES = Path(__file__).parent / "fixtures"


def read(name: str) -> str:
    return (FIXTURES / name).read_bytes().decode()


def test_iperf3_39_forward_uses_the_receiver_figure_with_warmup_omitted() -> None:
    r = parse_iperf3(read("iperf3-J_v3.9_TCP-1stream-forward_omit3_cloud_CloudPilot.json"))
    assert r.bits_per_second == pytest.approx(464786288.6, rel=1e-9)
    assert r.sent_bits_per_second == pytest.approx(464521026.08, rel=1e-9)
    assert (r.version, r.streams, r.reverse, r.retransmits, r.truncated) == ("iperf 3.9", 1, False, 0, False)
    assert r.cpu_percent == pytest.approx(3.31256, rel=1e-4)


def test_iperf3_3011_old_schema_with_exponent_floats() -> None:
    r = parse_iperf3(read("iperf3-J_v3.0.11_TCP-1stream-forward_old-schema_thiezn-iperf3-python.json"))
    assert r.bits_per_second == pytest.approx(934268000.0)
    assert r.seconds == pytest.approx(13.0001)
    assert r.version == "iperf 3.0.11"


def test_iperf3_truncated_crlf_capture_is_salvaged_from_whole_intervals_and_marked() -> None:
    text = read("iperf3-J_v3.9_REVERSE-R_TRUNCATED-8192B_leading-ctrlC_CRLF_CloudPilot.json.txt")
    assert text.startswith("^C") and "\r\n" in text
    r = parse_iperf3(text)
    assert r.truncated and r.reverse
    # 15 complete intervals of 1 s before the cut, each 150-300 Mbit/s
    assert 14.9 < r.seconds < 16.1
    assert 150e6 < r.bits_per_second < 300e6


def test_iperf3_reverse_multistream_from_the_lab() -> None:
    r = parse_iperf3(read("iperf3-J_v3.12_REVERSE-R_P2_omit1_racfg-lab-250Mbit.json"))
    assert r.reverse and r.streams == 2 and r.version.startswith("iperf 3.12")
    assert 0.95 * 250e6 < r.bits_per_second <= 1.01 * 250e6


def test_iperf3_error_document_and_garbage() -> None:
    r = parse_iperf3('{"start": {}, "intervals": [], "end": {}, "error": "unable to connect to server: '
                     'Connection refused"}')
    assert r.error and "Connection refused" in r.error and r.bits_per_second == 0
    with pytest.raises(ParseError):
        parse_iperf3("iperf3: error - unable to connect")
    with pytest.raises(ParseError):
        parse_iperf3('{"start": {"version": "iperf 3.9"}, "intervals": [{"streams": [')


def test_fio_randrw_superbench() -> None:
    result = parse_fio(read("fio-3.16_randrw-4k_json_nvme0n1_superbench.json"))
    job = result.job("rand_read_write")
    assert result.version == "fio-3.16"
    assert job.read_bytes_per_s == 348743777 and job.read_iops == pytest.approx(85138.890741)
    assert job.write_iops == pytest.approx(85066.128925)
    assert (job.rw, job.block_size, job.error) == ("randrw", "4096", 0)


def test_fio_smoke_jobs_from_the_lab_are_read_only() -> None:
    text = read("fio-3.33_seqread-1m+randread-4k_json_readonly_racfg-lab.json")
    result = parse_fio("fio: some warning before the document\n" + text)
    seq, rand = result.job("seqread-1m"), result.job("randread-4k")
    assert seq.read_bytes_per_s > 0 and seq.write_bytes_per_s == 0
    assert rand.read_iops > 0 and rand.write_iops == 0
    with pytest.raises(ParseError, match="no job"):
        result.job("nothing")
    with pytest.raises(ParseError):
        parse_fio(text[: len(text) // 2])


@pytest.mark.parametrize(("name", "unit", "size", "gbits"), [
    ("ib_write_bw_--report_gbits_RoCE-100G_DGX-1_ConnectX-5_MOFED4.7_deepops-doc.txt", "Gb/sec", 65536, 92.40),
    ("ib_write_bw_-s8M_MBsec_HDR-loopback_server+client_superbench.txt", "MB/sec", 8388608,
     24056.72 * 1048576 * 8 / 1e9),
    ("ib_write_bw_-a_MBsec_HDR-loopback_server+client-interleaved_superbench.txt", "MB/sec", 8388608,
     23240.68 * 1048576 * 8 / 1e9),
    ("ib_write_bw_client_ConnectX-3-FDR10_MBsec_CPU-freq-warning-interleaved_FelixFu520.txt", "MB/sec", 65536,
     4508.79 * 1048576 * 8 / 1e9),
    ("ib_read_bw_-a_MBsec_IB-mlx5_EXCERPT-first-3-rows_openucx-ucx-issue-8851.txt", "MB/sec", 8,
     19.50 * 1048576 * 8 / 1e9),
])
def test_perftest_outputs(name: str, unit: str, size: int, gbits: float) -> None:
    result = parse_perftest(read(name))
    assert result.unit == unit
    assert max(r.size for r in result.rows) == size
    assert result.average_gbits == pytest.approx(gbits, rel=1e-6)


def test_perftest_interleaved_rows_are_deduplicated_and_fields_read() -> None:
    result = parse_perftest(read("ib_write_bw_-a_MBsec_HDR-loopback_server+client-interleaved_superbench.txt"))
    sizes = [r.size for r in result.rows]
    assert sizes == sorted(set(sizes)) and len(sizes) == 23  # 2 B .. 8 MiB, the repeated last row once
    deepops = parse_perftest(read("ib_write_bw_--report_gbits_RoCE-100G_DGX-1_ConnectX-5_MOFED4.7_deepops-doc.txt"))
    assert (deepops.test, deepops.device, deepops.link_type, deepops.mtu) == (
        "RDMA_Write", "mlx5_0", "Ethernet", "4096[B]")


def test_perftest_server_waiting_banner_alone_is_not_a_result() -> None:
    with pytest.raises(ParseError):
        parse_perftest("************************************\n* Waiting for client to connect... *\n")


def test_switch_counters_onyx_and_eos() -> None:
    onyx = onyx_counters(read("onyx_interfaces_show.txt"))
    assert set(onyx) == {"1/1"}  # VLAN entries are not ports
    assert onyx["1/1"] == PortCounters()
    eos = eos_counters(read("show_interfaces.json"))
    assert "Management1" not in eos
    assert eos["Ethernet2"].rx_bytes == 180591 and eos["Ethernet2"].tx_bytes == 16386


def test_counter_growth_survives_a_cleared_counter() -> None:
    before = PortCounters(rx_bytes=1000, tx_discards=5)
    after = PortCounters(rx_bytes=1500, tx_discards=2)  # cleared in between: counts from 0
    grown = after.minus(before)
    assert grown.rx_bytes == 500 and grown.tx_discards == 2 and grown.problems == 2
