#!/usr/bin/env python3
"""Every racfg command measured at 4, 17, 64 and 128 hosts on the virtual lab (issues 14 and 38).

Sizes (each a lab of its own site, so it never meets another person's lab):
   4  inventory/lab.yaml as site ``scale4`` (198.18.70.0/24, 198.19.70.0/24)
  17  inventory/ra-ethernet.yaml as site ``scale17`` (198.18.72.0/24, 198.19.72.0/24), with inbox
      OFED, no drive models and a lab switch password, as in bench/deploy.py
  64  bench/pod64.yaml (48 DGX + 16 storage nodes on one 7368X)
 128  bench/pod128.yaml (96 DGX + 32 storage nodes on 8 SN2700 leaves x 2 spines, routed)

Per size: ``lab up`` (wall, memory), first deploy, no-change re-run, the same re-run by plain
``ansible-playbook`` (the reference racfg's wrapper is held to) and through ansible-runner alone
(bench/runner_alone.py: what ansible-runner's event protocol costs without racfg), validate, drift
and smoke. ``--repeat N`` runs the three re-runs N times, alternating (each round in the other order
from the last), and reports the median of each and of their ratios, and the ratio over all pairs
with a bootstrap 90% interval: on a shared 2-core machine one run of the same code can measure 10%
apart from the next, which is the size of the difference being measured.
Each command row: wall seconds, the controller's CPU-seconds per host (racfg and everything it
starts, see cpu_account.py) and the lab machines' CPU-seconds per host. Then the per-host slope
of each (least squares over the sizes run). Targets: no-change deploy < 2.7 controller CPU-s per
host; racfg < 1.10x plain ansible-playbook; and the per-size targets in TARGETS (64 hosts: lab up
< 30 s and < 1 GiB, validate < 60 s; the 128-host pod: lab up < 60 s and < 1.5 GiB, validate < 30 s,
drift < 4 min, smoke < 20 min), each printed with its verdict (memory: the larger of the lab
processes' PSS and the drop in MemAvailable).

    .venv/bin/python bench/scale.py [--sizes 4,17,64,128] [--skip smoke,drift] [--repeat 3]

Needs root; builds and removes its labs (a 64-host lab is heavy on a 2-core machine: run alone).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from cpu_account import ControllerClock, Measured, command, load, measure, netns_inodes  # noqa: E402

RACFG = [sys.executable, "-m", "racfg"]
STEPS = ("deploy", "rerun", "plain", "runner", "validate", "drift", "smoke")
RATIO_TARGET = 1.10  # racfg's controller CPU over plain ansible-playbook's on the same inventory
# A converged site's re-check (issue 40): wall time against validate's on the same lab, in one run
# (issue 52: the no-change deploy at most 1.5x, with public ansible-core API only; issue 40 had 3x)
CONVERGED_RATIOS = {"no-change deploy": 1.5, "drift": 2.0}
RERUN_CPU_TARGET = 1.0  # controller CPU-s per host of a no-change deploy
# The three ways the no-change site.yml runs, as the rows name them
RERUN, PLAIN, RUNNER = "no-change deploy", "plain ansible-playbook", "ansible-runner alone"
GIB = 1024**3
# Per size: each command's wall-time ceiling in seconds, and lab up's memory ceiling in GiB
TARGETS: dict[int, dict[str, float]] = {64: {"lab up": 30.0, "validate": 60.0, RERUN: 60.0, "drift": 45.0},
                                        128: {"lab up": 60.0, "validate": 30.0, "drift": 240.0, "smoke": 1200.0}}
MEMORY_TARGETS: dict[int, float] = {64: 1.0, 128: 1.5}


def lab_copy(size: int, tmp: Path) -> Path:
    """The inventory of a size, as a lab of its own site and subnets."""
    if size in (64, 128):
        return REPO / "bench" / f"pod{size}.yaml"
    if size == 4:
        text = (REPO / "inventory" / "lab.yaml").read_text()
        text = text.replace("  name: lab\n", "  name: scale4\n")
        text = text.replace("198.18.0.", "198.18.70.").replace("198.19.0.", "198.19.70.")
    elif size == 17:
        text = (REPO / "inventory" / "ra-ethernet.yaml").read_text()
        text = text.replace("  name: ra-ethernet\n", "  name: scale17\n")
        text = text.replace("198.18.1.", "198.18.72.").replace("198.19.1.", "198.19.72.")
        text = text.replace("    flavor: mlnx\n    version: 4.5-1.0.1.0\n", "    flavor: inbox\n")
        text = text.replace("        model: Micron 9200\n", "")
        text = text.replace("      password_env: RACFG_SN2700_PASSWORD\n", "      lab: true\n")
    else:
        raise SystemExit(f"no inventory for size {size}: use 4, 17, 64 or 128")
    path = tmp / f"scale{size}.yaml"
    path.write_text(text)
    return path


def mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


@dataclass
class Row:
    size: int
    what: str
    wall: float
    controller: float | None = None  # CPU-s per host
    lab: float | None = None  # CPU-s per host
    note: str = ""
    gib: float | None = None  # lab up: the larger of the lab's PSS and the drop in MemAvailable


@dataclass
class Bench:
    clock: ControllerClock
    env: dict[str, str]
    rows: list[Row] = field(default_factory=list)

    def racfg(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*RACFG, *args], capture_output=True, text=True, env=self.env, cwd=REPO, check=False,
                              stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise SystemExit(f"racfg {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        return proc

    def timed(self, size: int, what: str, hosts: int, namespaces: dict[int, str], argv: list[str],
              ok: tuple[int, ...] = (0,), note: str = "") -> Measured:
        return self.record(size, what, hosts, measure(self.clock, namespaces, command(argv, self.env, REPO)),
                           ok, note)

    def record(self, size: int, what: str, hosts: int, got: Measured, ok: tuple[int, ...] = (0,),
               note: str = "") -> Measured:
        extra = note
        if got.rc not in ok:
            extra = f"exit {got.rc}: " + (got.stderr.strip().splitlines() or got.stdout.strip().splitlines()
                                         or ["no output"])[-1][:120]
        elif got.rc:
            extra = f"exit {got.rc} {note}".strip()
        self.rows.append(Row(size, what, got.wall, got.controller_cpu / hosts, got.lab_cpu / hosts, extra))
        print(f"  {what:<22} {got.wall:7.1f} s  controller {got.controller_cpu / hosts:5.2f}  "
              f"lab {got.lab_cpu / hosts:5.2f} CPU-s/host  {extra}  (load {load()})", flush=True)
        return got


def changed(stdout: str) -> str:
    try:
        doc = json.loads(stdout)
    except ValueError:
        return ""
    return f"changed={sum(h['changed'] for h in doc.get('hosts', []))}"


def plain_rerun(inventory: Path, site: str, rendered: Path) -> tuple[int, str, str]:
    """site.yml by plain ansible-playbook on the rendered inventory, as an operator would run it."""
    from labsupport import run_playbook

    from racfg_lab import api

    result = run_playbook(rendered, "site.yml", timeout=3600, overrides=api.connection_overrides(site))
    changes = sum(r["changed"] for r in result.recap.values())
    return result.rc, f"changed={changes}", result.output[-2000:] if result.rc else ""


def runner_rerun(site: str, rendered: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """site.yml through ansible-runner alone (bench/runner_alone.py), with plain's options."""
    from labsupport import operator_options

    from racfg_lab import api

    with operator_options(api.connection_overrides(site)) as options:
        proc = subprocess.run([sys.executable, str(REPO / "bench" / "runner_alone.py"), "site.yml", str(rendered),
                               *options], capture_output=True, text=True, env=env, cwd=REPO, timeout=3600,
                              check=False)
    return proc.returncode, proc.stdout.strip(), (proc.stdout + proc.stderr)[-2000:] if proc.returncode else ""


def bench_size(bench: Bench, size: int, inventory: Path, steps: set[str], tmp: Path, repeat: int = 1) -> None:
    from racfg.inventory import load_cluster
    from racfg_lab import status
    from racfg_lab.state import load_state

    cluster = load_cluster(inventory)
    site, hosts = cluster.name, len(cluster.hosts)
    print(f"{size} hosts: site {site} ({inventory.name}), load {load()}", flush=True)
    bench.racfg("lab", "down", str(inventory))
    before = mem_available()
    start = time.perf_counter()
    bench.racfg("lab", "up", str(inventory))
    up_wall = time.perf_counter() - start
    try:
        time.sleep(2)  # let the boots settle before reading memory
        state = load_state(site)
        assert state is not None
        pss = status.collect(state).memory_mib / 1024
        delta = (before - mem_available()) / GIB
        bench.rows.append(Row(size, "lab up", up_wall, note=f"{pss:.2f} GiB PSS, {delta:.2f} GiB MemAvailable",
                              gib=max(pss, delta)))
        print(f"  {'lab up':<22} {up_wall:7.1f} s  {pss:.2f} GiB PSS of lab processes, "
              f"{delta:.2f} GiB less MemAvailable  (load {load()})", flush=True)
        spaces = netns_inodes(f"rf-{site}.")
        spaces = {ino: name for ino, name in spaces.items() if name.split(".", 1)[1] in state.hosts}
        deploy = [*RACFG, "deploy", str(inventory), "--yes", "--format", "json"]
        if steps & {"deploy", "rerun", "plain", "validate", "drift"}:
            got = bench.timed(size, "first deploy", hosts, spaces, deploy)
            bench.rows[-1].note = bench.rows[-1].note or changed(got.stdout)
            if got.rc != 0:  # the rest would measure a broken site
                print(f"  first deploy failed: the other steps at {size} hosts are left out", flush=True)
                return
        rendered = tmp / f"rendered-{site}"
        if steps & {"plain", "runner"}:
            bench.racfg("render", str(inventory), "--out", str(rendered))
        def rerun() -> None:
            got = bench.timed(size, RERUN, hosts, spaces, deploy)
            bench.rows[-1].note = bench.rows[-1].note or changed(got.stdout)

        def plain() -> None:
            got = measure(bench.clock, spaces, lambda: plain_rerun(inventory, site, rendered))
            bench.record(size, PLAIN, hosts, got, note=got.stdout)

        def runner() -> None:
            got = measure(bench.clock, spaces, lambda: runner_rerun(site, rendered, bench.env))
            bench.record(size, RUNNER, hosts, got, note=got.stdout)

        runs = [run for step, run in (("rerun", rerun), ("plain", plain), ("runner", runner)) if step in steps]
        for turn in range(repeat):
            # Alternating, and each round in the other order from the last (racfg first, then racfg last):
            # a machine that slows down or speeds up through the bench then favours neither.
            for run in runs if turn % 2 == 0 else runs[::-1]:
                run()
        if "validate" in steps:
            bench.timed(size, "validate", hosts, spaces, [*RACFG, "validate", str(inventory), "--format", "json"],
                        ok=(0, 1))
        if "drift" in steps:
            bench.timed(size, "drift", hosts, spaces, [*RACFG, "drift", str(inventory), "--format", "json"],
                        ok=(0, 1))
        if "smoke" in steps:
            got = bench.timed(size, "smoke", hosts, spaces, [*RACFG, "smoke", str(inventory), "--format", "json"],
                              ok=(0, 1))
            print_not_passed(got.stdout)
    finally:
        start = time.perf_counter()
        subprocess.run([*RACFG, "lab", "down", str(inventory)], capture_output=True, env=bench.env, cwd=REPO,
                       check=False)
        print(f"  {'lab down':<22} {time.perf_counter() - start:7.1f} s", flush=True)


def print_not_passed(stdout: str) -> None:
    """The checks of a JSON report that failed or could not run: what a figure's "exit 1" stands for."""
    try:
        results = json.loads(stdout).get("results", [])
    except (ValueError, AttributeError):
        return
    for result in results:
        if result.get("status") in ("fail", "error"):
            print(f"    {result['status'].upper():5} {result['check']}: {result['message'][:300]}", flush=True)


def slope(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of value over hosts (the marginal cost of one more host)."""
    if len({x for x, _ in points}) < 2:
        return None
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)


def pooled_ratio(pairs: list[tuple[float, float]], resamples: int = 4000) -> tuple[float, float, float]:
    """The ratio of totals over alternating (racfg, plain) pairs, and its bootstrap 90% interval.

    Why not only the median of the pairs' ratios: on a shared 2-core machine one pair can measure
    10% apart from the next, so with a handful of pairs the median jumps by whole percents. The
    pooled ratio weighs every run, and the interval (pairs resampled with a fixed seed, so the same
    figures print the same interval) says how far the figures allow the true ratio to be.
    """
    import random

    def ratio(sample: list[tuple[float, float]]) -> float:
        return sum(a for a, _ in sample) / sum(b for _, b in sample)

    rng = random.Random(14)
    draws = sorted(ratio(rng.choices(pairs, k=len(pairs))) for _ in range(resamples))
    return ratio(pairs), draws[int(0.05 * resamples)], draws[int(0.95 * resamples) - 1]


def verdict(low: float, high: float) -> str:
    """What a ratio's interval says about RATIO_TARGET: met only when all of it is under."""
    if high < RATIO_TARGET:
        return "met"
    return "missed" if low >= RATIO_TARGET else "not shown either way"


def median_row(rows: list[Row], size: int, what: str) -> Row | None:
    """The run of ``what`` at ``size`` with the median controller cost (the lower middle of an even
    count); with one run, that run."""
    runs = sorted((r for r in rows if r.size == size and r.what == what), key=lambda r: r.controller or 0.0)
    return runs[(len(runs) - 1) // 2] if runs else None


def ratio_lines(rows: list[Row], size: int) -> list[str]:
    """The controller-CPU ratios of the alternating runs at ``size``: racfg over plain (the target's,
    with its verdict), and, when ansible-runner alone ran too, the two parts it splits into:
    ansible-runner over plain (its event protocol) and racfg over ansible-runner (racfg's own part).
    Each: the medians', each pair's, and over all pairs with its 90% interval (more than two pairs).
    The i-th run of one kind pairs with the i-th of the other: they ran in the same round."""
    out = []
    for top, bottom, name in ((RERUN, PLAIN, "racfg / plain"), (RUNNER, PLAIN, "ansible-runner alone / plain"),
                              (RERUN, RUNNER, "racfg / ansible-runner alone")):
        tops = [r for r in rows if r.size == size and r.what == top]
        bottoms = [r for r in rows if r.size == size and r.what == bottom]
        both = [(a.controller, b.controller) for a, b in zip(tops, bottoms, strict=False)
                if a.controller and b.controller]
        if not both:
            continue
        target = (top, bottom) == (RERUN, PLAIN)
        mid_top, mid_bottom = median_row(rows, size, top), median_row(rows, size, bottom)
        if not (mid_top and mid_bottom and mid_top.controller and mid_bottom.controller):
            continue
        each = sorted(a / b for a, b in both)
        line = (f"{name} controller CPU, medians of {len(both)}: {mid_top.controller / mid_bottom.controller:.2f}x "
                f"(wall {mid_top.wall / mid_bottom.wall:.2f}x)")
        if len(each) > 1:
            line += f"; each pair {', '.join(f'{x:.2f}x' for x in each)}"
        if len(both) > 2:
            pooled, low, high = pooled_ratio(both)
            line += f"; over all pairs {pooled:.3f}x, 90% interval {low:.3f}-{high:.3f}x"
            line += f": < {RATIO_TARGET:.2f}x {verdict(low, high)}" if target else ""
        elif target:
            line += f"  [< {RATIO_TARGET:.2f}x]"
        out.append(line)
    return out


def converged_lines(rows: list[Row], size: int) -> list[str]:
    """A converged site's re-check against validate's wall time at ``size`` (CONVERGED_RATIOS)."""
    validate = median_row(rows, size, "validate")
    if validate is None or not validate.wall:
        return []
    out = []
    for what, ceiling in CONVERGED_RATIOS.items():
        row = median_row(rows, size, what if what != "no-change deploy" else RERUN)
        if row is not None:
            ratio = row.wall / validate.wall
            out.append(f"{what} / validate wall {row.wall:.1f} / {validate.wall:.1f} s = {ratio:.2f}x "
                       f"[< {ceiling:g}x]: {'met' if ratio < ceiling else 'missed'}")
    return out


def target_lines(rows: list[Row], size: int) -> list[str]:
    """Each measured command of ``size`` that has a target (TARGETS, MEMORY_TARGETS): figure, target,
    verdict. A command that failed (its note says the exit) is judged missed whatever its time."""
    out = []
    for what, seconds in TARGETS.get(size, {}).items():
        row = median_row(rows, size, what)
        if row is None:
            out.append(f"{what} [< {seconds:g} s]: not measured")
            continue
        failed = re.match(r"exit \d+:", row.note) is not None  # record()'s note of an exit outside ``ok``
        line = f"{what} {row.wall:.1f} s [< {seconds:g} s]"
        met = row.wall < seconds and not failed
        memory = MEMORY_TARGETS.get(size) if what == "lab up" else None
        if memory is not None and row.gib is not None:
            line += f", {row.gib:.2f} GiB [< {memory:g} GiB]"
            met = met and row.gib < memory
        out.append(f"{line}: {'met' if met else 'missed'}" + (f" ({row.note})" if failed else ""))
    return out


def report(rows: list[Row], sizes: list[int]) -> None:
    what_order: list[str] = []
    for row in rows:
        if row.what not in what_order:
            what_order.append(row.what)
    print()
    head = "  ".join(f"{s:>3} hosts: wall | ctrl | lab" for s in sizes)
    print(f"{'command':<22}  {head}  slope: s/host  ctrl CPU-s/host")
    for what in what_order:
        cells, wall_pts, ctrl_pts = [], [], []
        for size in sizes:
            row = median_row(rows, size, what)
            if row is None:
                cells.append(f"{'-':>25}")
                continue
            ctrl = f"{row.controller:5.2f}" if row.controller is not None else "    -"
            lab = f"{row.lab:5.2f}" if row.lab is not None else "    -"
            cells.append(f"{row.wall:8.1f} s |{ctrl} |{lab}")
            wall_pts.append((size, row.wall))
            if row.controller is not None:
                ctrl_pts.append((size, row.controller * size))
        wall_slope, ctrl_slope = slope(wall_pts), slope(ctrl_pts)
        print(f"{what:<22}  " + "  ".join(cells) + "  "
              + (f"{wall_slope:10.2f}" if wall_slope is not None else f"{'-':>10}")
              + (f"  {ctrl_slope:10.2f}" if ctrl_slope is not None else f"  {'-':>10}"))
    notes = [f"{r.size:>3} {r.what}: {r.note}" for r in rows if r.note]
    if notes:
        print("notes:\n  " + "\n  ".join(notes))
    for size in sizes:
        for line in ratio_lines(rows, size):
            print(f"{size:>3} hosts: {line}")
        rerun = median_row(rows, size, RERUN)
        if rerun and rerun.controller:
            verdict_cpu = "met" if rerun.controller < RERUN_CPU_TARGET else "missed"
            print(f"{size:>3} hosts: no-change deploy {rerun.controller:.2f} controller CPU-s per host "
                  f"[< {RERUN_CPU_TARGET:g}]: {verdict_cpu}")
        for line in converged_lines(rows, size):
            print(f"{size:>3} hosts: {line}")
        for line in target_lines(rows, size):
            print(f"{size:>3} hosts: {line}")
    print(f"machine: {os.cpu_count()} CPUs, load {load()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="4,17,64", help="comma separated: 4, 17, 64, 128")
    parser.add_argument("--skip", default="", help=f"comma separated steps to leave out: {','.join(STEPS)}")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run the no-change re-run, plain ansible-playbook and ansible-runner alone this many "
                             "times, alternating; the table shows their medians")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench/scale.py: the lab needs root", file=sys.stderr)
        return 3
    sizes = [int(s) for s in re.split(r"[ ,]+", args.sizes) if s]
    steps = set(STEPS) - set(args.skip.split(","))
    clock = ControllerClock()
    with tempfile.TemporaryDirectory(prefix="racfg-scale-") as tmp:
        env = {**os.environ, "RACFG_STATE_DIR": str(Path(tmp) / "state"), "RACFG_PLAIN": "1"}
        bench = Bench(clock, env)
        for size in sizes:
            bench_size(bench, size, lab_copy(size, Path(tmp)), steps, Path(tmp), max(args.repeat, 1))
    report(bench.rows, sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
