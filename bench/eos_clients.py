"""How fast the EOS clients run against the lab's emulated EOS switch (issue 15 targets).

Prints, for the switch of ``inventory/ra-arista.yaml`` (an Arista 7368X with its 52 cabled ports)
run as the lab runs it (the same switch CLI process, SSH + eAPI) but on 127.0.0.1 with no data
plane, deployed by racfg first:

- ``anta nrfu`` with the catalog ``racfg render`` writes for it (target < 10 s), with its verdicts;
- ``eos_facts gather_subset=all`` through ansible-playbook (target < 5 s per switch).

Without lab hosts nothing answers LLDP, so VerifyLLDPNeighbors fails here (said in the output);
the lab test (tests/switches/test_eos_clients_lab.py) shows it passing on real wiring.

    .venv/bin/python bench/eos_clients.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from racfg.inventory import load_cluster  # noqa: E402
from racfg.render import render_files  # noqa: E402
from racfg.render.ansible_inventory import switch_ports  # noqa: E402
from racfg.ssh.known_hosts import KnownHosts, host_label  # noqa: E402
from racfg.switches import SwitchTarget, apply_switch  # noqa: E402
from racfg.switches.intent import intended_for  # noqa: E402
from racfg_lab.switches import ensure_host_key  # noqa: E402
from tests.switches.eos_clients import EosSwitch, run_ansible, run_anta  # noqa: E402

INVENTORY = REPO / "inventory" / "ra-arista.yaml"
PASSWORD = "bench-eos-1"
TARGETS = {"anta nrfu": 10.0, "eos_facts all": 5.0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"bench: the emulated switch did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each client (default 3)")
    args = parser.parse_args()
    cluster = load_cluster(INVENTORY)
    switch = next(s for s in cluster.switches.values() if s.platform == "eos")
    cabled = switch_ports(cluster, switch)
    with tempfile.TemporaryDirectory(prefix="racfg-bench-eos-") as tmp_dir:
        tmp = Path(tmp_dir)
        (tmp / "password").write_text(PASSWORD)
        (tmp / "password").chmod(0o600)
        ssh_port, eapi_port = free_port(), free_port()
        (tmp / "cli.json").write_text(json.dumps({
            "name": switch.name, "platform": "eos", "model": switch.model.name, "ports_count": switch.model.ports,
            "ports_per_slot": switch.model.ports_per_slot, "listen": "127.0.0.1", "ssh_port": ssh_port,
            "eapi_port": eapi_port, "username": "admin", "password_file": str(tmp / "password"),
            "state_dir": str(tmp / "state"),
            "ports": {p["port"]: {"ifname": None, "speed_gbps": p["speed_gbps"], "peer_host": p["host"],
                                  "peer_nic": p["nic"]} for p in cabled},
        }))
        catalog = tmp / "anta-catalog.yml"
        catalog.write_text(render_files(cluster)["anta-catalog.yml"])
        known = tmp / "known_hosts"  # the switch's host key, made before it starts, as the lab makes one
        known.write_text(f"{host_label('127.0.0.1', ssh_port)} {ensure_host_key(tmp / 'state')}\n")
        proc = subprocess.Popen([sys.executable, "-m", "racfg_lab.switchcli", "--config", str(tmp / "cli.json")])
        try:
            wait_port(ssh_port)
            wait_port(eapi_port)
            target = SwitchTarget(switch.name, "eos", "127.0.0.1", ssh_port, "admin", PASSWORD, timeout=10,
                                  known_hosts=KnownHosts(provider=known))
            apply_switch(target, intended_for(cluster, switch.name))
            sw = EosSwitch(switch.name, "127.0.0.1", PASSWORD, ssh_port=ssh_port, eapi_port=eapi_port)
            print(f"switch {switch.name} ({switch.model.name}): {len(cabled)} cabled ports, deployed by racfg")
            figures: dict[str, list[float]] = {"anta nrfu": [], "eos_facts all": []}
            verdicts: dict[str, str] = {}
            for _ in range(args.runs):
                start = time.monotonic()
                verdicts = run_anta(tmp, sw, catalog)
                figures["anta nrfu"].append(time.monotonic() - start)
                start = time.monotonic()
                run_ansible(tmp, sw, [{"arista.eos.eos_facts": {"gather_subset": "all"}}])
                figures["eos_facts all"].append(time.monotonic() - start)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load average during the runs: {' '.join(load)} (CPU cores shared with other users of the machine)")
    print(f"{'client':<16} {'median s':>9} {'max s':>7} {'target s':>9}  verdict")
    for name, values in figures.items():
        verdict = "ok" if max(values) < TARGETS[name] else "OVER TARGET"
        print(f"{name:<16} {statistics.median(values):>9.2f} {max(values):>7.2f} {TARGETS[name]:>9.1f}  {verdict}")
    print("anta verdicts: " + ", ".join(f"{t}={r}" for t, r in sorted(verdicts.items())))
    if verdicts.get("VerifyLLDPNeighbors") == "failure":
        print("  (VerifyLLDPNeighbors fails here by design: no lab hosts, so no LLDP neighbour is heard)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
