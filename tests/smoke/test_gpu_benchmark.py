"""A user's GPU benchmark on clients that list no GPU (racfg.smoke.gpu_presence): it does not run. On a
site that does not require GPUs (the lab: ra-ethernet's horovodrun training run) it is one skip with
the reason, not four "could not run" errors from ``horovodrun: not found``; where GPUs are required it
is one failure pointing at validate's GPU checks; ``gpus: false`` runs it anyway. The clients answer
``nvidia-smi -L`` as the lab's hosts do (exit 127) or as the recorded H100 does."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from racfg.inventory.model import UserBenchmark
from racfg.results import Status
from racfg.smoke.phases import user_benchmark
from tests.hostfacts.conftest import read_device

H100 = read_device("nvidia-smi-L_1x-H100-80GB-HBM3_driver-580.159.04_h100-device.txt")


class Started(Exception):
    """The benchmark's first step was started: where these tests stop the run."""


class Client:
    """A client that answers ``nvidia-smi -L``."""

    def __init__(self, listed: str | None) -> None:
        self.listed = listed

    def run(self, command: str, timeout: float) -> SimpleNamespace:
        assert command == "nvidia-smi -L"
        if self.listed is None:
            return SimpleNamespace(rc=127, stdout="", stderr="sh: 1: nvidia-smi: not found")
        return SimpleNamespace(rc=0, stdout=self.listed, stderr="")


def smoke_run(listed: str | None, *, lab: bool, gpus: bool = True) -> SimpleNamespace:
    spec = UserBenchmark(name="resnet50", command="horovodrun -np {nodes} python train.py", launcher="ssh",
                         regex=r"total images/sec: ([0-9.]+)", steps=[1, 2], gpus=gpus)
    names = ["dgx01", "dgx02", "dgx03"]
    return SimpleNamespace(
        plan=SimpleNamespace(benchmark=SimpleNamespace(spec=spec, steps=[1, 2], gpus_per_node=8), client_hosts=names,
                             lab=lab, references={}),
        cluster=SimpleNamespace(hosts=[SimpleNamespace(name=n, gpus=8) for n in names]),
        fleet={n: Client(listed) for n in names}, results=[], tick=lambda what: None,
        announce=lambda what: None, options=SimpleNamespace(remeasure=0))


def test_on_the_lab_a_gpu_benchmark_without_gpus_is_one_skip_and_starts_nothing(monkeypatch) -> None:
    monkeypatch.setattr(user_benchmark, "run_step", lambda *args, **kwargs: pytest.fail("a step was started"))
    run = smoke_run(None, lab=True)
    user_benchmark.measure(run)
    [result] = run.results
    assert (result.check, result.status) == ("benchmark/resnet50/run", Status.SKIP)
    assert result.message == ("benchmark resnet50: no GPU here (dgx01: nvidia-smi not found; dgx02: nvidia-smi not "
                              "found); this site does not require GPUs (a provider's site such as the lab)")
    assert "dgx03" not in result.message  # the steps use two clients: the third is not asked


def test_where_gpus_are_required_it_fails_pointing_at_validates_gpu_checks() -> None:
    run = smoke_run(None, lab=False)
    user_benchmark.measure(run)
    [result] = run.results
    assert result.status is Status.FAIL and result.fix == "racfg validate --category gpu"


def test_with_gpus_listed_or_declared_without_gpus_it_runs(monkeypatch) -> None:
    def first_step(fleet, plan, spec, hosts, gpus=0, shape=None):
        raise Started(hosts)

    monkeypatch.setattr(user_benchmark, "run_step", first_step)
    for run in (smoke_run(H100, lab=True), smoke_run(None, lab=True, gpus=False)):
        with pytest.raises(Started) as started:
            user_benchmark.measure(run)
        assert started.value.args == (["dgx01"],) and run.results == []
