"""Benchmark: read interface, PFC, version and LLDP facts from N emulated switches of P ports
each, concurrently, through netmiko over real SSH. Target: 8 switches x 128 ports < 10 s.

    .venv/bin/python bench/switch_facts.py [--switches 8] [--ports 128] [--platform mix|onyx|eos]

Starts its own switch CLIs on 127.0.0.1 (free ports, temporary state) and stops them after.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from racfg.switches import SwitchTarget, read_facts

PASSWORD = "bench-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(tmp: Path, index: int, platform: str, ports: int) -> tuple[subprocess.Popen, SwitchTarget]:
    port = free_port()
    name = f"bench{index:02d}"
    pw = tmp / "password"
    pw.write_text(PASSWORD)
    pw.chmod(0o600)
    cabled = {(f"Ethernet{i}" if platform == "eos" else f"1/{i}"): {
        "ifname": None, "speed_gbps": 100.0, "peer_host": f"host{i:03d}", "peer_nic": "data0"}
        for i in range(1, ports + 1, 2)}
    cfg = {"name": name, "platform": platform, "model": "vEOS" if platform == "eos" else "bench-onyx",
           "ports_count": ports, "listen": "127.0.0.1", "ssh_port": port, "username": "admin",
           "password_file": str(pw), "state_dir": str(tmp / name), "ports": cabled}
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(cfg))
    proc = subprocess.Popen([sys.executable, "-m", "racfg.lab.switchcli", "--config", str(path)])
    return proc, SwitchTarget(name, platform, "127.0.0.1", port, "admin", PASSWORD)


def wait(target: SwitchTarget) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex((target.host, target.port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"switch {target.name} did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--switches", type=int, default=8)
    parser.add_argument("--ports", type=int, default=128)
    parser.add_argument("--platform", choices=["mix", "onyx", "eos"], default="mix")
    parser.add_argument("--target-seconds", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="racfg-bench-") as tmp_text:
        tmp = Path(tmp_text)
        procs, targets = [], []
        t0 = time.monotonic()
        for i in range(args.switches):
            platform = args.platform if args.platform != "mix" else ("eos", "onyx")[i % 2]
            sub = tmp / f"s{i}"
            sub.mkdir()
            proc, target = start(sub, i, platform, args.ports)
            procs.append(proc)
            targets.append(target)
        try:
            for target in targets:
                wait(target)
            started = time.monotonic() - t0
            t1 = time.monotonic()
            with ThreadPoolExecutor(max_workers=len(targets)) as pool:
                facts = list(pool.map(read_facts, targets))
            elapsed = time.monotonic() - t1
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=10)
    for f in facts:
        assert len(f.interfaces) == args.ports, (f.name, len(f.interfaces))
    ports = sum(len(f.interfaces) for f in facts)
    neighbors = sum(len(f.lldp) for f in facts)
    verdict = "PASS" if elapsed < args.target_seconds else "FAIL"
    print(f"switches started in {started:.2f} s")
    print(f"{verdict}: facts of {len(facts)} switches ({ports} ports, {neighbors} LLDP neighbors) "
          f"read concurrently in {elapsed:.2f} s (target < {args.target_seconds:g} s)")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
