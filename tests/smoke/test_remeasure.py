"""Which readings decide, when an item is measured again, and what the report says (no lab needed).

The loops are driven by scripted readings (Mbit/s per load, in the order smoke takes them); the
lab tests (test_smoke_lab.py) make one reading low on a real link and check the same.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from racfg.inventory import load_cluster
from racfg.inventory.model import Reference
from racfg.results import Status
from racfg.smoke.measured import LoadResult, StepProbe
from racfg.smoke.metrics import reference_margin, within
from racfg.smoke.phases.link_saturation import measure_links
from racfg.smoke.phases.read_scaling import measure_scaling
from racfg.smoke.remeasure import Reading, deciding_reading, measure_again, remeasure_notes, with_readings
from racfg.smoke.smoke_plan import Link, SmokePlan, build_plan
from tests.smoke.test_verdicts import INVENTORY, LAB, load


@pytest.fixture(scope="module")
def plan() -> SmokePlan:
    return build_plan(load_cluster(INVENTORY), LAB)


@pytest.mark.parametrize(("margins", "decides"), [
    ([-0.03], 0),
    ([-0.03, 0.02], 1),  # noise, then the link at its mark
    ([-0.03, -0.01, -0.05], 1),  # a fault: the best of the misses is reported
    ([0.01, 0.05], 1),  # measured again for another mark: the best decides
    ([0.02, 0.02], 0),  # equals: the first
    ([0.0, -0.2], 0),  # exactly at the mark meets it
])
def test_the_best_reading_decides(margins: list[float], decides: int) -> None:
    assert deciding_reading(margins) == decides


def test_no_reading_no_verdict() -> None:
    with pytest.raises(ValueError, match="no reading"):
        deciding_reading([])


@pytest.mark.parametrize(("margins", "limit", "again"), [
    ([-0.1], 2, True),
    ([-0.1, -0.1], 2, True),
    ([-0.1, -0.1, -0.1], 2, False),  # first reading + 2 re-measurements: bounded
    ([-0.1, 0.0], 2, False),  # one reading met the mark: done
    ([0.05], 2, False),
    ([-0.1], 0, False),  # --remeasure 0: one reading decides
    ([-0.1], 1, True),
    ([], 2, False),
])
def test_measured_again_while_every_reading_misses_and_the_limit_allows(margins: list[float], limit: int,
                                                                          again: bool) -> None:
    assert measure_again(margins, limit) is again


def test_readings_in_the_message_the_data_and_a_note() -> None:
    from racfg.results import Result

    result = Result("dgx01:data0", "link/read/dgx01:data0", "link saturation", Status.PASS, "read: 246 Mbit/s")
    one = with_readings(result, [Reading(246.0, "Mbit/s", 0.08, "246 Mbit/s")], 2)
    assert one.message == result.message and one.data["remeasured"] == 0 and len(one.data["readings"]) == 1
    assert remeasure_notes([one]) == []
    two = with_readings(result, [Reading(217.0, "Mbit/s", -0.032, "217 Mbit/s"),
                                 Reading(246.0, "Mbit/s", 0.084, "246 Mbit/s")], 2)
    assert two.message == ("read: 246 Mbit/s; measured 2 times (re-measured 1, at most 2): 217 Mbit/s (below the "
                           "mark), 246 Mbit/s; the best (reading 2) meets the mark and decides: a fault would "
                           "have reproduced")
    assert [r["meets"] for r in two.data["readings"]] == [False, True]
    assert remeasure_notes([two]) == ["link/read/dgx01:data0: measured 2 times (217 Mbit/s (below the mark), "
                                      "246 Mbit/s), at most 2 re-measurements: pass"]
    failed = with_readings(result, [Reading(150.0, "Mbit/s", -0.3, "150 Mbit/s")] * 3, 2)
    assert failed.message.endswith("no reading meets the mark: the fault reproduced, the best is reported")


class Script:
    """A Measure that plays back Mbit/s per (first client host, direction), one value per load."""

    def __init__(self, plan: SmokePlan, values: dict[tuple[str, str], list[float]]) -> None:
        self.plan = plan
        self.values = {k: list(v) for k, v in values.items()}
        self.labels: list[str] = []

    def __call__(self, clients: list[Link], direction: str, label: str,
                 sources: Mapping[str, Sequence[Link]] | None = None) -> tuple[LoadResult, StepProbe]:
        """A batch (``sources``) plays each host's own value; any other load one value for all its hosts."""
        self.labels.append(label)
        hosts = list(dict.fromkeys(c.host for c in clients))
        if sources is not None:
            return load(self.plan, {h: self._next((h, direction), 247.0) for h in hosts}, direction,
                        sources), StepProbe()
        total = self._next((hosts[0] if len(hosts) == 1 else f"n{len(hosts)}", direction), 247.0 * len(hosts))
        return load(self.plan, {h: total / len(hosts) for h in hosts}, direction), StepProbe()

    def _next(self, key: tuple[str, str], default: float) -> float:
        queue = self.values.get(key, [])
        return queue.pop(0) if len(queue) > 1 else (queue[0] if queue else default)


def _links(plan: SmokePlan, values: dict[tuple[str, str], list[float]], limit: int = 2):
    two = SmokePlan(**{**plan.__dict__, "clients": plan.clients[:2]})
    script = Script(two, values)
    chosen, results = measure_links(two, script, limit, lambda _: None, lambda _: None)
    return script, chosen, {r.check: r for r in results}


def test_a_link_that_misses_in_its_batch_is_measured_alone_and_passes_on_that_reading(plan: SmokePlan) -> None:
    """The two links are loaded together (a storage link each); smdgx01's batched read misses, so it is
    loaded alone, and that reading is its first: the batch's miss is not one of its readings."""
    script, _, checks = _links(plan, {("smdgx01", "read"): [150, 246]})
    assert script.labels == ["links/read/batch1", "link/read/smdgx01:data0", "links/write/batch1"]
    read = checks["link/read/smdgx01:data0"]
    assert read.status is Status.PASS and [r["value"] for r in read.data["readings"]] == [246]
    assert read.data["remeasured"] == 0 and read.data["processes"] == 2  # alone: from both storage links
    assert checks["link/write/smdgx01:data0"].data["processes"] == 1  # its batch's one storage link
    assert checks["outlier/read"].status is Status.PASS


def test_a_link_that_stays_low_fails_after_the_limit_with_every_reading(plan: SmokePlan) -> None:
    script, _, checks = _links(plan, {("smdgx01", "read"): [150, 152, 149, 151]})
    assert script.labels.count("link/read/smdgx01:data0") == 3
    read = checks["link/read/smdgx01:data0"]
    assert read.status is Status.FAIL and [r["value"] for r in read.data["readings"]] == [152, 149, 151]
    assert read.data["measured_bps"] == 152_000_000  # the best reading is reported
    outlier = checks["outlier/read/smdgx01:data0"]
    assert outlier.status is Status.FAIL and len(outlier.data["readings"]) == 3


def test_an_outlier_above_the_floor_is_measured_again(plan: SmokePlan) -> None:
    """226 Mbit/s in the batch meets the floor (90.4%), so it is the link's first reading, but not 93%
    of the best link's 247: noise, by its second reading, taken alone."""
    script, _, checks = _links(plan, {("smdgx02", "write"): [226, 246]})
    assert script.labels == ["links/read/batch1", "links/write/batch1", "link/write/smdgx02:data0"]
    assert "outlier/write/smdgx02:data0" not in checks and checks["outlier/write"].status is Status.PASS
    assert [r["value"] for r in checks["link/write/smdgx02:data0"].data["readings"]] == [226, 246]


def test_a_batch_reading_below_the_best_of_its_kind_is_measured_alone_even_with_a_limit_of_zero(
        plan: SmokePlan) -> None:
    """226 Mbit/s in the batch meets the floor but not the best link's mark: a batch's reading may pass a
    link, never fail it, so the link is loaded alone once although no re-measurement is allowed."""
    script, _, checks = _links(plan, {("smdgx02", "write"): [226, 246]}, limit=0)
    assert script.labels == ["links/read/batch1", "links/write/batch1", "link/write/smdgx02:data0"]
    assert "outlier/write/smdgx02:data0" not in checks and checks["outlier/write"].status is Status.PASS
    write = checks["link/write/smdgx02:data0"]
    assert write.data["batch"] == {"links": 2, "value": 226.0, "unit": "Mbit/s", "meets": True,
                                   "storage_links": ["smstor02:data0"]}


def test_no_re_measurement_with_a_limit_of_zero(plan: SmokePlan) -> None:
    """The one reading that decides is the link's own (alone), not the batch's."""
    script, _, checks = _links(plan, {("smdgx01", "read"): [150, 140, 246]}, limit=0)
    assert len(script.labels) == 3
    read = checks["link/read/smdgx01:data0"]
    assert read.status is Status.FAIL and [r["value"] for r in read.data["readings"]] == [140]


def test_a_scaling_step_below_the_floor_is_measured_again_against_the_same_t1(plan: SmokePlan) -> None:
    script = Script(plan, {("smdgx01", "read"): [247], ("n3", "read"): [600, 735]})
    links, _ = measure_links(plan, script, 2, lambda _: None, lambda _: None)
    script.labels.clear()
    verdict, results = measure_scaling(plan, script, links, 2, lambda _: None, lambda _: None)
    # smdgx01's read was a batch's (one storage link of two): step 1 is loaded on its own
    assert script.labels == ["scaling/1", "scaling/2", "scaling/3", "scaling/3"]
    checks = {r.check: r for r in results}
    step3 = checks["scaling/step003"]
    assert step3.status is Status.PASS and [r["value"] for r in step3.data["readings"]] == [600, 735]
    assert "E = 0.810" in step3.message and verdict.knee is None
    assert checks["scaling/linear"].status is Status.PASS


def test_step_one_reuses_the_read_of_a_link_measured_alone(plan: SmokePlan) -> None:
    """With one storage link no two links can be loaded together: each is measured alone, and step 1
    is the first link's read, not loaded twice."""
    one = SmokePlan(**{**plan.__dict__, "storage": plan.storage[:1]})
    script = Script(one, {})
    links, _ = measure_links(one, script, 2, lambda _: None, lambda _: None)
    assert not any(m.batched for m in links) and "links/read/batch1" not in script.labels
    script.labels.clear()
    measure_scaling(one, script, links, 0, lambda _: None, lambda _: None)
    assert script.labels == ["scaling/2", "scaling/3"]


@pytest.mark.parametrize(("value", "lower", "upper", "margin"), [
    (10.0, -0.1, None, 0.1),  # 10 against 10 (-10%): 1 above its bound, a tenth of the reference
    (9.0, -0.1, None, 0.0),  # on the bound: within
    (8.0, -0.1, None, -0.1),
    (10.5, -0.1, 0.1, 0.05),  # nearer the upper bound
    (12.0, -0.1, 0.1, -0.1),  # above the upper bound misses
    (3.0, None, None, 0.0),  # bounded on neither side: never missed
])
def test_reference_margin_is_the_distance_to_the_nearer_bound(value: float, lower: float | None,
                                                              upper: float | None, margin: float) -> None:
    ref = Reference(value=10.0, lower=lower, upper=upper, unit="GB/s")
    assert reference_margin(value, ref) == pytest.approx(margin)
    assert (reference_margin(value, ref) >= 0) is within(value, ref)


def test_remeasure_is_an_option_with_its_environment_variable(tmp_path: Path) -> None:
    """Out of range, from the command line or RACFG_REMEASURE, is a usage error (exit 2) before any connection."""
    for args, env in ((["--remeasure", "11"], {}), ([], {"RACFG_REMEASURE": "-1"})):
        proc = subprocess.run([sys.executable, "-m", "racfg", "smoke", str(INVENTORY), *args], capture_output=True,
                              text=True, timeout=60, env={**os.environ, **env, "RACFG_STATE_DIR": str(tmp_path)})
        assert proc.returncode == 2 and "--remeasure" in proc.stderr, proc.stderr
