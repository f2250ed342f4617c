"""Benchmark: read interface, PFC, version and LLDP facts from N emulated switches of P ports
each, concurrently, through netmiko over real SSH. Target: 8 switches x 128 ports < 10 s.

    .venv/bin/python bench/switch_facts.py [--switches 8] [--ports 128] [--platform mix|onyx|eos]
    .venv/bin/python bench/switch_facts.py --lab [INVENTORY]     # as root

Default: starts its own switch CLIs on 127.0.0.1 (free ports, temporary state) and stops them after.
--lab: reads the switches of a real lab (each in its network namespace, on its management address,
with its lab-generated password). Without INVENTORY it builds a generated one (site swbench,
198.18.42.0/24: N switches of P ports, half EOS 7368X, half Onyx, and one host cabled to each),
brings it up and tears it down after; a lab of INVENTORY that is already up is used and left up.
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from racfg.ssh.known_hosts import KnownHosts, host_label  # noqa: E402
from racfg.switches import SwitchTarget, read_facts  # noqa: E402
from racfg_lab.switches import ensure_host_key  # noqa: E402

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
    cfg = {"name": name, "platform": platform, "model": "vEOS" if platform == "eos" else f"bench-{platform}",
           "ports_count": ports, "listen": "127.0.0.1", "ssh_port": port, "username": "admin",
           "password_file": str(pw), "state_dir": str(tmp / name), "ports": cabled}
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(cfg))
    known = tmp / f"{name}.known_hosts"  # its host key, made before it starts, as the lab makes a switch's
    known.write_text(f"{host_label('127.0.0.1', port)} {ensure_host_key(tmp / name)}\n")
    # its stdout is the switch's log (a line per login): not the benchmark's output
    proc = subprocess.Popen([sys.executable, "-m", "racfg_lab.switchcli", "--config", str(path)],
                            stdout=subprocess.DEVNULL)
    return proc, SwitchTarget(name, platform, "127.0.0.1", port, "admin", PASSWORD,
                              known_hosts=KnownHosts(provider=known))


def wait(target: SwitchTarget) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex((target.host, target.port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"switch {target.name} did not start")


def lab_inventory(tmp: Path, switches: int, ports: int) -> Path:
    """A lab inventory of ``switches`` switches of ``ports`` ports, one host cabled to port 1 of each."""
    lines = ["site: {name: swbench}",
             "fabric: {type: ethernet, speed: 100G, data_subnets: [198.19.42.0/24], mgmt_subnet: 198.18.42.0/24}",
             "switches:"]
    for i in range(switches):
        if i % 2 == 0 and ports == 128:
            model = "{platform: eos, model: 7368X}"
        else:
            model = f"{{platform: onyx, model: bench-onyx-{ports}, ports: {ports}}}"
        lines.append(f"  - {{name: bsw{i:02d}, mgmt: 198.18.42.{10 + i}, credentials: {{lab: true}}, "
                     + model[1:-1] + "}")
    lines += ["hosts:", "  - name: bhost01", "    role: dgx", "    mgmt: 198.18.42.100", "    nics:"]
    for i in range(switches):
        port = "Ethernet1/1" if i % 2 == 0 and ports == 128 else "1/1"
        lines.append(f"      - {{name: data{i}, address: 198.19.42.{10 + i}/24, switch: bsw{i:02d}, port: {port}}}")
    path = tmp / "swbench.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def lab_targets(inventory: Path) -> tuple[list[SwitchTarget], dict[str, int]]:
    from racfg.inventory import load_cluster
    from racfg_lab import api

    cluster = load_cluster(inventory)
    known = KnownHosts(provider=api.lab_known_hosts(cluster.name))
    targets = [SwitchTarget(name, sw.platform, sw.spec.mgmt, sw.spec.ssh_port, sw.spec.credentials.username,
                            api.switch_password(cluster.name, name), known_hosts=known)
               for name, sw in cluster.switches.items()]
    return targets, {name: sw.model.ports for name, sw in cluster.switches.items()}


def run_lab(args: argparse.Namespace) -> int:
    from racfg.inventory import load_cluster
    from racfg_lab import api, lifecycle

    with tempfile.TemporaryDirectory(prefix="racfg-bench-") as tmp_text:
        inventory = Path(args.lab) if args.lab != "generated" else lab_inventory(Path(tmp_text), args.switches,
                                                                                 args.ports)
        site = load_cluster(inventory).name
        was_up = api.is_lab_up(site)
        t0 = time.monotonic()
        lifecycle.up(inventory)
        started = time.monotonic() - t0
        try:
            targets, expect = lab_targets(inventory)
            t1 = time.monotonic()
            with ThreadPoolExecutor(max_workers=len(targets)) as pool:
                facts = list(pool.map(read_facts, targets))
            elapsed = time.monotonic() - t1
        finally:
            if not was_up:
                lifecycle.down(inventory)
    for f in facts:
        assert len(f.interfaces) == expect[f.name], (f.name, len(f.interfaces), expect[f.name])
    return report(facts, elapsed, args.target_seconds,
                  f"lab {site} {'already up' if was_up else 'up'} in {started:.2f} s", "lab switches")


def report(facts: list, elapsed: float, target: float, started: str, what: str = "switches") -> int:
    ports = sum(len(f.interfaces) for f in facts)
    neighbors = sum(len(f.lldp) for f in facts)
    verdict = "PASS" if elapsed < target else "FAIL"
    print(started)
    print(f"{verdict}: facts of {len(facts)} {what} ({ports} ports, {neighbors} LLDP neighbors) "
          f"read concurrently in {elapsed:.2f} s (target < {target:g} s)")
    return 0 if verdict == "PASS" else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--switches", type=int, default=8)
    parser.add_argument("--ports", type=int, default=128)
    parser.add_argument("--platform", choices=["mix", "onyx", "eos"], default="mix")
    parser.add_argument("--target-seconds", type=float, default=10.0)
    parser.add_argument("--lab", nargs="?", const="generated", metavar="INVENTORY",
                        help="read real lab switches (root): of INVENTORY, or of a generated N x P lab")
    args = parser.parse_args()
    if args.lab:
        return run_lab(args)
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
    return report(facts, elapsed, args.target_seconds, f"switches started in {started:.2f} s")

if __name__ == "__main__":
    sys.exit(main())
