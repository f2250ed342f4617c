"""bench/pod128.yaml, the 128-host leaf-spine pod bench/scale.py measures (issue 38): it is the pod
the issue names (96 GPU servers, 32 storage nodes, 8 leaves, 2 spines, non-blocking), it checks
clean, and its site and subnets are its own, so its lab coexists with every other lab on the machine."""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from pathlib import Path

from racfg.inventory import load_cluster
from racfg.policy import evaluate, leaf_ratios

REPO = Path(__file__).resolve().parents[2]
POD = REPO / "bench" / "pod128.yaml"
ADDRESS = re.compile(r"\b(198\.1[89]\.\d{1,3}\.\d{1,3})(?:/\d+)?\b")


def test_the_pod_is_96_gpu_servers_and_32_storage_nodes_on_8_leaves_and_2_spines() -> None:
    cluster = load_cluster(POD)
    assert Counter(h.role for h in cluster.hosts) == {"dgx": 96, "storage": 32}
    assert (len(cluster.topology.of_role("leaf")), len(cluster.topology.of_role("spine"))) == (8, 2)
    per_leaf = Counter((n.switch, h.role) for h in cluster.hosts for n in h.nics)
    assert per_leaf == {**{(f"leaf{i}", "dgx"): 12 for i in range(1, 9)},
                        **{(f"leaf{i}", "storage"): 4 for i in range(1, 9)}}
    assert len(cluster.topology.isls) == 128


def test_the_pod_checks_clean_and_every_leaf_is_non_blocking() -> None:
    cluster = load_cluster(POD)
    assert [f for f in evaluate(cluster) if f.severity == "error"] == []
    ratios = {leaf: (ratio, down, up) for leaf, ratio, down, up in leaf_ratios(cluster)}
    assert ratios == {f"leaf{i}": (1.0, 1600.0, 1600.0) for i in range(1, 9)}
    assert cluster.fabric.max_oversubscription == 1.0


def test_no_other_inventory_uses_the_pods_site_name_or_subnets() -> None:
    cluster = load_cluster(POD)
    own = [ipaddress.ip_network(s) for s in (*cluster.fabric.data_subnets, cluster.fabric.mgmt_subnet,
                                             cluster.fabric.p2p_pool)]
    others = [p for p in [*REPO.glob("inventory/**/*.yaml"), *REPO.glob("bench/*.yaml"),
                          *REPO.glob("tests/**/*.yaml"), *REPO.glob("examples/**/*.yaml")] if p != POD]
    assert len(others) > 10
    clashes = []
    for path in others:
        text = path.read_text(encoding="utf-8")
        if re.search(r"^\s*name:\s*pod128\s*$", text, re.M):
            clashes.append(f"{path.name}: site pod128")
        for match in ADDRESS.finditer(text):
            address = ipaddress.ip_address(match.group(1))
            clashes += [f"{path.name}: {address} in {net}" for net in own if address in net]
    assert clashes == []
