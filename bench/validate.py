#!/usr/bin/env python3
"""`racfg validate` speed on the virtual lab (issue targets in brackets):

- validate of inventory/lab.yaml (4 hosts, 1 switch)                         [< 15 s]
- validate of inventory/ra-ethernet.yaml in the lab (17 hosts, 1 switch,
  a 9x8 dgx->storage jumbo matrix plus 8x7 storage pairs)                      [< 30 s, < 2.5x lab.yaml]

Both labs are deployed first (the checks then run against a converged site); ra-ethernet is
deployed with inbox OFED and without drive models, as in bench/deploy.py (the lab has no
MLNX_OFED distribution and its loop devices report no model). Each validate runs three times
and the median is printed with checks per second. Needs root; builds and removes its labs.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RACFG = [sys.executable, "-m", "racfg"]


def racfg(*args: str, env: dict[str, str], ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*RACFG, *args], capture_output=True, text=True, env=env, cwd=REPO, check=False,
                          stdin=subprocess.DEVNULL)
    if proc.returncode not in ok:
        sys.exit(f"racfg {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


def measure(inventory: str, env: dict[str, str], runs: int = 3) -> tuple[float, dict]:
    times, doc = [], {}
    for _ in range(runs):
        start = time.perf_counter()
        proc = racfg("validate", inventory, "--format", "json", env=env, ok=(0, 1, 3))
        times.append(time.perf_counter() - start)
        doc = json.loads(proc.stdout)
    return statistics.median(times), doc


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RACFG_STATE_DIR": tmp, "RACFG_PLAIN": "1"}
        lab = str(REPO / "inventory" / "lab.yaml")
        ra = Path(tmp) / "ra-ethernet.yaml"
        ra.write_text((REPO / "inventory" / "ra-ethernet.yaml").read_text().replace(
            "    flavor: mlnx\n    version: 4.5-1.0.1.0\n", "    flavor: inbox\n").replace(
            "        model: Micron 9200\n", ""))
        rows = []
        try:
            for name, inventory in (("lab.yaml", lab), ("ra-ethernet.yaml", str(ra))):
                racfg("lab", "down", inventory, env=env)
                racfg("lab", "up", inventory, env=env)
                racfg("deploy", inventory, "--yes", env=env)
                seconds, doc = measure(inventory, env)
                checks = len(doc["results"])
                rows.append((name, seconds, checks, doc["summary"]))
                racfg("lab", "down", inventory, env=env)
        finally:
            for inventory in (lab, str(ra)):
                subprocess.run([*RACFG, "lab", "down", inventory], env=env, capture_output=True, check=False)
    for name, seconds, checks, summary in rows:
        print(f"validate {name:<18} {seconds:6.1f} s  {checks:5d} checks  {checks / seconds:7.0f} checks/s  "
              f"(pass {summary['pass']}, fail {summary['fail']}, skip {summary['skip']}, error {summary['error']})")
    if len(rows) == 2:
        print(f"ra-ethernet / lab.yaml time: {rows[1][1] / rows[0][1]:.2f}x  [< 2.5x]; targets < 15 s and < 30 s")


if __name__ == "__main__":
    main()
