"""The storage step's peers on a lab of three storage nodes (tests/smoke/smokelab.yaml as site ``smpeers``,
198.18.87.0/24 and 198.19.87.0/24: one DGX, three storage nodes of two drives each), with smoke's storage
phase alone.

fio on all three at once gives each node's own figure, judged against its peers' median
(racfg.smoke.peer_stragglers). A node below its peers in one reading of that step is measured again
with the step, and each node's figure is its best reading: the 40-host demos named healthy storage nodes
on a single reading in 2 runs of 10. A node whose drives are slow in every reading is still named. The
slow-down is real: smstor02's drives held to half the lab's drive rate by the kernel's block throttle,
lifted (in the first test) when smoke announces the re-measurement, so exactly one reading is slow.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from labsupport import LabHandle

from racfg.cli.providers import overrides_for
from racfg.inventory import load_cluster
from racfg.results import Report, Status
from racfg.smoke.remeasure import REMEASURE
from racfg.smoke.smoke_run import SmokeOptions, run_smoke
from racfg_lab import api, drives
from tests.smoke.labnet import smokelab_as

pytestmark = [pytest.mark.lab, pytest.mark.solo]  # rates: measured with the machine to itself

ALL = frozenset({"links", "scaling", "storage", "rdma", "benchmark", "nccl"})
SLOW = "smstor02"
STEP = "storage: fio on 3 host(s)"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabHandle]:
    def three_storage_nodes(text: str) -> str:
        return text.replace('"smdgx[01:03]"', "smdgx01").replace('"smstor[01:02]"', '"smstor[01:03]"')
    with smokelab_as("smpeers", 87, tmp_path_factory.mktemp("smpeers"), three_storage_nodes) as handle:
        assert len(handle.hosts("storage")) == 3
        yield handle


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RACFG_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def _storage_with_slow_drives(lab: LabHandle, out: Path, lift_on_remeasure: bool) -> tuple[Report, list[str]]:
    """smoke's storage phase with smstor02's drives read at half the lab's drive rate; with
    ``lift_on_remeasure`` back to the rate when smoke measures the step again. Returns the report and
    what smoke said as it went."""
    rate, _ = drives.shaping(sum(len(h.drives) for h in lab.cluster.hosts))
    paths = [d.path for d in lab.host(SLOW).drives]
    said: list[str] = []

    def progress(done: int, total: int, text: str) -> None:
        said.append(text)
        if lift_on_remeasure and "below their peers" in text:
            for path in paths:
                api.throttle_drive(lab.site, SLOW, path, None)

    cluster = load_cluster(lab.inventory)
    try:
        for path in paths:
            api.throttle_drive(lab.site, SLOW, path, rate // 2)
        report = run_smoke(cluster, overrides_for(cluster), SmokeOptions(skip=ALL - {"storage"}, progress=progress),
                           out)
    finally:
        for path in paths:
            api.throttle_drive(lab.site, SLOW, path, None)
    return report, said


def _per_host_seq(report: Report) -> dict[str, float]:
    step = next(r for r in report.results if r.check == "storage/drive/n3")
    return {host: figures["seq_bytes_per_s"] for host, figures in step.data["per_host"].items()}


def test_a_node_below_its_peers_in_one_reading_is_measured_again_and_not_named(lab: LabHandle,
                                                                                 tmp_path: Path) -> None:
    report, said = _storage_with_slow_drives(lab, tmp_path, lift_on_remeasure=True)
    again = [t for t in said if "below their peers" in t]
    assert again[:1] == [f"{STEP}: {SLOW} below their peers, the step measured again (1 of {REMEASURE})"], said
    step = next(r for r in report.results if r.check == "storage/drive/n3")
    assert step.data["per_host_readings"] == len(again) + 1 and "its best of the step's" in step.message
    seq = _per_host_seq(report)
    assert seq[SLOW] >= 0.9 * max(seq.values()), seq  # its best reading: the one after the throttle was lifted
    peers = {r.check: r for r in report.results if r.category == "stragglers"}
    assert peers["peers/storage.drive.seq.n3"].status is Status.PASS, [r.message for r in peers.values()]
    assert not [r.message for r in report.results if r.status in (Status.FAIL, Status.ERROR)]


def test_a_node_slow_in_every_reading_is_named_on_its_best(lab: LabHandle, tmp_path: Path) -> None:
    report, said = _storage_with_slow_drives(lab, tmp_path, lift_on_remeasure=False)
    again = [t for t in said if "below their peers" in t]
    assert len(again) == REMEASURE and all(t.startswith(f"{STEP}: {SLOW} below") for t in again), said
    seq = _per_host_seq(report)
    assert seq[SLOW] < 0.6 * max(seq.values()), seq
    failed = {r.check: r for r in report.results if r.status in (Status.FAIL, Status.ERROR)}
    named = failed.pop(f"peers/storage.drive.seq.n3/{SLOW}")
    assert named.status is Status.FAIL and "of its 3 peers' median" in named.message
    # the pair beside a node that kept up says the same of the node, and no other node is blamed
    assert {r.target for r in failed.values()} <= {SLOW}, [r.message for r in failed.values()]
