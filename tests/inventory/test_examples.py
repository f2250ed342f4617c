"""The example inventories are valid RA sites whose bills of materials match the papers."""

from __future__ import annotations

from pathlib import Path

import pytest

from racfg.inventory import load_cluster
from racfg.policy import evaluate
from racfg.summary import bill_of_materials

REPO = Path(__file__).resolve().parents[2]


def bom(name: str) -> dict[tuple[str, str], int]:
    return {(r.part, r.model): r.qty for r in bill_of_materials(load_cluster(REPO / "inventory" / f"{name}.yaml"))}


@pytest.mark.parametrize("path", sorted((REPO / "inventory").glob("*.yaml")), ids=lambda p: p.name)
def test_examples_have_no_errors(path):
    cluster = load_cluster(path)
    assert [f for f in evaluate(cluster) if f.severity == "error"] == []


def test_ra_ethernet_bom_is_seed_000_table_1():
    assert bom("ra-ethernet") == {
        ("compute", "DGX-1"): 9,
        ("storage", "Supermicro BigTwin 2029BT-HNR"): 8,
        ("switch", "SN2700"): 1,
        ("cables", "100G QSFP28 copper (e.g. MCP1600-C003)"): 17,
    }
    cluster = load_cluster(REPO / "inventory" / "ra-ethernet.yaml")
    assert cluster.fabric.effective_host_mtu == 9000 and cluster.fabric.effective_switch_mtu == 9000


def test_ra_infiniband_bom_is_seed_000_table_2():
    assert bom("ra-infiniband") == {
        ("compute", "DGX-1"): 9,
        ("storage", "Supermicro BigTwin 2029BT-HNR"): 8,
        ("switch", "SB7800"): 1,
        ("cables", "EDR QSFP copper (e.g. MCP1600-E003)"): 17,
    }
    cluster = load_cluster(REPO / "inventory" / "ra-infiniband.yaml")
    assert cluster.fabric.effective_ib_mtu == 4096 and cluster.fabric.effective_host_mtu == 4092


def test_ra_arista_is_seed_001():
    cluster = load_cluster(REPO / "inventory" / "ra-arista.yaml")
    assert bom("ra-arista")[("cables", "100G QSFP28 copper (e.g. MCP1600-C003)")] == 9 * 4 + 8 * 2
    assert {len(h.nics) for h in cluster.role("dgx")} == {4}
    assert {len(h.nics) for h in cluster.role("storage")} == {2}
    assert {len(h.drives) for h in cluster.role("storage")} == {6}
