"""``racfg history FILE`` over real smoke run records (tests/recordings/smoke-history, see its
ORIGIN.md): the runs of the site oldest first, the key figures and every figure, the formats, the
plot, the options, bad input (exit 2/3, a located message, no traceback), and that it only reads."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import statistics
import struct
import sys
from pathlib import Path

import pytest

from racfg.cli import invoke
from racfg.history.key_figures import family_of, key_figures
from racfg.history.run_figures import Figure

REPO = Path(__file__).resolve().parents[2]
RECORDINGS = REPO / "tests" / "recordings"
# each run's recorded results.json; the 11:56 run is the baseline's recording, kept once (smoke-smokelab)
SOURCES = {p.name: p for p in (RECORDINGS / "smoke-history").iterdir() if p.is_dir()} | {
    "20261128-115605-smoke": RECORDINGS / "smoke-smokelab"}
INVENTORY = str(REPO / "tests" / "smoke" / "smokelab.yaml")  # site smokelab, the recordings' site
OTHER_SITE = str(REPO / "inventory" / "lab.yaml")
RUNS = sorted(SOURCES)


def raw(run: str) -> dict:
    return json.loads((SOURCES[run] / "results.json").read_text())


def metrics(run: str) -> dict[str, float]:
    return {m["name"]: m["value"] for r in raw(run)["results"] for m in r.get("data", {}).get("metrics", [])}


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state directory holding the recorded runs, as racfg smoke left them, and a drift run beside."""
    for name in [k for k in os.environ if k.startswith("RACFG_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("RACFG_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("RACFG_PLAIN", "1")
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "state" / "runs"
    for run in RUNS:
        (runs / run).mkdir(parents=True)
        shutil.copyfile(SOURCES[run] / "results.json", runs / run / "results.json")
    (runs / "20261128-100000-drift").mkdir()
    (runs / "20261128-100000-drift" / "results.json").write_text('{"command": "drift", "site": "smokelab"}')
    return tmp_path / "state"


def racfg(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["racfg", *argv])
    code = invoke()
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def history_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = racfg(monkeypatch, capsys, "history", INVENTORY, "--format", "json", *argv)
    assert code == 0, err
    return json.loads(out)


def test_recordings_are_several_real_smoke_runs_of_one_site() -> None:
    assert len(RUNS) >= 3
    assert {raw(run)["site"] for run in RUNS} == {"smokelab"}
    assert all(raw(run)["command"] == "smoke" and metrics(run) for run in RUNS)


def test_table_lists_each_run_oldest_first_with_its_key_figures(monkeypatch, capsys) -> None:
    code, out, err = racfg(monkeypatch, capsys, "history", INVENTORY)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"site smokelab: {len(RUNS)} smoke run(s)"
    listed = [line.split()[3] for line in lines[3:3 + len(RUNS)]]
    assert listed == RUNS  # record names sort by time
    assert all(line.split()[4] == "pass" for line in lines[3:3 + len(RUNS)])
    figures = {line.split()[0]: line.split() for line in lines[3 + len(RUNS):] if line.strip()}
    assert "20261128-100000-drift" not in out
    for name in ("scaling.aggregate.n1", "scaling.efficiency.n3", "link.read.worst", "link.write.median",
                 "storage.drive.seq.n1"):
        assert name in figures, name
    assert not any(name.startswith("link.read.smdgx") for name in figures)  # per-item: --all
    worst = min(v for k, v in metrics(RUNS[0]).items() if k.startswith("link.read."))
    assert figures["link.read.worst"][3] == f"{worst:.4g}"


def test_json_keeps_each_runs_value_and_the_change_from_the_first(monkeypatch, capsys) -> None:
    data = history_json(monkeypatch, capsys)
    assert [r["run"] for r in data["runs"]] == RUNS and data["site"] == "smokelab"
    rows = {row["figure"]: row for row in data["figures"]}
    first, last = metrics(RUNS[0]), metrics(RUNS[-1])
    step = rows["scaling.aggregate.n3"]
    assert step["unit"] == "Mbit/s" and step["better"] == "higher"
    assert step["values"] == {run: metrics(run)["scaling.aggregate.n3"] for run in RUNS}
    expected = (last["scaling.aggregate.n3"] - first["scaling.aggregate.n3"]) / first["scaling.aggregate.n3"]
    assert step["change"] == pytest.approx(expected, abs=1e-6)
    reads = [v for k, v in last.items() if k.startswith("link.read.")]
    assert rows["link.read.median"]["values"][RUNS[-1]] == pytest.approx(statistics.median(reads))


def test_csv_is_one_line_per_run_and_figure_measured(monkeypatch, capsys) -> None:
    code, out, _ = racfg(monkeypatch, capsys, "history", INVENTORY, "--format", "csv", "--all")
    assert code == 0
    lines = list(csv.DictReader(io.StringIO(out)))
    assert set(lines[0]) == {"started", "run", "outcome", "figure", "unit", "better", "value"}
    for run in RUNS:
        mine = {line["figure"]: float(line["value"]) for line in lines if line["run"] == run}
        for name, value in metrics(run).items():
            assert mine[name] == pytest.approx(value), (run, name)


def test_figure_globs_pick_among_every_figure(monkeypatch, capsys) -> None:
    data = history_json(monkeypatch, capsys, "--figure", "link.read.*")
    names = {row["figure"] for row in data["figures"]}
    links = {k for k in metrics(RUNS[0]) if k.startswith("link.read.")}
    assert names == links | {"link.read.worst", "link.read.median"}
    data = history_json(monkeypatch, capsys, "-F", "scaling.efficiency.n1, scaling.aggregate.n2")
    assert [row["figure"] for row in data["figures"]] == ["scaling.aggregate.n2", "scaling.efficiency.n1"]


def test_last_and_since_pick_the_runs(monkeypatch, capsys) -> None:
    assert [r["run"] for r in history_json(monkeypatch, capsys, "--last", "1")["runs"]] == RUNS[-1:]
    assert [r["run"] for r in history_json(monkeypatch, capsys, "--since", RUNS[1])["runs"]] == RUNS[1:]
    assert [r["run"] for r in history_json(monkeypatch, capsys, "--since", "2026-11-28")["runs"]] == RUNS
    code, _, err = racfg(monkeypatch, capsys, "history", INVENTORY, "--since", "2030-01-01")
    assert code == 2 and "--since 2030-01-01" in err and RUNS[-1] in err and "Traceback" not in err
    code, _, err = racfg(monkeypatch, capsys, "history", INVENTORY, "--since", "last tuesday")
    assert code == 2 and "neither a run's name nor a date" in err


def test_plot_draws_a_png_of_the_figures(monkeypatch, capsys, tmp_path: Path) -> None:
    target = tmp_path / "out" / "history.png"
    code, _, err = racfg(monkeypatch, capsys, "history", INVENTORY, "--plot", str(target))
    assert code == 0 and str(target) in err
    head = target.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert width >= 1000 and height >= 1000  # 3 panels a row, one row per 3 key figures
    assert target.stat().st_size > 50_000
    code, _, err = racfg(monkeypatch, capsys, "history", INVENTORY, "--plot", str(tmp_path / "h.svg"))
    assert code == 2 and "--plot" in err and ".png" in err


def test_history_only_reads(monkeypatch, capsys, state: Path, tmp_path: Path) -> None:
    def snapshot() -> dict[str, tuple]:
        return {str(p.relative_to(state)): (p.stat().st_mode, p.stat().st_mtime_ns,
                                            p.read_bytes() if p.is_file() else b"")
                for p in sorted(state.rglob("*"))}

    before = snapshot()
    for argv in (["--all"], ["--format", "json"], ["--format", "csv"], ["--plot", str(tmp_path / "h.png")]):
        assert racfg(monkeypatch, capsys, "history", INVENTORY, *argv)[0] == 0
    assert snapshot() == before


def test_a_corrupt_or_missing_record_is_skipped_by_name(monkeypatch, capsys, state: Path) -> None:
    broken = state / "runs" / RUNS[0] / "results.json"
    broken.write_text(broken.read_text()[:500])
    (state / "runs" / "20261128-090000-smoke").mkdir()  # interrupted: no results
    code, out, err = racfg(monkeypatch, capsys, "history", INVENTORY, "--format", "json")
    assert code == 0 and "Traceback" not in err
    assert f"warning: skipped {broken}: not JSON" in err
    assert "20261128-090000-smoke: no results.json" in err
    assert [r["run"] for r in json.loads(out)["runs"]] == RUNS[1:]


def test_a_record_of_the_wrong_shape_is_skipped_by_name(monkeypatch, capsys, state: Path) -> None:
    listed = state / "runs" / RUNS[0] / "results.json"
    listed.write_text("[]")
    odd = state / "runs" / RUNS[1] / "results.json"
    data = raw(RUNS[1])
    next(r for r in data["results"] if r.get("data", {}).get("metrics"))["data"]["metrics"][0]["value"] = "fast"
    odd.write_text(json.dumps(data))
    code, out, err = racfg(monkeypatch, capsys, "history", INVENTORY, "--format", "json")
    assert code == 0 and "Traceback" not in err
    assert f"skipped {listed}: not the results of a smoke run" in err
    assert f"skipped {odd}: a figure cannot be read" in err
    assert [r["run"] for r in json.loads(out)["runs"]] == RUNS[2:]


def test_no_runs_of_the_site_cannot_run(monkeypatch, capsys, state: Path) -> None:
    code, _, err = racfg(monkeypatch, capsys, "history", OTHER_SITE)
    assert code == 3 and "no smoke run of site lab" in err and f"{len(RUNS)} smoke run(s) of other sites" in err
    for run in RUNS:
        (state / "runs" / run / "results.json").write_text("{")
    code, _, err = racfg(monkeypatch, capsys, "history", INVENTORY)
    assert code == 3 and err.count("warning: skipped") == len(RUNS) and "no smoke run of site smokelab" in err


def test_bad_command_lines_are_refused(monkeypatch, capsys, tmp_path: Path) -> None:
    code, _, err = racfg(monkeypatch, capsys, "history", INVENTORY, "--figure", "nccl.*")
    assert code == 2 and "--figure nccl.*: no figure of these runs matches" in err and "scaling.aggregate.n1" in err
    not_inventory = tmp_path / "notes.yaml"
    not_inventory.write_text("- just\n- a list\n")
    code, _, err = racfg(monkeypatch, capsys, "history", str(not_inventory))
    assert code == 2 and str(not_inventory) in err and "Traceback" not in err
    code, _, err = racfg(monkeypatch, capsys, "history", str(tmp_path / "missing.yaml"))
    assert code == 2 and "missing.yaml" in err
    code, _, err = racfg(monkeypatch, capsys, "history", INVENTORY, "--last", "0")
    assert code == 2 and "--last" in err


def test_key_figures_are_site_wide_ones_and_each_familys_worst_and_median() -> None:
    assert family_of("link.write.dgx01:data0") == "link.write"
    assert family_of("rdma.ib_write_bw.dgx01:data0") == "rdma.ib_write_bw"
    assert family_of("nccl.node.dgx01") == "nccl.node"
    assert family_of("storage.drive.seq.n2.stor01") == "storage.drive.seq.n2"
    for site_wide in ("storage.drive.seq.n2", "scaling.efficiency.n4", "nccl.n2", "spine.crossing",
                      "benchmark.resnet.n2"):
        assert family_of(site_wide) is None, site_wide
    latency = {f"lat.{h}": Figure(f"lat.{h}", v, "us", "lower") for h, v in (("a", 3.0), ("b", 9.0))}
    links = {f"link.read.{h}": Figure(f"link.read.{h}", v, "Mbit/s", "higher")
             for h, v in (("a", 240.0), ("b", 250.0), ("c", 200.0))}
    key = key_figures({**latency, **links})
    assert key["link.read.worst"].value == 200.0 and key["link.read.median"].value == 240.0
    assert set(latency) <= set(key)
    lower = key_figures({f"nccl.node.{h}": Figure(f"nccl.node.{h}", v, "s", "lower")
                         for h, v in (("a", 1.0), ("b", 2.0))})
    assert lower["nccl.node.worst"].value == 2.0  # the worst of a lower-is-better figure is its highest
