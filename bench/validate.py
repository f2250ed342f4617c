#!/usr/bin/env python3
"""`racfg validate` speed on the virtual lab (issue targets in brackets):

- validate of inventory/lab.yaml (4 hosts, 1 switch)                         [< 15 s]
- validate of inventory/ra-ethernet.yaml in the lab (17 hosts, 1 switch,
  a 9x8 dgx->storage jumbo matrix plus 8x7 storage pairs)                      [< 30 s, < 2.5x lab.yaml]

- the diagnosis step's share of validate's time (the run's meta.diagnosis_seconds)  [< 5%]
- the diagnosis alone on a 64-host pod's worth of results, a port fault on every eighth host
  (no lab: pure CPU), against the pod's validate target of 20 s                 [< 5%]

Both labs are deployed first (the checks then run against a converged site; the lab copies of
bench/benchlib.py). Each validate runs three times; the median is printed with checks per second.
Needs root; builds and removes its labs (``--pod-only``: the lab-free figure alone).
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from benchlib import deployed_labs, racfg

from racfg.results import Result, Status
from racfg.validate.analysis import CableEnd
from racfg.validate.diagnosis import diagnose

POD_VALIDATE_TARGET_S = 20.0


def pod_diagnosis() -> None:
    """diagnose() on 64 hosts x 2 NICs of results (60 checks a host), a shut port on every eighth host."""
    cables, results = [], []
    for h in range(64):
        host = f"dgx{h:02}"
        for n in range(2):
            port = f"1/{h * 2 + n + 1}"
            cables.append(CableEnd(f"sw{h // 16}", port, host, f"data{n}"))
            shut = h % 8 == 0 and n == 0
            for check in (f"sw{h // 16}/switches/port_admin_up[{port}]", f"sw{h // 16}/switches/port_oper_up[{port}]",
                          f"{host}/network/carrier[data{n}]", f"{host}/fabric/jumbo_frames[data{n}]"):
                results.append(Result(check.split("/")[0], check, "x", Status.FAIL if shut else Status.PASS,
                                      expected="up", actual="down"))
        results += [Result(host, f"{host}/system/c{i}", "system", Status.PASS) for i in range(52)]
    times = []
    for _ in range(5):
        start = time.perf_counter()
        problems, _ = diagnose(results, cables)
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    print(f"diagnosis of a 64-host pod     {seconds * 1000:6.1f} ms  {len(results):5d} results  "
          f"{len(problems)} problems  {seconds / POD_VALIDATE_TARGET_S:.2%} of the pod's "
          f"{POD_VALIDATE_TARGET_S:g} s validate  [< 5%]")


def main() -> None:
    pod_diagnosis()
    if "--pod-only" in sys.argv:
        return
    rows = []
    for name, inventory, env in deployed_labs():
        times, doc, shares = [], {}, []
        for _ in range(3):
            seconds, out = racfg("validate", inventory, "--format", "json", env=env, ok=(0, 1, 3))
            times.append(seconds)
            doc = json.loads(out)
            shares.append(float(doc["meta"].get("diagnosis_seconds", 0.0)) / max(float(doc["elapsed"]), 1e-9))
        rows.append((name, statistics.median(times), len(doc["results"]), doc["summary"], statistics.median(shares)))
    for name, seconds, checks, summary, share in rows:
        print(f"validate {name:<18} {seconds:6.1f} s  {checks:5d} checks  {checks / seconds:7.0f} checks/s  "
              f"(pass {summary['pass']}, fail {summary['fail']}, skip {summary['skip']}, error {summary['error']}, "
              f"info {summary.get('info', 0)})  diagnosis {share:.2%} of validate  [< 5%]")
    if len(rows) == 2:
        print(f"ra-ethernet / lab.yaml time: {rows[1][1] / rows[0][1]:.2f}x  [< 2.5x]; targets < 15 s and < 30 s")


if __name__ == "__main__":
    main()
