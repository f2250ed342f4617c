"""The verdicts smoke's phases used to build inline, now pure functions in their phase modules
(racfg.smoke.phases) and the phase table: a phase or item that could not be measured, fio's source and
figures, RDMA, the user's benchmark and NCCL, on tables of cases and recorded tool output
(tests/smoke/fixtures, tests/hostfacts fixtures)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from racfg.hostfacts.fio import parse_fio
from racfg.hostfacts.nccl_tests import parse_output
from racfg.hostfacts.perftest import parse_perftest
from racfg.inventory.model import Reference
from racfg.results import Status
from racfg.smoke import phase_table
from racfg.smoke.gpu_presence import gpus_missing
from racfg.smoke.measured import RAND_JOB, SEQ_JOB, BenchmarkStep, FioRun, FioTarget
from racfg.smoke.nccl_marks import Expectation, Isolation, PairRun
from racfg.smoke.peer_stragglers import FLOOR, straggler_results
from racfg.smoke.phases import link_saturation, nccl_allreduce, rdma_bandwidth, user_benchmark
from racfg.smoke.phases.storage_throughput import (
    FioCpu,
    FioRefs,
    FioSide,
    fio_results,
    host_bests,
    nothing_to_read,
    until_peers_met,
)
from racfg.smoke.smoke_plan import Link
from tests.hostfacts.conftest import read_fixture

FIXTURES = Path(__file__).parent / "fixtures"
LINK = Link("dgx01", "dgx", "data0", "198.19.0.11/24", "sw1", "1/1", 100_000, "inventory", 9000,
            declared_mbit=100_000)


def recorded(name: str) -> str:
    return (FIXTURES / name).read_bytes().decode()


@pytest.mark.parametrize(("result", "check", "status", "says"), [
    (phase_table.without_storage("links"), "links/run", Status.SKIP, "external array"),
    (phase_table.not_measured("scaling", "dgx02: connection lost"), "scaling/run", Status.ERROR,
     "dgx02: connection lost"),
    (link_saturation.unreached_link(LINK), "link/dgx01:data0", Status.SKIP, "198.19.0.0/24"),
])
def test_what_could_not_be_measured_says_why(result, check, status, says) -> None:
    assert (result.check, result.status) == (check, status) and says in result.message


# (array mount, shared fs, clients mounted, fio_path, storage hosts with drives) -> status or None (fio runs)
@pytest.mark.parametrize(("args", "status", "says"), [
    (("/mnt/array", "/mnt/array", 0, None, 0), Status.FAIL, "mounted at /mnt/array on no client"),
    (("/mnt/array", "/mnt/array", 3, None, 0), Status.SKIP, "names no file"),
    ((None, "/mnt/weka", 3, None, 8), Status.SKIP, "names no file"),
    ((None, None, 0, None, 0), Status.SKIP, "no storage host declares drives"),
    ((None, "/mnt/weka", 0, None, 0), Status.SKIP, "no storage host declares drives"),
    ((None, "/mnt/weka", 3, "/mnt/weka/big", 0), None, ""),
    ((None, None, 0, None, 2), None, ""),
])
def test_fio_has_something_to_read_or_says_why_not(args, status, says) -> None:
    result = nothing_to_read(*args)
    if status is None:
        assert result is None
    else:
        assert result is not None and result.status is status and says in result.message
        assert result.fix if status is Status.FAIL else True


LAB_FIO = recorded("fio-3.33_seqread-1m+randread-4k_json_readonly_racfg-lab.json")
DRIVE = FioSide("drive", "fio_drive_read_gbytes_per_s", "drive-side", 10.8)
CLIENT = FioSide("client", "fio_read_gbytes_per_s", "fio on the clients", 10.8)


@pytest.mark.parametrize(("side", "refs", "statuses"), [
    (DRIVE, FioRefs(None, None), [Status.SKIP]),  # a drive-side figure with no reference: reported, not judged
    (CLIENT, FioRefs(Reference(value=0.001, lower=-0.1, unit="GB/s"), None), [Status.PASS]),
    (CLIENT, FioRefs(Reference(value=1000.0, lower=-0.1, unit="GB/s"), None), [Status.FAIL]),
    (CLIENT, FioRefs(Reference(value=0.001, lower=-0.1, unit="GB/s"), Reference(value=1e9, lower=-0.1, unit="IOPS")),
     [Status.PASS, Status.FAIL]),
])
def test_fio_figures_from_a_recorded_lab_run(side, refs, statuses) -> None:
    runs = [FioRun(FioTarget("st1", ["/dev/nvme0n1"]), parse_fio(LAB_FIO))]
    results = fio_results(side, "one", runs, refs)
    assert [r.status for r in results] == statuses
    assert results[0].data["seq_bytes_per_s"] > 0 and results[0].target == "st1"


def test_a_run_on_several_hosts_keeps_each_hosts_own_figures_and_fios_version() -> None:
    """Each storage node's figures within the run on all at once (a performance baseline's items), beside
    the sum; a run on one host has its host's figure already and gets no second one."""
    runs = [FioRun(FioTarget(host, ["/dev/nvme0n1"]), parse_fio(LAB_FIO)) for host in ("st1", "st2")]
    [result] = fio_results(DRIVE, "all", runs, FioRefs(None, None))
    metrics = {m["name"]: m for m in result.data["metrics"]}
    for host in ("st1", "st2"):
        assert metrics[f"storage.drive.seq.n2.{host}"]["value"] == pytest.approx(runs[0].seq_bytes_per_s / 1e9)
        assert metrics[f"storage.drive.randiops.n2.{host}"]["unit"] == "IOPS"
    assert metrics["storage.drive.seq.n2"]["value"] == pytest.approx(2 * runs[0].seq_bytes_per_s / 1e9)
    assert result.data["fio_version"] == "fio-3.33"
    [alone] = fio_results(DRIVE, "one", runs[:1], FioRefs(None, None))
    assert sorted(m["name"] for m in alone.data["metrics"]) == ["storage.drive.randiops.n1", "storage.drive.seq.n1"]


def test_a_run_on_several_hosts_keeps_what_their_cpus_did_and_whether_the_machine_was_the_limit() -> None:
    """The CPUs' busy share rides with the figures; ``machine_busy`` only where the probe said the measuring
    machines were at their limit (the peers' comparison reads it: racfg.smoke.peer_stragglers)."""
    runs = [FioRun(FioTarget(host, ["/dev/nvme0n1"]), parse_fio(LAB_FIO)) for host in ("st1", "st2")]
    [busy] = fio_results(DRIVE, "all", runs, FioRefs(None, None),
                         FioCpu({"st1": 0.97123, "st2": 0.96}, ["CPUs busy on st1 97.1%, st2 96.0%"]))
    assert busy.data["cpu_busy"] == {"st1": 0.9712, "st2": 0.96}
    assert busy.data["machine_busy"] == ["CPUs busy on st1 97.1%, st2 96.0%"]
    [free] = fio_results(DRIVE, "all", runs, FioRefs(None, None), FioCpu({"st1": 0.4, "st2": 0.41}, []))
    assert free.data["cpu_busy"] == {"st1": 0.4, "st2": 0.41} and "machine_busy" not in free.data
    [unprobed] = fio_results(DRIVE, "all", runs, FioRefs(None, None))
    assert "cpu_busy" not in unprobed.data and "machine_busy" not in unprobed.data


def test_a_failed_fio_run_is_an_error_naming_the_host() -> None:
    runs = [FioRun(FioTarget("st2", ["/dev/nvme0n1"]), None, "exit 1: no such file")]
    [result] = fio_results(DRIVE, "all", runs, FioRefs(None, None))
    assert result.status is Status.ERROR and "st2" in result.message and "no such file" in result.message


PERFTEST = parse_perftest(recorded("ib_write_bw_--report_gbits_RoCE-100G_DGX-1_ConnectX-5_MOFED4.7_deepops-doc.txt"))


@pytest.mark.parametrize(("rate_mbit", "status"), [(100_000, Status.PASS), (200_000, Status.FAIL)])
def test_rdma_against_line_rate_from_recorded_perftest(rate_mbit, status) -> None:
    """92.4 Gb/s recorded: 92% of a 100G link passes the 0.9 floor; 46% of a 200G link fails, with a fix."""
    result = rdma_bandwidth.rdma_result("ib_write_bw", replace(LINK, rate_mbit=rate_mbit), "mlx5_0", "st1", PERFTEST,
                                        0.9)
    assert result.status is status and result.check == "rdma/ib_write_bw/dgx01:data0"
    assert result.data["metrics"][0]["value"] == pytest.approx(92.40)
    assert (result.fix is None) == (status is Status.PASS)


@pytest.mark.parametrize(("has_device", "says"), [(False, "dgx01:data0 has no RDMA device"),
                                                  (True, "no storage link with an RDMA device")])
def test_rdma_unmeasured_says_which_side_lacks_the_device(has_device, says) -> None:
    result = rdma_bandwidth.rdma_unmeasured(LINK, has_device)
    assert result.status is Status.SKIP and says in result.message


def step(n: int, value: float | None, shape: str | None = None) -> BenchmarkStep:
    return BenchmarkStep(n, [f"dgx{i}" for i in range(1, n + 1)], value, {}, None if value else "no match",
                         shape=shape)


REFS = {1: Reference(value=100.0, lower=-0.1, unit="img/s"), 4: Reference(value=400.0, lower=-0.1, unit="img/s")}


# (step, base T(1), status): against its reference when there is one, else on E(n), else reported
@pytest.mark.parametrize(("s", "base", "status", "margin"), [
    (step(1, 95.0), None, Status.PASS, 0.05),
    (step(4, 300.0), 95.0, Status.FAIL, -0.15),  # a reference decides, not E(4) = 0.79
    (step(2, 190.0), 100.0, Status.PASS, 0.05),  # no reference for 2: E(2) = 0.95 against 0.9
    (step(3, 240.0), 100.0, Status.FAIL, -0.1),  # E(3) = 0.8
    (step(2, 190.0, "2x4"), 100.0, Status.SKIP, 0.0),  # a shape with no reference: reported
    (step(2, None), 100.0, Status.ERROR, -1.0),
])
def test_benchmark_step_verdicts(s, base, status, margin) -> None:
    result = user_benchmark.step_result("resnet50", "img/s", "ssh", REFS, base, s, 0.9)
    assert result.status is status
    assert user_benchmark.step_margin(REFS, base, s, 0.9) == pytest.approx(margin)


def test_an_unrun_equivalence_group_names_its_missing_shapes() -> None:
    result = user_benchmark.equivalence_unrun("resnet50", ["1x8", "2x4", "4x2"], ["4x2"])
    assert result.status is Status.SKIP and result.check == "benchmark/resnet50/equivalent/1x8=2x4=4x2"
    assert result.message.endswith("4x2")


@pytest.mark.parametrize(("missing", "required", "status"), [
    ({}, ["dgx1"], None),
    ({"dgx1": "nvidia-smi not found"}, [], Status.SKIP),
    ({"dgx1": "nvidia-smi not found"}, ["dgx1", "dgx2"], Status.FAIL),
])
def test_gpus_missing_skip_on_a_lab_and_fail_where_required(missing, required, status) -> None:
    result = nccl_allreduce.gpus_result(missing, required)
    assert (result.status if result else None) is status
    benchmark = gpus_missing(missing, required, "benchmark/resnet50/run", "benchmark", "benchmark resnet50")
    assert (benchmark.status if benchmark else None) is status
    if benchmark is not None:
        assert benchmark.check == "benchmark/resnet50/run" and "nvidia-smi not found" in benchmark.message


NCCL_RUN = parse_output(read_fixture("all_reduce_perf_1node-8x-A100-SXM4-40GB_validation0-NA_superbench.txt"))


@pytest.mark.parametrize(("mark", "status"), [
    (Expectation(200.0, "0.75 of NVLink"), Status.PASS),  # recorded 235.26 GB/s
    (Expectation(250.0, "0.75 of NVLink"), Status.FAIL),
    (None, Status.SKIP),
])
def test_nccl_run_from_a_recorded_all_reduce(mark, status) -> None:
    result = nccl_allreduce.run_result("dgx1", "nccl/node/dgx1", "dgx1's 8 GPUs", NCCL_RUN, mark)
    assert result.status is status and result.data["busbw_gbytes_per_s"] == pytest.approx(235.26)


def test_nccl_run_that_gave_no_output_is_an_error() -> None:
    assert nccl_allreduce.run_result("cluster", "nccl/n2", "2 nodes", "exit 1: no rows", None).status is Status.ERROR


@pytest.mark.parametrize(("values", "knee"), [({2: 20.0, 4: 19.5, 8: 19.0}, None), ({2: 20.0, 4: 19.5, 8: 12.0}, 8)])
def test_nccl_scaling_knee(values, knee) -> None:
    result = nccl_allreduce.scaling_result(values, 0.9)
    assert result.data["knee"] == knee and (result.status is Status.PASS) == (knee is None)


def test_isolation_names_the_node_at_fault_else_the_pair() -> None:
    mark = Expectation(10.0, "0.9 of line rate")
    runs = [PairRun(("a", "b"), 4.0, 1), PairRun(("c", "d"), 11.0, 1)]
    by_node = nccl_allreduce.isolation_results(Isolation(runs, bad_nodes=["a"]), mark)
    assert [(r.target, r.status) for r in by_node] == [("a", Status.FAIL)]
    assert "racfg validate --limit a" in (by_node[0].fix or "")
    [pair] = nccl_allreduce.isolation_results(Isolation(runs, bad_pairs=[("a", "b")]), mark)
    assert pair.status is Status.FAIL and pair.check == "nccl/isolate"
    [clean] = nccl_allreduce.isolation_results(Isolation(runs), mark)
    assert clean.status is Status.PASS


def _fio_at(host: str, seq: float = 1.0, iops: float = 1.0) -> FioRun:
    """The recorded lab fio run as ``host``'s, its sequential and random figures scaled by ``seq``, ``iops``."""
    result = parse_fio(LAB_FIO)
    factor = {SEQ_JOB: seq, RAND_JOB: iops}
    jobs = [replace(j, read_bytes_per_s=j.read_bytes_per_s * factor.get(j.name, 1.0),
                    read_iops=j.read_iops * factor.get(j.name, 1.0)) for j in result.jobs]
    return FioRun(FioTarget(host, ["/dev/nvme0n1"]), replace(result, jobs=jobs))


def _step(**scaled: tuple[float, float]) -> list[FioRun]:
    """One reading of fio on st1..st5 at once; ``st3=(0.8, 1.0)``: st3's sequential read at 80%."""
    return [_fio_at(h, *scaled.get(h, (1.0, 1.0))) for h in ("st1", "st2", "st3", "st4", "st5")]


def _remeasured(first: list[FioRun], then: list[list[FioRun]], cpu: list[FioCpu] | None = None,
                limit: int = 2) -> tuple[list[list[FioRun]], list[str]]:
    told: list[str] = []
    more = iter(then)
    readings = until_peers_met([first], lambda: next(more), cpu or [], FLOOR + 0.01, limit, told.append,
                               "storage: fio on 5 host(s)")
    return readings, told


def test_a_storage_node_below_its_peers_once_is_measured_again_and_judged_on_its_best() -> None:
    """Lab demos named healthy storage nodes at 79-90% of their peers' median on one reading of the step on
    all at once, level in the next run: the step is measured again while a host stays below its peers, each
    host's figure its best, and the peers' verdict reads those (racfg.smoke.peer_stragglers)."""
    readings, told = _remeasured(_step(st3=(0.8, 1.0), st5=(1.0, 0.85)), [_step(st2=(0.95, 1.0)), _step()])
    assert len(readings) == 2 and told == ["storage: fio on 5 host(s): st3, st5 below their peers, the step "
                                           "measured again (1 of 2)"]
    bests = host_bests(readings)
    assert bests.readings == 2 and bests.stragglers(FLOOR) == []
    assert bests.seq["st2"] == pytest.approx(readings[0][1].seq_bytes_per_s)  # its first reading was its best
    [result] = fio_results(DRIVE, "all", readings[0], FioRefs(None, None), None, bests)
    assert "its best of the step's 2 readings" in result.message and result.data["per_host_readings"] == 2
    metrics = {m["name"]: m["value"] for m in result.data["metrics"]}
    assert metrics["storage.drive.seq.n5.st3"] == pytest.approx(readings[1][2].seq_bytes_per_s / 1e9)
    assert metrics["storage.drive.seq.n5"] == pytest.approx(sum(r.seq_bytes_per_s for r in readings[0]) / 1e9)
    assert [r.status for r in straggler_results([result])] == [Status.PASS, Status.PASS]


def test_a_storage_node_that_stays_below_its_peers_is_named_on_its_best_reading() -> None:
    """A slow drive caps every reading: measured ``limit`` times more, still low, and named on its best."""
    readings, told = _remeasured(_step(st4=(0.7, 1.0)), [_step(st4=(0.72, 1.0)), _step(st4=(0.75, 1.0))])
    assert len(readings) == 3 and len(told) == 2
    bests = host_bests(readings)
    assert bests.stragglers(FLOOR) == ["st4"]
    [result] = fio_results(DRIVE, "all", readings[0], FioRefs(None, None), None, bests)
    [named] = [r for r in straggler_results([result]) if r.status is Status.FAIL]
    assert named.target == "st4" and "75.0% of its 5 peers' median" in named.message


def test_a_level_step_or_one_on_a_machine_at_its_limit_is_not_measured_again() -> None:
    """No host below its peers: one reading. The measuring machines at their limit: the peers' comparison is a
    skip there (racfg.smoke.peer_stragglers), so no re-measurement is spent on it."""
    level, told = _remeasured(_step(st1=(0.96, 0.97)), [])
    assert (len(level), told) == (1, [])
    busy, told = _remeasured(_step(st3=(0.6, 0.6)), [], [FioCpu({"st3": 0.99}, ["CPUs busy on st3 99.0%"])])
    assert (len(busy), told) == (1, [])
    unlimited, _ = _remeasured(_step(st3=(0.6, 0.6)), [_step(st3=(0.6, 0.6))], limit=1)
    assert len(unlimited) == 2  # the re-measurement limit bounds it
