#!/usr/bin/env python3
"""racfg smoke on the virtual lab (issue targets in brackets):

- run time of a smoke run of a lab.yaml-size lab (2 DGX + 2 storage, one switch), lab defaults
  (links shaped at 1 Gbit/s per 100G, lab durations)                                [< 2 min]
- measured saturation of the shaped links: the lowest link's measured / shaped rate  [>= 0.95]
- two back-to-back runs: the change of every metric between them                    [within 5%]

The lab is a copy of inventory/lab.yaml under its own site and subnets (smokebench,
198.18.57.0/24, 198.19.57.0/24), so it never meets the `lab` site. Its data NICs get their
addresses directly (no deploy needed to measure). Needs root; builds and removes its lab.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # labsupport: the lab handle the test suites use
RACFG = [sys.executable, "-m", "racfg"]


def bench_inventory(directory: Path) -> Path:
    data = yaml.safe_load((REPO / "inventory" / "lab.yaml").read_text())
    text = yaml.safe_dump(data, sort_keys=False)
    text = text.replace("198.18.0.", "198.18.57.").replace("198.19.0.", "198.19.57.")
    data = yaml.safe_load(text)
    data["site"]["name"] = "smokebench"
    data["site"]["time_sources"] = []
    path = directory / "smokebench.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def smoke(inventory: Path, env: dict[str, str]) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run([*RACFG, "smoke", str(inventory), "--format", "json"], capture_output=True, text=True,
                          env=env, cwd=REPO, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"racfg smoke failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return seconds, json.loads(proc.stdout)


def metrics(report: dict) -> dict[str, float]:
    return {m["name"]: float(m["value"]) for r in report["results"] for m in r.get("data", {}).get("metrics", [])}


def main() -> None:
    from labsupport import running_lab
    from smoke.labnet import configure_data_plane

    with tempfile.TemporaryDirectory() as tmp:
        inventory = bench_inventory(Path(tmp))
        env = {**os.environ, "RACFG_STATE_DIR": str(Path(tmp) / "state"), "RACFG_PLAIN": "1"}
        with running_lab(inventory) as lab:
            configure_data_plane(lab)
            first_s, first = smoke(inventory, env)
            second_s, second = smoke(inventory, env)
    links = [r for r in first["results"] if r["check"].startswith("link/")]
    lowest = min(links, key=lambda r: r["data"]["share_of_line"])
    a, b = metrics(first), metrics(second)
    changes = {name: abs(b[name] - a[name]) / abs(a[name]) for name in a if name in b and a[name]}
    worst = max(changes, key=lambda n: changes[n])
    over = sorted(n for n, c in changes.items() if c > 0.05)
    print(f"smoke run of a lab.yaml-size lab (2 dgx + 2 storage, links shaped at "
          f"{lowest['data']['line_bps'] / 1e6:.0f} Mbit/s): {first_s:.1f} s, second run {second_s:.1f} s "
          f"[target < 120 s]; verdict exit codes {first['exit_code']}, {second['exit_code']}")
    print(f"measured saturation: lowest link {lowest['target']} {lowest['check'].split('/')[1]} at "
          f"{lowest['data']['share_of_line']:.3f} of its shaped rate "
          f"({lowest['data']['share_of_ceiling']:.3f} of the TCP ceiling) [target >= 0.95]")
    for r in links:
        print(f"  {r['check']:<28} {r['data']['measured_bps'] / 1e6:7.1f} Mbit/s  {r['data']['share_of_line']:.3f}")
    print(f"back-to-back agreement over {len(changes)} metrics: largest change {changes[worst]:.1%} ({worst}) "
          f"[target <= 5%]; over 5%: {', '.join(over) if over else 'none'}")
    tcp = {n: c for n, c in changes.items() if n.startswith(("link.", "scaling."))}
    if tcp:
        name = max(tcp, key=lambda n: tcp[n])
        print(f"  network metrics only ({len(tcp)}): largest change {tcp[name]:.1%} ({name})")


if __name__ == "__main__":
    main()
