"""Every example inventory end to end in the lab, as a user runs it (issue 13).

Per example: `racfg demo` on a fresh lab (lab up + deploy + jumbo check), `racfg demo` again (the
no-change re-run), `racfg validate` (with the lab switch passwords exported, as the README says),
then `racfg lab down`. Prints the time of each step, the deploy recaps' changed/failed counts and
the lab's peak memory (drop of MemAvailable from before `lab up`, sampled every second).

Targets on this 2-core machine: first demo < 4 min, re-run < 3 min, lab memory < 2 GiB for the
largest. Run as root:  .venv/bin/python bench/examples.py [lab ra-ethernet ra-infiniband ra-arista]
Exit status 1 when a run fails or a target is missed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from racfg.inventory import load_cluster  # noqa: E402
from racfg.lab import switch_password  # noqa: E402

EXAMPLES = ["lab", "ra-ethernet", "ra-infiniband", "ra-arista"]
GIB = 1024**3
TARGETS = {"first": 240.0, "rerun": 180.0, "memory": 2 * GIB}
SUMMARY = re.compile(r"changed=(\d+) failed=(\d+) unreachable=(\d+)")


def mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


class PeakMemory:
    """The largest drop of MemAvailable below its value at start, sampled in a thread until stopped."""

    def __init__(self) -> None:
        self.start = mem_available()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self.peak = max(self.peak, self.start - mem_available())

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Step:
    name: str
    seconds: float
    code: int
    summary: str = ""


@dataclass
class ExampleRun:
    name: str
    hosts: int
    cables: int
    steps: list[Step] = field(default_factory=list)
    peak_memory: int = 0


def racfg(*args: str, env: dict[str, str] | None = None, log: Path) -> Step:
    started = time.monotonic()
    result = subprocess.run([str(REPO / ".venv" / "bin" / "racfg"), *args], capture_output=True, text=True,
                            cwd=REPO, env=env, timeout=1800)
    seconds = time.monotonic() - started
    log.write_text(result.stdout + "\n--- stderr\n" + result.stderr)
    found = SUMMARY.findall(result.stdout)
    lines = result.stdout.strip().splitlines()
    summary = f"changed={found[-1][0]} failed={found[-1][1]}" if found else (lines[-1] if lines else "")
    return Step(args[0], seconds, result.returncode, summary)


def run_example(name: str, logs: Path) -> ExampleRun:
    inventory = REPO / "inventory" / f"{name}.yaml"
    cluster = load_cluster(inventory)
    run = ExampleRun(name, len(cluster.hosts), sum(len(h.nics) for h in cluster.hosts))
    env = {**os.environ, "RACFG_PLAIN": "1"}
    for switch in cluster.switches.values():  # demo fills unset password variables in itself
        env.pop(switch.spec.credentials.password_env or "", None)
    try:
        with PeakMemory() as memory:
            run.steps.append(racfg("demo", str(inventory), env=env, log=logs / f"{name}-demo1.log"))
            run.steps.append(racfg("demo", str(inventory), env=env, log=logs / f"{name}-demo2.log"))
            exported = {**env, **{s.spec.credentials.password_env: switch_password(cluster.name, n)
                                  for n, s in cluster.switches.items() if s.spec.credentials.password_env}}
            run.steps.append(racfg("validate", str(inventory), env=exported, log=logs / f"{name}-validate.log"))
        run.peak_memory = memory.peak
    finally:
        run.steps.append(racfg("lab", "down", str(inventory), env=env, log=logs / f"{name}-down.log"))
    return run


def main(argv: list[str]) -> int:
    names = argv or EXAMPLES
    logs = REPO / ".racfg" / "bench-examples"
    logs.mkdir(parents=True, exist_ok=True)
    missed = []
    print(f"{'example':14} {'hosts':>5} {'cables':>6} {'demo 1':>8} {'demo 2':>8} {'validate':>9} {'down':>6} "
          f"{'peak mem':>9}  recaps / validate")
    for name in names:
        run = run_example(name, logs)
        first, second, validate, down = run.steps
        print(f"{name:14} {run.hosts:5} {run.cables:6} {first.seconds:7.0f}s {second.seconds:7.0f}s "
              f"{validate.seconds:8.0f}s {down.seconds:5.0f}s {run.peak_memory / GIB:7.2f}Gi  "
              f"1st {first.summary}; 2nd {second.summary}; {validate.summary}", flush=True)
        if any(s.code for s in run.steps) or "changed=0 " not in second.summary + " ":
            missed.append(f"{name}: a step failed or the re-run changed something (logs in {logs})")
        for label, value, target in (("first demo", first.seconds, TARGETS["first"]),
                                     ("re-run", second.seconds, TARGETS["rerun"]),
                                     ("lab memory", run.peak_memory, TARGETS["memory"])):
            if value > target:
                missed.append(f"{name}: {label} {value:.0f} over its target {target:.0f}")
    for line in missed:
        print("MISSED", line)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
