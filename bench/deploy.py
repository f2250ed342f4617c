#!/usr/bin/env python3
"""Deploy speed on the virtual lab (issue targets in brackets):

- first converge of inventory/lab.yaml on a fresh lab            [< 5 min]
- no-change re-run of inventory/lab.yaml                         [< 60 s]
- no-change re-run of inventory/ra-ethernet.yaml (17 hosts + 1 switch), against the lab re-run
                                                                  [< 3x the lab.yaml re-run]

ra-ethernet is deployed with inbox OFED and without drive models (the lab has no MLNX_OFED
distribution, and its loop-device drives report no model; the nvme_storage role rightly refuses a
drive whose model differs from the declared one). The rest of the file is as shipped.
Each no-change re-run also shows its CPU-seconds per host: the controller's (racfg and all it
starts) and the lab hosts' (their processes), see cpu_account.py; and the same re-run by plain
`ansible-playbook site.yml` on the rendered inventory, the reference racfg's wrapper is held to
[racfg < 1.10x plain] (issue 11). Uses site `lab`: run it when no one else has that lab up.
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
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from cpu_account import ControllerClock, Measured, command, measure, netns_inodes  # noqa: E402
from scale import plain_rerun  # noqa: E402

CLOCK: list[ControllerClock] = []


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


def cpu_per_host(site: str, action: str, env: dict[str, str], inventory: str) -> tuple[Measured, str]:
    """A measured no-change re-run (``racfg`` or ``plain``) and its CPU-seconds per host, as text."""
    if not CLOCK:
        CLOCK.append(ControllerClock())
    from racfg_lab.state import load_state

    state = load_state(site)
    hosts_up = state.hosts if state is not None else {}
    spaces = {i: n for i, n in netns_inodes(f"rf-{site}.").items() if n.split(".", 1)[1] in hosts_up}
    if action == "plain":
        rendered = Path(env["RACFG_STATE_DIR"]) / f"rendered-{site}"
        run("render", inventory, "--out", str(rendered), env=env)
        got = measure(CLOCK[0], spaces, lambda: plain_rerun(Path(inventory), site, rendered))
    else:
        got = measure(CLOCK[0], spaces, command([*RACFG, "deploy", inventory, "--yes", "--format", "json"], env, REPO))
    if got.rc != 0:
        sys.exit(f"{action} re-run failed ({got.rc}):\n{got.stdout[-3000:]}\n{got.stderr[-3000:]}")
    hosts = max(len(spaces), 1)
    return got, (f"controller {got.controller_cpu / hosts:.2f}, hosts {got.lab_cpu / hosts:.2f} CPU-s/host")


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
            got, cpu = cpu_per_host("lab", "racfg", env, lab)
            lab_rerun = got.wall
            figures.append(("lab.yaml no-change re-run", lab_rerun,
                            f"changed={changed(json.loads(got.stdout))}  {cpu}  [< 60 s]"))
            plain, plain_cpu = cpu_per_host("lab", "plain", env, lab)
            figures.append(("lab.yaml plain ansible-playbook re-run", plain.wall,
                            f"{plain.stdout}  {plain_cpu}  racfg/plain: controller CPU "
                            f"{got.controller_cpu / max(plain.controller_cpu, 0.01):.2f}x  [< 1.10x]"))
            run("lab", "down", lab, env=env)
            run("lab", "up", str(ra), env=env)
            seconds, doc = run("deploy", str(ra), "--yes", "--format", "json", env=env)
            figures.append(("ra-ethernet.yaml first converge", seconds, f"changed={changed(doc)}"))
            got, cpu = cpu_per_host("ra-ethernet", "racfg", env, str(ra))
            ra_rerun = got.wall
            figures.append(("ra-ethernet.yaml no-change re-run", ra_rerun,
                            f"changed={changed(json.loads(got.stdout))}  {cpu}  "
                            f"{ra_rerun / lab_rerun:.2f}x the lab.yaml re-run  [< 3x]"))
        finally:
            subprocess.run([*RACFG, "lab", "down", lab], env=env, capture_output=True, check=False)
            subprocess.run([*RACFG, "lab", "down", str(ra)], env=env, capture_output=True, check=False)
    for name, seconds, note in figures:
        print(f"{name:<36} {seconds:8.1f} s  {note}")
    print(f"machine: {os.cpu_count()} CPUs shared by the controller and every lab host")


if __name__ == "__main__":
    main()
