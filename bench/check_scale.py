#!/usr/bin/env python3
"""How `racfg check` scales with site size: 10, 100, 1000 and 4000 hosts, and a 2,000-host leaf-spine site.

Each site is written out host by host (no ranges), the worst case for parsing, with one data
NIC per host spread over 128-port EOS switches. Prints, per size, the in-process time of what
`racfg check` does (load + rules + budget) and the wall time of the command itself.
Target: under 2 s at 1000 hosts, growing near linearly.
"""

from __future__ import annotations

import ipaddress
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from racfg.inventory import load_cluster
from racfg.policy import bandwidth_budget, evaluate
from racfg.summary import bill_of_materials, cabling

PORTS = 128


def site(hosts: int) -> dict:
    switches = (hosts + PORTS - 1) // PORTS
    mgmt = ipaddress.IPv4Address("198.18.0.10")
    data = ipaddress.IPv4Address("198.19.0.10")
    entries = []
    for i in range(hosts):
        role = "storage" if i % 4 == 3 else "dgx"
        entry = {
            "name": f"node{i:05d}",
            "role": role,
            "mgmt": str(mgmt + i),
            "nics": [{"name": "data0", "address": f"{data + i}/15", "switch": f"sw{i // PORTS:03d}",
                      "port": f"Ethernet{i % PORTS + 1}"}],
        }
        if role == "storage":
            entry["drives"] = [{"path": f"/dev/nvme{d}n1"} for d in range(6)]
        entries.append(entry)
    return {
        "site": {"name": f"scale{hosts}"},
        "fabric": {"type": "ethernet", "speed": "100G", "data_subnets": ["198.18.0.0/15"]},
        "switches": [
            {"name": f"sw{s:03d}", "platform": "eos", "model": "7260CX3-128", "ports": PORTS,
             "mgmt": str(ipaddress.IPv4Address("198.18.255.0") + s), "credentials": {"password_env": "SW_PASSWORD"}}
            for s in range(switches)
        ],
        "hosts": entries,
        "software": {"ofed": {"flavor": "inbox"}},
    }


LEAF_HOSTS, SPINES, LINKS_PER_SPINE = 32, 16, 2  # 64-port leaves: 32 hosts down, 16 x 2 uplinks up


def site_leafspine(hosts: int) -> dict:
    """A routed leaf-spine site: 64-port leaves with 32 hosts each and 32 uplinks (non-blocking) to 16
    modular spines; every host written out, every leaf its own /24, the ISLs one links entry."""
    leaves = (hosts + LEAF_HOSTS - 1) // LEAF_HOSTS
    mgmt = ipaddress.IPv4Address("198.18.0.10")
    entries = []
    for i in range(hosts):
        role = "storage" if i % 4 == 3 else "dgx"
        leaf, slot = divmod(i, LEAF_HOSTS)
        entry = {"name": f"node{i:05d}", "role": role, "mgmt": str(mgmt + i),
                 "nics": [{"name": "data0", "address": f"198.19.{leaf}.{10 + slot}/24", "switch": f"leaf{leaf:02d}",
                           "port": f"Ethernet{slot + 1}"}]}
        if role == "storage":
            entry["drives"] = [{"path": f"/dev/nvme{d}n1"} for d in range(6)]
        entries.append(entry)
    switch_mgmt = ipaddress.IPv4Address("198.18.200.0")
    credentials = {"password_env": "SW_PASSWORD"}
    switches = [{"name": f"leaf{k:02d}", "role": "leaf", "platform": "eos", "model": "7260CX3-64",
                 "mgmt": str(switch_mgmt + k), "credentials": credentials} for k in range(leaves)]
    switches += [{"name": f"spine{k:02d}", "role": "spine", "platform": "eos", "model": "7368X",
                  "mgmt": str(switch_mgmt + 100 + k), "credentials": credentials} for k in range(SPINES)]
    return {
        "site": {"name": f"leafspine{hosts}"},
        "fabric": {"type": "ethernet", "speed": "100G", "data_subnets": ["198.19.0.0/16"], "design": "leaf-spine",
                   "p2p_pool": "198.18.240.0/20"},
        "switches": switches,
        "links": [{"leaves": f"leaf[00:{leaves - 1:02d}]", "spines": f"spine[00:{SPINES - 1:02d}]",
                   "count": LINKS_PER_SPINE, "leaf_port": f"Ethernet{LEAF_HOSTS + 1}", "spine_port": "Ethernet1/1"}],
        "hosts": entries,
        "software": {"ofed": {"flavor": "inbox"}},
    }


def in_process(path: Path, repeat: int = 3) -> tuple[float, int]:
    times = []
    findings = 0
    for _ in range(repeat):
        start = time.perf_counter()
        cluster = load_cluster(path)
        findings = len(evaluate(cluster))
        bandwidth_budget(cluster)
        bill_of_materials(cluster)
        cabling(cluster)
        times.append(time.perf_counter() - start)
    return statistics.median(times), findings


def command(path: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "racfg", "check", str(path), "--format", "json"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    print(f"{'hosts':>6} {'lines':>7} {'check (in-process) s':>21} {'racfg check (command) s':>24} {'us/host':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for hosts in (10, 100, 1000, 4000):
            path = Path(tmp) / f"site{hosts}.yaml"
            path.write_text(yaml.safe_dump(site(hosts), sort_keys=False))
            lines = path.read_text().count("\n")
            seconds, findings = in_process(path)
            wall = command(path)
            print(f"{hosts:>6} {lines:>7} {seconds:>21.3f} {wall:>24.3f} {seconds / hosts * 1e6:>8.0f}"
                  + (f"  ({findings} findings)" if findings else ""))
        hosts = 2000
        path = Path(tmp) / f"leafspine{hosts}.yaml"
        path.write_text(yaml.safe_dump(site_leafspine(hosts), sort_keys=False))
        lines = path.read_text().count("\n")
        seconds, findings = in_process(path)
        wall = command(path)
        leaves = (hosts + LEAF_HOSTS - 1) // LEAF_HOSTS
        print(f"{hosts:>6} {lines:>7} {seconds:>21.3f} {wall:>24.3f} {seconds / hosts * 1e6:>8.0f}"
              f"  leaf-spine: {leaves} leaves x {SPINES} spines x {LINKS_PER_SPINE} links"
              + (f" ({findings} findings)" if findings else ""))
    print("target: racfg check under 2 s at 1000 hosts, near-linear growth; "
          "a 2,000-host leaf-spine site under 2 s (issue 37)")


if __name__ == "__main__":
    main()
