"""Every example inventory end to end in the lab, as a user runs it (issue 13).

Per example: `racfg demo` on a fresh lab (lab up + deploy + jumbo check), `racfg demo` again (the
no-change re-run), `racfg validate` and `racfg smoke` (with the lab switch passwords exported, as the
README says), then `racfg lab down` and a check that nothing of the site is left (namespaces, loop
devices, site directory). Prints the time of each step, the deploy recaps' changed/failed counts,
validate's and smoke's totals, the lab's peak memory (drop of MemAvailable from before `lab up`,
sampled every second) and the load average, since the machine is shared.

Targets on this 2-core machine: first demo < 4 min, re-run < 3 min, lab memory < 2 GiB for the
17-host examples; the 40-host leaf-spine examples (issue 37): first demo < 10 min (their re-run and
memory are printed, without a target).
`--demo-runs N` runs `racfg demo` N times on the lab the first one built (default 2: the first and its
no-change re-run) and prints how many of them passed (issue 54: each example passes ten in ten).
Run as root:  .venv/bin/python bench/examples.py [--no-smoke | --smoke-runs N] [--demo-runs N] [lab ...]
Exit status 1 when a run fails, something is left behind or a target is missed.
"""

from __future__ import annotations

import contextlib
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
from racfg_lab import switch_password  # noqa: E402
from racfg_lab.state import load_state  # noqa: E402
from racfg_lab.status import collect  # noqa: E402

EXAMPLES = ["lab", "ra-ethernet", "ra-infiniband", "ra-arista", "ra-leafspine", "ra-leafspine-eos"]
GIB = 1024**3
TARGETS = {"first": 240.0, "rerun": 180.0, "memory": 2 * GIB}
# per example where it differs (None: printed, no target)
EXAMPLE_TARGETS: dict[str, dict[str, float | None]] = {
    name: {"first": 600.0, "rerun": None, "memory": None} for name in ("ra-leafspine", "ra-leafspine-eos")}
SUMMARY = re.compile(r"changed=(\d+) failed=(\d+) unreachable=(\d+)")
TOTALS = re.compile(r"^(\d+ passed, \d+ failed, \d+ skipped, \d+ errors)", re.MULTILINE)


def mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def lab_memory(site: str) -> int:
    """The lab's own memory now: PSS of every process in its hosts' and switches' namespaces
    (what `racfg lab status` reports), in bytes; 0 while no lab of ``site`` is up."""
    state = load_state(site)
    return int(collect(state).memory_mib * 1024 * 1024) if state is not None else 0


class PeakMemory:
    """The largest drop of MemAvailable below its value at start (sampled every second) and the
    largest lab PSS (every 20 s), in a thread until stopped. On a machine shared with other labs
    the MemAvailable drop counts their growth too; the PSS is this lab's alone but leaves out
    kernel memory (page cache, sockets), so both are reported."""

    def __init__(self, site: str) -> None:
        self.site = site
        self.start = mem_available()
        self.peak = 0
        self.peak_pss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        tick = 0
        while not self._stop.wait(1.0):
            self.peak = max(self.peak, self.start - mem_available())
            tick += 1
            if tick % 20 == 0:
                with contextlib.suppress(Exception):  # a lab half up or half down: the next sample counts
                    self.peak_pss = max(self.peak_pss, lab_memory(self.site))

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
    peak_pss: int = 0
    left: list[str] = field(default_factory=list)
    load: str = ""


def racfg(*args: str, env: dict[str, str] | None = None, log: Path) -> Step:
    """One racfg command of this checkout (``python -m racfg`` from the repository root, so a git
    worktree measures its own code, not the package the venv was installed from)."""
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "racfg", *args], capture_output=True, text=True,
                            cwd=REPO, env=env, timeout=1800)
    seconds = time.monotonic() - started
    log.write_text(result.stdout + "\n--- stderr\n" + result.stderr)
    found = SUMMARY.findall(result.stdout)
    totals = TOTALS.findall(result.stdout)
    lines = result.stdout.strip().splitlines()
    summary = (f"changed={found[-1][0]} failed={found[-1][1]}" if found else
               totals[-1] if totals else lines[-1] if lines else "")
    if found and totals:  # a demo: its deploy's recap and its smoke's totals
        summary += f" smoke {totals[-1]}"
    return Step(" ".join(args[:-1]), seconds, result.returncode, summary)


def leftovers(site: str) -> list[str]:
    """What of lab ``site`` is still on the machine after `lab down`: namespaces, loop devices, its directory."""
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    loops = subprocess.run(["losetup", "-a"], capture_output=True, text=True, check=False).stdout
    site_dir = Path(os.environ.get("RACFG_LAB_DIR", "/var/lib/racfg/lab")) / site
    left = [line.split()[0] for line in netns.splitlines() if line.startswith(f"rf-{site}.")]
    left += [line.split(":")[0] for line in loops.splitlines() if f"{site_dir}/" in line]
    if site_dir.exists():
        left.append(str(site_dir))
    return left


def run_example(name: str, logs: Path, smoke_runs: int, demo_runs: int = 2) -> ExampleRun:
    inventory = REPO / "inventory" / f"{name}.yaml"
    cluster = load_cluster(inventory)
    run = ExampleRun(name, len(cluster.hosts), sum(len(h.nics) for h in cluster.hosts))
    env = {**os.environ, "RACFG_PLAIN": "1"}
    for switch in cluster.switches.values():  # demo fills unset password variables in itself
        env.pop(switch.spec.credentials.password_env or "", None)
    try:
        with PeakMemory(cluster.name) as memory:
            for i in range(1, demo_runs + 1):
                run.steps.append(racfg("demo", str(inventory), env=env, log=logs / f"{name}-demo{i}.log"))
            exported = {**env, **{s.spec.credentials.password_env: switch_password(cluster.name, n)
                                  for n, s in cluster.switches.items() if s.spec.credentials.password_env}}
            run.steps.append(racfg("validate", str(inventory), env=exported, log=logs / f"{name}-validate.log"))
            for i in range(1, smoke_runs + 1):  # more than one: do the lab's figures repeat?
                run.steps.append(racfg("smoke", str(inventory), env=exported, log=logs / f"{name}-smoke{i}.log"))
        run.peak_memory, run.peak_pss = memory.peak, memory.peak_pss
        run.load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    finally:
        run.steps.append(racfg("lab", "down", str(inventory), env=env, log=logs / f"{name}-down.log"))
        run.left = leftovers(cluster.name)
    return run


def main(argv: list[str]) -> int:
    smoke_runs = 1
    if "--no-smoke" in argv:
        smoke_runs = 0
    if "--smoke-runs" in argv:
        at = argv.index("--smoke-runs")
        smoke_runs = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    demo_runs = 2
    if "--demo-runs" in argv:
        at = argv.index("--demo-runs")
        demo_runs = max(2, int(argv[at + 1]))
        argv = argv[:at] + argv[at + 2:]
    names = [a for a in argv if a != "--no-smoke"] or EXAMPLES
    logs = REPO / ".racfg" / "bench-examples"
    logs.mkdir(parents=True, exist_ok=True)
    missed = []
    print(f"{'example':14} {'hosts':>5} {'cables':>6} {'demo 1':>8} {'demo 2':>8} {'validate':>9} {'smoke':>6} "
          f"{'down':>6} {'peak mem':>9} {'lab PSS':>8}  {'load avg':>14}  recaps / validate / smoke")
    for name in names:
        run = run_example(name, logs, smoke_runs, demo_runs)
        demos, (validate, *smokes, down) = run.steps[:demo_runs], run.steps[demo_runs:]
        first, second = demos[0], demos[1]
        smoke_time = "/".join(f"{s.seconds:.0f}s" for s in smokes) or "-"
        print(f"{name:14} {run.hosts:5} {run.cables:6} {first.seconds:7.0f}s {second.seconds:7.0f}s "
              f"{validate.seconds:8.0f}s {smoke_time:>6} {down.seconds:5.0f}s "
              f"{run.peak_memory / GIB:7.2f}Gi {run.peak_pss / GIB:6.2f}Gi  {run.load:>14}  "
              f"1st {first.summary}; 2nd {second.summary}; "
              f"validate {validate.summary}" + "".join(f"; smoke {s.summary}" for s in smokes), flush=True)
        if demo_runs > 2:
            passed = sum(1 for d in demos if d.code == 0)
            print(f"{name:14} demo passed {passed} of {demo_runs} runs: "
                  + " | ".join(f"{d.seconds:.0f}s exit {d.code} {d.summary}" for d in demos), flush=True)
        for step in run.steps:
            if step.code:
                missed.append(f"{name}: {step.name} exited {step.code} (logs in {logs})")
        for i, rerun in enumerate(demos[1:], start=2):
            if "changed=0 " not in rerun.summary + " ":
                missed.append(f"{name}: demo {i} (a re-run) changed something (logs in {logs})")
        if run.left:
            missed.append(f"{name}: left behind after lab down: {', '.join(run.left)}")
        targets = {**TARGETS, **EXAMPLE_TARGETS.get(name, {})}
        for label, value, target in (("first demo", first.seconds, targets["first"]),
                                     ("re-run", second.seconds, targets["rerun"]),
                                     ("lab memory", run.peak_memory, targets["memory"])):
            if target is not None and value > target:
                missed.append(f"{name}: {label} {value:.0f} over its target {target:.0f}")
    for line in missed:
        print("MISSED", line)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
