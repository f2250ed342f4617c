"""Benchmark the virtual lab: image build, `lab up` to all hosts reachable by SSH, memory, `lab down`.

Targets (issue 3): lab up inventory/lab.yaml with a cached image < 30 s; inventory/ra-ethernet.yaml
(17 hosts + 1 switch) < 90 s and < 1.5 GiB of memory; lab down < 15 s; image build < 3 min.
Issue 37: lab up of inventory/ra-leafspine.yaml (40 hosts, 6 routed switches, 40 ISLs, FRR on each
switch) < 20 s.
Run as root:  .venv/bin/python bench/lab_up.py [--build-image]
--build-image builds a fresh image in a temporary lab root to time it (about a minute, CPU-heavy).
Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from racfg.inventory import load_cluster  # noqa: E402
from racfg_lab import api, image, lifecycle, status  # noqa: E402
from racfg_lab.state import load_state  # noqa: E402

GIB = 1024**3


def mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def ssh_all(site: str) -> None:
    """Real SSH logins (key + known_hosts) to every host, in parallel: what 'reachable by SSH' means."""
    state = load_state(site)
    assert state is not None
    key, known = api.lab_ssh_key(site), api.lab_known_hosts(site)

    def login(mgmt: str) -> int:
        return subprocess.run(["ssh", "-i", str(key), "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={known}",
                               "-o", "ConnectTimeout=10", f"root@{mgmt}", "true"], capture_output=True).returncode

    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(login, [h.mgmt for h in state.hosts.values()]))
    if any(codes):
        raise SystemExit(f"SSH failed on {sum(1 for c in codes if c)} hosts of {site}")


def ra_ethernet_inventory(tmp: Path) -> Path:
    path = REPO / "inventory" / "ra-ethernet.yaml"
    if path.exists():
        return path
    # Not written yet: an equivalent 9 DGX + 8 storage nodes on one SN2700.
    text = """site: {name: ra-ethernet}
fabric: {type: ethernet, speed: 100G, data_subnets: [198.19.1.0/24], mgmt_subnet: 198.18.1.0/24}
switches:
  - {name: sn2700, platform: onyx, model: SN2700, mgmt: 198.18.1.2, credentials: {username: admin, lab: true}}
defaults:
  dgx: {nics: [{name: enp5s0, address: 198.19.1.11/24, switch: sn2700, port: 1/1}]}
  storage:
    drives: [{path: "/dev/nvme[0:5]n1"}]
    nics: [{name: enp24s0f0, address: 198.19.1.31/24, switch: sn2700, port: 1/17}]
hosts:
  - {name: "dgx[01:09]", role: dgx, mgmt: 198.18.1.11}
  - {name: "weka[01:08]", role: storage, mgmt: 198.18.1.31}
"""
    out = tmp / "ra-ethernet.yaml"
    out.write_text(text)
    return out


def bench_site(label: str, inventory: Path, up_target: float, mem_target: float | None) -> list[str]:
    site = load_cluster(inventory).name
    if api.is_lab_up(site):
        return [f"{label}: a lab of site {site} is already up; run `racfg lab down {inventory}` first"]
    misses = []
    before = mem_available()
    started = time.monotonic()
    try:
        result = lifecycle.up(inventory, progress=lambda _t: None)
        ssh_all(site)
        up_s = time.monotonic() - started
        time.sleep(2)  # let boots settle before measuring memory
        state = load_state(site)
        assert state is not None
        pss = status.collect(state).memory_mib / 1024
        delta = (before - mem_available()) / GIB
        n_hosts = len(state.hosts)
        print(f"{label}: lab up to all {n_hosts} hosts SSH-reachable: {up_s:.1f} s (target < {up_target:.0f} s)")
        print(f"{label}:   steps: " + ", ".join(f"{k} {v:.1f}s" for k, v in result.timings.items()))
        print(f"{label}:   memory: {pss:.2f} GiB PSS of lab processes, {delta:.2f} GiB less MemAvailable"
              + (f" (target < {mem_target} GiB)" if mem_target else ""))
        if up_s >= up_target:
            misses.append(f"{label} up {up_s:.1f} s >= {up_target} s")
        if mem_target and max(pss, delta) >= mem_target:
            misses.append(f"{label} memory {max(pss, delta):.2f} GiB >= {mem_target} GiB")
    finally:
        started = time.monotonic()
        lifecycle.down(inventory)
        down_s = time.monotonic() - started
        print(f"{label}: lab down: {down_s:.1f} s (target < 15 s)")
        if down_s >= 15:
            misses.append(f"{label} down {down_s:.1f} s >= 15 s")
    return misses



def bench_image_build() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="racfg-bench-image-") as tmp:
        os.environ["RACFG_LAB_DIR"] = tmp
        try:
            _root, seconds = image.ensure_image()
        finally:
            del os.environ["RACFG_LAB_DIR"]
    assert seconds is not None
    print(f"image build (debootstrap, fresh): {seconds:.0f} s (target < 180 s)")
    return [f"image build {seconds:.0f} s >= 180 s"] if seconds >= 180 else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-image", action="store_true", help="also time a fresh image build")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench/lab_up.py: skipped, the lab needs root")
        return 0
    misses: list[str] = []
    if args.build_image:
        misses += bench_image_build()
    if not image.is_built():
        started = time.monotonic()
        image.ensure_image()
        print(f"image build (first on this machine): {time.monotonic() - started:.0f} s (target < 180 s)")
    else:
        print("image: cached")
    with tempfile.TemporaryDirectory() as tmp:
        misses += bench_site("lab.yaml", REPO / "inventory" / "lab.yaml", 30, None)
        misses += bench_site("ra-ethernet", ra_ethernet_inventory(Path(tmp)), 90, 1.5)
        misses += bench_site("ra-leafspine", REPO / "inventory" / "ra-leafspine.yaml", 20, None)
    print("targets: all met" if not misses else "targets missed: " + "; ".join(misses))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
