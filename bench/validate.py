#!/usr/bin/env python3
"""`racfg validate` speed on the virtual lab (issue targets in brackets):

- validate of inventory/lab.yaml (4 hosts, 1 switch)                         [< 15 s]
- validate of inventory/ra-ethernet.yaml in the lab (17 hosts, 1 switch,
  a 9x8 dgx->storage jumbo matrix plus 8x7 storage pairs)                      [< 30 s, < 2.5x lab.yaml]

Both labs are deployed first (the checks then run against a converged site; the lab copies of
bench/benchlib.py). Each validate runs three times; the median is printed with checks per second.
Needs root; builds and removes its labs.
"""

from __future__ import annotations

import json
import statistics

from benchlib import deployed_labs, racfg


def main() -> None:
    rows = []
    for name, inventory, env in deployed_labs():
        times, doc = [], {}
        for _ in range(3):
            seconds, out = racfg("validate", inventory, "--format", "json", env=env, ok=(0, 1, 3))
            times.append(seconds)
            doc = json.loads(out)
        rows.append((name, statistics.median(times), len(doc["results"]), doc["summary"]))
    for name, seconds, checks, summary in rows:
        print(f"validate {name:<18} {seconds:6.1f} s  {checks:5d} checks  {checks / seconds:7.0f} checks/s  "
              f"(pass {summary['pass']}, fail {summary['fail']}, skip {summary['skip']}, error {summary['error']})")
    if len(rows) == 2:
        print(f"ra-ethernet / lab.yaml time: {rows[1][1] / rows[0][1]:.2f}x  [< 2.5x]; targets < 15 s and < 30 s")


if __name__ == "__main__":
    main()
