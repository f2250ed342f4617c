"""Deploy's pieces that need no lab: scope, lock, preflight, baseline swap."""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path

import pytest

from racfg.deploy.baseline import commit_baseline, load_baseline, staging_dir
from racfg.deploy.preflight import ofed_source_problem
from racfg.deploy.runner import DeployOptions, switches_in_scope
from racfg.errors import CannotRunError
from racfg.inventory import load_cluster
from racfg.locking import site_lock

REPO = Path(__file__).resolve().parents[2]


def test_switch_scope_follows_limit_and_tags():
    cluster = load_cluster(REPO / "inventory" / "lab.yaml")
    assert switches_in_scope(cluster, DeployOptions()) == ["sw1"]
    assert switches_in_scope(cluster, DeployOptions(limit="dgx01")) == []
    assert switches_in_scope(cluster, DeployOptions(limit="dgx01,sw1")) == ["sw1"]
    assert switches_in_scope(cluster, DeployOptions(limit="switches")) == ["sw1"]
    assert switches_in_scope(cluster, DeployOptions(tags="fabric")) == []
    assert switches_in_scope(cluster, DeployOptions(skip_tags="switch")) == []


def _hold(directory: str, ready: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    with site_lock(Path(directory), "lab", "deploy"):
        ready.set()
        time.sleep(5)


def test_second_holder_is_refused_with_pid(tmp_path):
    ready = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold, args=(str(tmp_path), ready))
    holder.start()
    try:
        assert ready.wait(10)
        with pytest.raises(CannotRunError) as info, site_lock(tmp_path, "lab", "deploy"):
            pass
        assert f"pid {holder.pid}" in str(info.value) and "started" in str(info.value)
    finally:
        holder.terminate()
        holder.join()
    with site_lock(tmp_path, "lab", "deploy"):  # released when its holder died
        pass


def test_missing_ofed_source_is_named(tmp_path):
    inv = (REPO / "inventory" / "ra-ethernet.yaml").read_text()
    path = tmp_path / "site.yaml"
    path.write_text(inv.replace("/srv/mlnx/MLNX_OFED_LINUX-4.5-1.0.1.0-ubuntu16.04-x86_64", "ofed-dir"))
    problem = ofed_source_problem(load_cluster(path))
    assert problem is not None and "software.ofed.source" in problem and "does not exist" in problem
    (tmp_path / "ofed-dir").mkdir()
    assert ofed_source_problem(load_cluster(path)) is None


def test_baseline_swaps_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("RACFG_STATE_DIR", str(tmp_path))
    for version in ("1", "2"):
        staging = staging_dir("lab")
        (staging / "hosts" / "dgx01.json").write_text(json.dumps({"kernel": version}))
        commit_baseline("lab", staging, {"site": "lab"})
    baseline = load_baseline("lab")
    assert baseline is not None and baseline["hosts"]["dgx01"] == {"kernel": "2"}
    assert json.loads((tmp_path / "baseline" / "lab.previous" / "hosts" / "dgx01.json").read_text()) == {
        "kernel": "1"}


def test_unset_password_variable_is_named_before_anything_runs(tmp_path, monkeypatch):
    from racfg.deploy.preflight import run_preflight
    from racfg.errors import UsageError

    monkeypatch.delenv("RACFG_SN2700_PASSWORD", raising=False)
    inv = (REPO / "inventory" / "ra-ethernet.yaml").read_text()
    path = tmp_path / "site.yaml"
    path.write_text(inv.replace("flavor: mlnx", "flavor: inbox"))
    with pytest.raises(UsageError) as info:
        run_preflight(load_cluster(path), ["sn2700"])
    text = str(info.value)
    assert "switch sn2700: environment variable RACFG_SN2700_PASSWORD is not set" in text
    assert "site.yaml:" in text and "switches[0].credentials" in text
    monkeypatch.setenv("RACFG_SN2700_PASSWORD", "from-the-environment")
    run_preflight(load_cluster(path), ["sn2700"])
