"""The nccl step's parts: nccl-tests output on recordings, the marks derived from the declared
hardware, the pairwise isolation on tables of pair results, the launch command lines."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from racfg.catalog import GPU_MODELS, HOST_MODELS, host_gpu
from racfg.hostfacts import ParseError
from racfg.hostfacts.nccl_tests import parse_output
from racfg.inventory.model import NcclTests
from racfg.results import Status
from racfg.smoke.gpu_presence import gpu_counts
from racfg.smoke.nccl_marks import NET_FACTOR, expected_busbw, inter_node, intra_node, isolate
from racfg.smoke.phases.nccl_allreduce import ONE_RANK, command_line, run_result
from tests.hostfacts.conftest import read_device, read_fixture

# (recording, rows, avg busbw line, largest size, its out-of-place / in-place busbw, hosts)
RECORDINGS = [
    ("all_reduce_perf_1node-g8_8x-V100-SXM2-16GB_old-format-error-column_konnase-blog.txt", 25, 25.9598,
     134217728, 129.14, 128.92, ["9a417caaf03b"]),
    ("all_reduce_perf_1node-8x-A100-SXM4-40GB_validation0-NA_superbench.txt", 34, 68.4048,
     8589934592, 235.26, 235.03, ["localhost"]),
    ("all_gather_perf_1node-8x-A100-SXM4-40GB_validation0-NA_superbench.txt", 34, 58.2651,
     8589934592, 223.39, 230.07, ["localhost"]),
    ("all_reduce_perf_mpirun-2nodes-16ranks_2x8-H100-80GB-HBM3_GCP-A3-Mega_lessizzmore.txt", 31, 70.742,
     8589934592, 338.82, 337.35, ["ztan-mig-235z", "ztan-mig-gq73"]),
    ("all_reduce_perf_mpirun-2nodes-2ranks_T4-g4dn.metal_EFA_NCCL-INFO-interleaved_mpi-rank-prefix_eks-blueprints.txt",
     31, 1.15327, 1073741824, 3.11, 3.12, ["test-nccl-efa-worker-0", "test-nccl-efa-worker-1"]),
    ("all_reduce_perf_mpirun-2nodes_p5.48xlarge-H100_EFA_16GiB-size-overflows-column_EXCERPT-no-header_INDENTED-4_"
     "eks-blueprints.txt", 32, 123.343, 17179869184, 480.87, 482.82, []),
    ("all_reduce_perf_g4_DEGRADED-SYS-boundary-P2P-disabled_4x-A40_1.40GBps_EXCERPT-table-only_LLM-Insights.txt",
     4, 1.40216, 8589934592, 1.35, 1.35, []),
]


@pytest.mark.parametrize(("fixture", "rows", "avg", "size", "out", "inp", "hosts"), RECORDINGS,
                         ids=[r[0][:48] for r in RECORDINGS])
def test_parse_recordings(fixture, rows, avg, size, out, inp, hosts):
    run = parse_output(read_fixture(fixture))
    assert len(run.rows) == rows
    assert run.avg_busbw == avg
    assert (run.largest.size, run.largest.busbw_out, run.largest.busbw_in) == (size, out, inp)
    assert run.largest.busbw == max(out, inp)
    assert run.hosts == hosts


# One H100 (tests/recordings/h100-device): (recording, rows, largest size, its out-of-place / in-place algbw)
H100_GPU = HOST_MODELS["DGX H100"].gpu
H100 = "1x-H100-80GB-HBM3_{}_NCCL-2.28.9_nccl-tests-2.19.6_h100-device.txt"
H100_REDUCE = "all_reduce_perf_b8-e256M-f2-g1_" + H100.format("one-rank-busbw-0")
H100_GATHER = "all_gather_perf_b8-e256M-f2-g1_" + H100.format("one-rank-busbw-0")
H100_DEFAULT = "all_reduce_perf_b1G-e8G-f2-g1_racfg-default_" + H100.format("algbw-in-e-notation")
DEVICE_RUNS = [
    (H100_REDUCE, 26, 268435456, 1484.7, 758078.0),
    (H100_GATHER, 26, 268435456, 1488.5, 1e6),  # in-place "1e+06": the row was dropped before the fix
    (H100_DEFAULT, 4, 8589934592, 1516.5, 9e6),  # racfg's default sizes: every in-place algbw in e-notation
]


@pytest.mark.parametrize(("fixture", "rows", "size", "algbw_out", "algbw_in"), DEVICE_RUNS,
                         ids=["all_reduce", "all_gather", "all_reduce racfg default"])
def test_one_rank_runs_on_an_h100(fixture, rows, size, algbw_out, algbw_in):
    """One rank: every busbw is 0 (2(n-1)/n of algbw), the in-place algbw is huge (nothing moves)."""
    run = parse_output(read_device(fixture))
    assert len(run.rows) == rows and run.avg_busbw == 0.0
    assert all(row.busbw_out == row.busbw_in == 0.0 for row in run.rows)
    assert (run.largest.size, run.largest.algbw_out, run.largest.algbw_in) == (size, algbw_out, algbw_in)
    assert run.ranks == {0: ("vm", 0, "NVIDIA H100 80GB HBM3")}


@pytest.mark.parametrize(
    ("mark", "status", "text"),
    [
        (None, Status.SKIP, f"nothing to judge it by: {ONE_RANK}"),  # one GPU declared: no intra-node mark
        (expected_busbw(1, H100_GPU, 8, []), Status.FAIL, ONE_RANK),  # the declared 8 GPUs' NVLink mark
        (expected_busbw(2, H100_GPU, 8, [400.0] * 8), Status.FAIL, ONE_RANK),
    ],
    ids=["no mark", "dgx h100 node mark", "two-node mark"],
)
def test_one_rank_is_never_a_pass(mark, status, text):
    result = run_result("dgx01", "nccl/node/dgx01", "dgx01's 1 GPUs", parse_output(read_device(H100_DEFAULT)), mark)
    assert result.status is status
    assert text in result.message
    assert result.data["busbw_gbytes_per_s"] == 0.0


def test_a_run_of_several_ranks_without_a_mark_blames_the_catalog():
    run = parse_output(read_fixture(RECORDINGS[1][0]))
    result = run_result("dgx01", "nccl/node/dgx01", "dgx01's 8 GPUs", run, None)
    assert result.status is Status.SKIP and "not in racfg's catalog" in result.message


def test_smoke_counts_the_gpus_nvidia_smi_lists():
    """smoke's first step on the recorded ``nvidia-smi -L`` of the H100: one GPU."""
    listed = read_device("nvidia-smi-L_1x-H100-80GB-HBM3_driver-580.159.04_h100-device.txt")
    host = SimpleNamespace(run=lambda command, timeout: SimpleNamespace(rc=0, stdout=listed))
    run = SimpleNamespace(fleet={"dgx01": host})
    assert gpu_counts(run, [SimpleNamespace(name="dgx01")]) == {"dgx01": 1}


def test_zero_byte_rows_and_info_lines():
    run = parse_output(read_fixture("all_reduce_perf_1node-8x-A100-SXM4-40GB_validation0-NA_superbench.txt"))
    assert run.rows[0].size == 0 and run.rows[0].busbw == 0.0
    assert run.ranks[7] == ("localhost", 7, "A100-SXM4-40GB")


def test_output_without_rows_is_a_parse_error():
    with pytest.raises(ParseError, match="no result rows"):
        parse_output("mpirun was unable to launch the specified application as it could not find an executable\n")


DGX1 = HOST_MODELS["DGX-1"]
DGXH100 = HOST_MODELS["DGX H100"]


@pytest.mark.parametrize(
    ("nodes", "gpu", "gpus", "nics", "mark", "basis"),
    [
        # DGX-1, one node: NVLink 2, 6 x 25 GB/s = 150 GB/s, x 0.75
        (1, DGX1.gpu, 8, [100.0], 112.5, "NVLink 2: 6 links x 25 GB/s x 0.75"),
        # DGX-1 with one 100G data NIC (the RA's test): 12.5 GB/s x 0.9, the network bounds the step
        (2, DGX1.gpu, 8, [100.0], 11.25, "1 x 100G data NIC(s) = 12.5 GB/s x 0.9"),
        # DGX-1 with its four 100G NICs: 50 GB/s x 0.9
        (4, DGX1.gpu, 8, [100.0] * 4, 45.0, "4 x 100G data NIC(s) = 50 GB/s x 0.9"),
        # a modern server: DGX H100 with 8 x 400G: network 400 x 0.9 = 360; NVLink 4 18 x 25 x 0.75 = 337.5
        (1, DGXH100.gpu, 8, [400.0] * 8, 337.5, "NVLink 4: 18 links x 25 GB/s x 0.75"),
        (2, DGXH100.gpu, 8, [400.0] * 8, 337.5, "NVLink 4: 18 links x 25 GB/s x 0.75"),
        # the same with only 4 x 400G: the network bounds it, 200 x 0.9
        (2, DGXH100.gpu, 8, [400.0] * 4, 180.0, "4 x 400G data NIC(s) = 200 GB/s x 0.9"),
        # a PCIe card: Gen3 x16 = 15.76 GB/s x 0.75
        (1, GPU_MODELS["Tesla T4"], 4, [], 11.82, "PCIe Gen3 x16"),
    ],
)
def test_expectation_from_the_declared_hardware(nodes, gpu, gpus, nics, mark, basis):
    expectation = expected_busbw(nodes, gpu, gpus, nics)
    assert expectation is not None
    assert expectation.gbytes_per_s == pytest.approx(mark, abs=0.01)
    assert expectation.basis.startswith(basis)


def test_reference_overrides_the_derived_mark():
    expectation = expected_busbw(4, DGX1.gpu, 8, [100.0] * 4, reference=40.0)
    assert expectation is not None and expectation.gbytes_per_s == 40.0
    assert "acceptance.references.nccl_busbw[4]" in expectation.basis


def test_nothing_to_derive_from():
    assert expected_busbw(1, None, 8, [100.0]) is None  # GPU not in the catalog
    assert intra_node(DGX1.gpu, 1) is None  # one GPU: all-reduce inside a node moves nothing
    assert inter_node([]) is None
    assert NET_FACTOR == 0.9


def test_recorded_runs_against_their_marks():
    """The healthy recordings pass the derived mark; the degraded A40 run (P2P off) is far below."""
    v100 = parse_output(read_fixture(RECORDINGS[0][0])).largest.busbw
    a100 = parse_output(read_fixture(RECORDINGS[1][0])).largest.busbw
    assert v100 >= expected_busbw(1, DGX1.gpu, 8, []).gbytes_per_s
    assert a100 >= expected_busbw(1, host_gpu("DGX A100", None), 8, []).gbytes_per_s
    a40 = parse_output(read_fixture(RECORDINGS[-1][0])).largest.busbw
    assert a40 < expected_busbw(1, GPU_MODELS["A100 PCIe"], 4, []).gbytes_per_s


MARK = 40.0


def table(slow_nodes=(), slow_pairs=(), fail=()):
    """A pair's bus bandwidth: 45 healthy, 10 with a slow node or a slow path, None if it failed."""
    def measure(pair):
        if set(pair) & set(fail):
            return None
        if set(pair) & set(slow_nodes) or tuple(sorted(pair)) in {tuple(sorted(p)) for p in slow_pairs}:
            return 10.0
        return 45.0
    return measure


NODES = [f"dgx{i:02d}" for i in range(1, 9)]


@pytest.mark.parametrize(
    ("nodes", "measure", "bad", "bad_pairs", "shared", "undecided"),
    [
        (NODES, table(), [], [], False, []),
        (NODES, table(slow_nodes=["dgx03"]), ["dgx03"], [], False, []),
        (NODES, table(slow_nodes=["dgx03", "dgx08"]), ["dgx03", "dgx08"], [], False, []),
        (NODES, table(slow_pairs=[("dgx05", "dgx06")]), [], [("dgx05", "dgx06")], False, []),
        (NODES, table(fail=["dgx02"]), ["dgx02"], [], False, []),
        (NODES[:7], table(slow_nodes=["dgx07"]), ["dgx07"], [], False, []),  # odd one out
        # every first-round pair slow: re-pairing the first nodes and the second nodes finds good ones
        (NODES[:4], table(slow_nodes=["dgx01", "dgx03"]), ["dgx01", "dgx03"], [], False, []),
        (NODES, table(slow_nodes=NODES), [], [], True, []),
        (NODES[:2], table(slow_nodes=["dgx02"]), [], [], False, ["dgx01", "dgx02"]),
    ],
    ids=["healthy", "one bad node", "two bad nodes", "a slow path", "a node whose runs fail", "odd count",
         "every first pair slow", "shared fault", "two nodes only"],
)
def test_isolation(nodes, measure, bad, bad_pairs, shared, undecided):
    found = isolate(nodes, measure, MARK)
    assert found.bad_nodes == bad
    assert found.bad_pairs == bad_pairs
    assert found.shared is shared
    assert found.undecided == undecided
    first = [r.pair for r in found.runs if r.round == 1]
    assert len(first) == len(nodes) // 2 and len({n for p in first for n in p}) == 2 * (len(nodes) // 2)
    for node in bad:
        assert node in found.summary(MARK)


def test_command_lines():
    spec = NcclTests(command="/opt/nccl-tests/build/all_reduce_perf")
    assert command_line(spec, ["dgx01"], 8) == "/opt/nccl-tests/build/all_reduce_perf -b 1G -e 8G -f 2 -g 8"
    assert command_line(spec, ["dgx01", "dgx02"], 8).startswith("mpirun -np 16 -H dgx01:8,dgx02:8 ")
    srun = NcclTests(launcher="srun", image="nvcr.io/nvidia/pytorch:24.05-py3")
    line = command_line(srun, ["dgx01", "dgx02"], 8)
    assert line.startswith("srun -N 2 -w dgx01,dgx02 --ntasks-per-node=8") and "--container-image=" in line
    with pytest.raises(ValueError, match="launcher: srun"):
        NcclTests(image="nvcr.io/nvidia/pytorch:24.05-py3")
