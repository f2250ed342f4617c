"""The performance baseline (racfg.baseline.performance) of a real smoke run: tests/recordings/smoke-smokelab/,
a full ``racfg smoke`` of tests/smoke/smokelab.yaml on the lab (its ORIGIN.md says how it was made).

What it holds per item (key, figure, unit, direction, readings, spread) and the run's conditions, that
earlier baselines are kept, the modes 0600/0700 and no secret, the refusal of a failed or partial run
(and of ``--accept`` with --skip before anything is measured), and reading it back.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from racfg import __version__
from racfg.baseline.performance import (
    FIGURES_FILE,
    baseline_items,
    conditions,
    list_performance_baselines,
    load_performance_baseline,
    record_performance_baseline,
    why_not_baseline,
)
from racfg.baseline.store import list_baselines
from racfg.errors import UsageError
from racfg.inventory import load_cluster
from racfg.results import Report, Status
from racfg.smoke.smoke_run import inventory_digest

REPO = Path(__file__).resolve().parents[2]
RECORDING = REPO / "tests" / "recordings" / "smoke-smokelab" / "results.json"
INVENTORY = REPO / "tests" / "smoke" / "smokelab.yaml"
CLIENTS = ("smdgx01", "smdgx02", "smdgx03")
STORAGE = ("smstor01", "smstor02")


@pytest.fixture
def report() -> Report:
    return Report.from_dict(json.loads(RECORDING.read_text()))


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RACFG_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def test_the_recording_is_a_clean_full_run(report: Report) -> None:
    assert report.command == "smoke" and report.exit_code() == 0
    assert report.meta["options"] in ({"skip": [], "hosts": None}, {"skip": [], "hosts": None, "brief": False})
    assert why_not_baseline(report) == []


def test_every_link_in_each_direction_every_step_and_storage_figure_is_an_item(report: Report) -> None:
    items = baseline_items(report)
    for host in CLIENTS:
        for direction in ("read", "write"):
            item = items[f"link.{direction}.{host}:data0"]
            result = next(r for r in report.results if r.check == f"link/{direction}/{host}:data0")
            assert item["value"] == pytest.approx(result.data["measured_bps"] / 1e6, rel=1e-5)
            assert (item["unit"], item["better"], item["status"]) == ("Mbit/s", "higher", "pass")
            assert item["value"] in item["readings"] and item["check"] == result.check
    for n in (1, 2, 3):
        assert items[f"scaling.aggregate.n{n}"]["unit"] == "Mbit/s"
        assert items[f"scaling.aggregate.n{n}"]["readings"]
        assert 0 < items[f"scaling.efficiency.n{n}"]["value"] <= 1.1
    # the storage nodes' own figures within the run on both at once, beside the sums
    assert items["storage.drive.seq.n1"]["unit"] == "GB/s" and items["storage.drive.randiops.n1"]["unit"] == "IOPS"
    both = items["storage.drive.seq.n2"]["value"]
    each = [items[f"storage.drive.seq.n2.{host}"]["value"] for host in STORAGE]
    assert all(v > 0 for v in each) and sum(each) == pytest.approx(both, rel=1e-3)
    for host in STORAGE:
        assert items[f"storage.drive.randiops.n2.{host}"]["value"] > 0
    assert all(item["key"] == key for key, item in items.items())


def test_an_item_measured_again_keeps_every_reading_and_their_spread(report: Report) -> None:
    check = "link/read/smdgx02:data0"
    result = next(r for r in report.results if r.check == check)
    value = result.data["metrics"][0]["value"]
    readings = [{"value": round(value * 0.8, 6), "unit": "Mbit/s", "margin": -0.1, "meets": False},
                {"value": value, "unit": "Mbit/s", "margin": 0.02, "meets": True}]
    report.results[report.results.index(result)] = replace(result, data={**result.data, "readings": readings})
    item = baseline_items(report)["link.read.smdgx02:data0"]
    assert item["readings"] == [round(value * 0.8, 6), value]
    assert item["spread"] == pytest.approx(0.2, abs=1e-4)
    assert baseline_items(report)["link.read.smdgx01:data0"]["spread"] is None  # one reading: no spread


def test_conditions_name_the_inventory_the_shaping_and_the_tools(report: Report) -> None:
    got = conditions(report)
    # the digest the run recorded (of smokelab.yaml as it was then: the inventory has changed since)
    assert got["inventory_digest"] == report.meta["inventory_digest"] and len(got["inventory_digest"]) == 71
    assert got["lab"] is True
    assert {got["lab_shaping_mbit"][f"{h}:data0"] for h in CLIENTS} == {250}
    assert {got["lab_shaping_mbit"][f"{h}:data0"] for h in STORAGE} == {500}
    assert got["software"]["racfg"] == __version__
    assert got["software"]["iperf3"] and all(v.startswith("iperf 3") for v in got["software"]["iperf3"])
    assert got["software"]["fio"] and all(v.startswith("fio-") for v in got["software"]["fio"])


def test_the_digest_is_of_the_inventory_as_read(tmp_path: Path) -> None:
    text = INVENTORY.read_text()
    commented = tmp_path / "commented.yaml"
    commented.write_text("# a comment changes no value\n" + text)
    changed = tmp_path / "changed.yaml"
    changed.write_text(text.replace("host_mtu: 9000", "host_mtu: 1500"))
    digest = inventory_digest(load_cluster(INVENTORY))
    assert inventory_digest(load_cluster(commented)) == digest
    assert inventory_digest(load_cluster(changed)) != digest
    defaults = tmp_path / "defaults.yaml"  # a setting given at its default value is as if not given
    data = yaml.safe_load(INVENTORY.read_text())
    data["acceptance"]["smoke"] = {"outlier_fraction": 0.93}
    defaults.write_text(yaml.safe_dump(data))
    assert inventory_digest(load_cluster(defaults)) == digest


def test_recorded_read_back_and_the_earlier_one_kept(report: Report, state: Path) -> None:
    assert load_performance_baseline("smokelab") is None
    first = record_performance_baseline(report, "/runs/first-smoke")
    second_report = copy.deepcopy(report)
    second_report.started = "2026-11-28T13:00:00+0000"
    second = record_performance_baseline(second_report, "/runs/second-smoke")
    assert first == second == state / "baseline" / "smokelab.performance"
    listed = list_performance_baselines("smokelab")
    assert [b["current"] for b in listed] == [True, False] and listed[0]["source"] == "smoke second-smoke"
    assert (state / "baseline" / "smokelab.performance.history" / listed[1]["id"] / FIGURES_FILE).is_file()
    now = load_performance_baseline("smokelab")
    assert now["run"] == "/runs/second-smoke" and now["meta"]["current"]
    assert now["items"] == json.loads(json.dumps(baseline_items(report)))
    assert now["conditions"] == json.loads(json.dumps(conditions(report)))
    before = load_performance_baseline("smokelab", listed[1]["id"])
    assert before["run"] == "/runs/first-smoke" and not before["meta"]["current"]
    with pytest.raises(UsageError, match="no performance baseline 19990101"):
        load_performance_baseline("smokelab", "19990101-000000")
    assert list_baselines("smokelab") == []  # the drift baseline (facts) is another thing, not touched


def test_files_are_private_and_hold_no_secret(report: Report, state: Path) -> None:
    secret = "s3cret-Pa55-in-a-message"
    leaked = report.results[0]
    report.results[0] = replace(leaked, message=f"{leaked.message} {secret}",
                                data={**leaked.data, "password": secret})
    record_performance_baseline(report, "/runs/one-smoke")
    record_performance_baseline(report, "/runs/two-smoke")
    for root, _dirs, files in os.walk(state / "baseline"):
        assert stat.S_IMODE(os.stat(root).st_mode) == 0o700, root
        for name in files:
            path = Path(root, name)
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
            assert secret not in path.read_text(), path


@pytest.mark.parametrize(("change", "reason"), [
    ("fail", "the run did not pass (1 fail)"),
    ("skip", "not a full run: phases left out with --skip (rdma)"),
    ("hosts", "not a full run: only some hosts measured (--hosts smdgx01)"),
    ("old", "does not record its options and conditions"),
])
def test_a_failed_or_partial_run_is_refused_and_nothing_recorded(report: Report, state: Path, change: str,
                                                                 reason: str) -> None:
    if change == "fail":
        report.results[0] = replace(report.results[0], status=Status.FAIL)
    elif change == "skip":
        report.meta["options"] = {"skip": ["rdma"], "hosts": None}
    elif change == "hosts":
        report.meta["options"] = {"skip": [], "hosts": ["smdgx01"]}
    else:
        del report.meta["options"], report.meta["inventory_digest"]
    assert any(reason in r for r in why_not_baseline(report)), why_not_baseline(report)
    with pytest.raises(UsageError, match="not accepted as the performance baseline"):
        record_performance_baseline(report, "/runs/x-smoke")
    assert list_performance_baselines("smokelab") == []


def racfg(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "racfg", "smoke", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "RACFG_STATE_DIR": str(state), "RACFG_PLAIN": "1"})


def test_accept_run_keeps_a_finished_run_and_refuses_a_failed_one(tmp_path: Path) -> None:
    state = tmp_path / "state"
    runs = state / "runs"
    good = runs / "20261128-120000-smoke"
    good.mkdir(parents=True)
    shutil.copy(RECORDING, good / "results.json")
    failed = runs / "20261128-120500-smoke"
    failed.mkdir()
    document = json.loads(RECORDING.read_text())
    document["results"][0]["status"] = "fail"
    (failed / "results.json").write_text(json.dumps(document))

    refused = racfg("--accept-run", failed.name, state=state)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "not accepted as the performance baseline: the run did not pass (1 fail)" in refused.stderr
    assert not (state / "baseline").exists()

    accepted = racfg("--accept-run", good.name, state=state)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "performance baseline recorded" in accepted.stderr
    kept = json.loads((state / "baseline" / "smokelab.performance" / FIGURES_FILE).read_text())
    assert kept["run"] == str(good) and "link.write.smdgx03:data0" in kept["items"]
    again = racfg("--accept-run", str(good), state=state)
    assert again.returncode == 0 and "1 earlier kept in smokelab.performance.history" in again.stderr

    missing = racfg("--accept-run", "no-such-run", state=state)
    assert missing.returncode == 2 and "--accept-run: no smoke run 'no-such-run'" in missing.stderr


def test_accept_with_skip_is_refused_before_measuring(tmp_path: Path) -> None:
    state = tmp_path / "state"
    proc = racfg(str(INVENTORY), "--accept", "--skip", "rdma", state=state)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--accept keeps a full run only" in proc.stderr and "Traceback" not in proc.stderr
    assert not (state / "runs").exists()  # nothing measured, no run record


def test_a_clean_full_run_says_how_to_accept_it(report: Report, state: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from racfg.cli.smoke_cmd import _baseline_step

    assert _baseline_step(report, "/x/runs/20261128-120000-smoke", accept=False, code=0) == 0
    assert "racfg smoke --accept-run 20261128-120000-smoke" in capsys.readouterr().err
    assert list_performance_baselines("smokelab") == []  # offered, not recorded
    assert _baseline_step(report, "/x/runs/20261128-120000-smoke", accept=True, code=0) == 0  # --accept
    assert load_performance_baseline("smokelab")["run"] == "/x/runs/20261128-120000-smoke"
    capsys.readouterr()
    report.meta["options"]["skip"] = ["nccl"]
    assert _baseline_step(report, "/x/runs/20261128-120000-smoke", accept=False, code=0) == 0
    assert "--accept-run" not in capsys.readouterr().err  # a partial run is not offered
    assert _baseline_step(report, "/x/runs/20261128-120500-smoke", accept=True, code=0) == 1
    assert "not a full run" in capsys.readouterr().err
    assert len(list_performance_baselines("smokelab")) == 1  # the refused run recorded nothing
