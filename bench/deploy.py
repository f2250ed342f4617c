#!/usr/bin/env python3
"""Deploy speed on the virtual lab (issue targets in brackets):

- first converge of inventory/lab.yaml on a fresh lab            [< 5 min]
- no-change re-run of inventory/lab.yaml                         [< 60 s]
- no-change re-run of inventory/ra-ethernet.yaml (17 hosts + 1 switch), against the lab re-run
                                                                  [< 3x the lab.yaml re-run]

ra-ethernet is deployed with inbox OFED and without drive models (the lab has no MLNX_OFED
distribution, and its loop-device drives report no model; the nvme_storage role rightly refuses a
drive whose model differs from the declared one). The rest of the file is as shipped.
Needs root; builds and removes its labs. Prints the figures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RACFG = [sys.executable, "-m", "racfg"]


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


LAST_BUSY = [0.0]


def run(*args: str, env: dict[str, str]) -> tuple[float, dict]:
    """Run a racfg command; remembers how busy the machine's CPUs were meanwhile (LAST_BUSY)."""
    busy0, total0 = cpu_times()
    start = time.perf_counter()
    result = subprocess.run([*RACFG, *args], capture_output=True, text=True, env=env, cwd=REPO, check=False)
    seconds = time.perf_counter() - start
    busy1, total1 = cpu_times()
    LAST_BUSY[0] = (busy1 - busy0) / max(total1 - total0, 1)
    if result.returncode != 0:
        sys.exit(f"racfg {' '.join(args)} failed ({result.returncode}):\n"
                 f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return seconds, json.loads(result.stdout) if result.stdout.lstrip().startswith("{") else {}


def changed(document: dict) -> int:
    return sum(h["changed"] for h in document.get("hosts", []))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RACFG_STATE_DIR": tmp, "RACFG_PLAIN": "1"}
        lab = str(REPO / "inventory" / "lab.yaml")
        ra = Path(tmp) / "ra-ethernet.yaml"
        ra.write_text((REPO / "inventory" / "ra-ethernet.yaml").read_text().replace(
            "    flavor: mlnx\n    version: 4.5-1.0.1.0\n", "    flavor: inbox\n").replace(
            "        model: Micron 9200\n", ""))
        figures: list[tuple[str, float, str]] = []
        try:
            run("lab", "down", lab, env=env)
            run("lab", "up", lab, env=env)
            seconds, doc = run("deploy", lab, "--yes", "--format", "json", env=env)
            figures.append(("lab.yaml first converge", seconds, f"changed={changed(doc)}  [< 300 s]"))
            lab_rerun, doc = run("deploy", lab, "--yes", "--format", "json", env=env)
            figures.append(("lab.yaml no-change re-run", lab_rerun,
                            f"changed={changed(doc)}  CPUs {LAST_BUSY[0]:.0%} busy  [< 60 s]"))
            run("lab", "down", lab, env=env)
            run("lab", "up", str(ra), env=env)
            seconds, doc = run("deploy", str(ra), "--yes", "--format", "json", env=env)
            figures.append(("ra-ethernet.yaml first converge", seconds, f"changed={changed(doc)}"))
            ra_rerun, doc = run("deploy", str(ra), "--yes", "--format", "json", env=env)
            figures.append(("ra-ethernet.yaml no-change re-run", ra_rerun,
                            f"changed={changed(doc)}  CPUs {LAST_BUSY[0]:.0%} busy  "
                            f"{ra_rerun / lab_rerun:.2f}x the lab.yaml re-run  [< 3x]"))
        finally:
            subprocess.run([*RACFG, "lab", "down", lab], env=env, capture_output=True, check=False)
            subprocess.run([*RACFG, "lab", "down", str(ra)], env=env, capture_output=True, check=False)
    for name, seconds, note in figures:
        print(f"{name:<36} {seconds:8.1f} s  {note}")
    print(f"machine: {os.cpu_count()} CPUs shared by the controller and every lab host")


if __name__ == "__main__":
    main()
