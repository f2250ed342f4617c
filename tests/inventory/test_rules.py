"""Every RA rule: a valid inventory passes it, a violating one gets a located finding."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from racfg.inventory.cluster import build_cluster
from racfg.inventory.loader import parse_inventory
from racfg.policy import bandwidth_budget, evaluate
from tests.inventory.conftest import base


def findings(make_cluster: Callable[..., Any], data: dict[str, Any], rule: str | None = None):
    cluster = make_cluster(data)
    return [f for f in evaluate(cluster) if rule is None or f.rule == rule], cluster


def test_base_inventory_has_no_findings(make_cluster):
    found, _ = findings(make_cluster, base())
    assert found == []


def bend(path: str, value: Any) -> dict[str, Any]:
    data = base()
    node: Any = data
    parts = path.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    last = parts[-1]
    if value is None:
        del node[last]
    else:
        node[int(last) if last.isdigit() else last] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "rule", "severity", "where", "needle"),
    [
        ("fabric.host_mtu", 1500, "fabric-mtu", "error", "fabric.host_mtu", "below the RA"),
        ("fabric.host_mtu", 9216, "fabric-mtu", "warning", "fabric.host_mtu", "above the RA"),
        ("fabric.ib_mtu", 4096, "fabric-mtu", "error", "fabric.ib_mtu", "InfiniBand only"),
        ("fabric.switch_mtu", 1500, "switch-mtu", "error", "fabric.switch_mtu", ">= 9000"),
        ("fabric.roce", True, "no-roce", "error", "fabric.roce", "RoCE"),
        ("fabric.pfc", True, "no-pfc", "error", "fabric.pfc", "priority flow control"),
        ("switches.0.platform", "mlnxos-ib", "platform", "error", "switches[0].platform", "cannot serve"),
        ("switches.0.model", "SN9999", "platform", "error", "switches[0].model", "unknown switch model"),
        ("switches.0.platform", "eos", "platform", "error", "switches[0].platform", "runs onyx"),
        ("hosts.0.nics.0.switch", "sw9", "cabling", "error", "hosts[0].nics[0].switch", "not defined"),
        ("hosts.0.nics.0.port", "Ethernet1", "cabling", "error", "hosts[0].nics[0].port", "not a onyx port"),
        ("hosts.1.nics.0.port", "1/30", "cabling", "error", "hosts[1].nics[0].port", "outside switch sw1"),
        ("hosts.1.nics.0.port", "1/2", "cabling", "error", "hosts[1].nics[0].port", "already cabled to dgx02"),
        ("hosts.0.nics.0.speed", "200G", "link-speed", "error", "hosts[0].nics[0].speed", "200G NIC on a 100G"),
        ("hosts.0.nics.0.speed", "25G", "link-speed", "warning", "hosts[0].nics[0].speed", "differs"),
        ("hosts.0.nics.0.mtu", 9216, "switch-mtu", "error", "hosts[0].nics[0].mtu", "above the switch"),
        ("hosts.1.mgmt", "198.18.0.12", "unique", "error", "hosts[1].mgmt", "already used by host dgx02"),
        ("hosts.1.name", "dgx[02:09]", "unique", "error", "hosts[1].name", "already used"),
        ("hosts.1.nics.0.address", "198.19.0.12/24", "unique", "error", "hosts[1].nics[0].address", "already"),
        ("hosts.1.nics.0.address", "198.19.5.21/24", "addressing", "error", "hosts[1].nics[0].address",
         "outside the data subnets"),
        ("hosts.0.mgmt", "198.18.9.11", "addressing", "error", "hosts[0].mgmt", "outside mgmt_subnet"),
        ("hosts.1.name", "st[01:07]", "storage", "warning", "hosts", "at least 8"),
        ("hosts.1.drives", None, "storage", "error", "hosts[1].drives", "without NVMe drives"),
        ("software.ofed", None, "software", "error", "software", "no OFED pin"),
        ("software.ofed", {"flavor": "mlnx"}, "software", "error", "software.ofed.version", "needs ofed.version"),
        ("hosts.0.nics", [], "cabling", "error", "hosts[0].nics", "no data NIC"),
    ],
)
def test_rule_violations(make_cluster, path, value, rule, severity, where, needle):
    found, cluster = findings(make_cluster, bend(path, value), rule)
    matching = [f for f in found if f.path == where and needle in f.message]
    assert matching, [(f.path, f.message) for f in found]
    assert matching[0].severity == severity
    assert cluster.line(matching[0].loc) > 0


def test_infiniband_rules(make_cluster):
    data = base()
    data["fabric"] = {"type": "infiniband", "speed": "EDR", "host_mtu": 9000, "data_subnets": ["198.19.0.0/24"]}
    data["switches"][0].update(platform="mlnxos-ib", model="SB7800")
    found, _ = findings(make_cluster, data)
    assert any(f.rule == "fabric-mtu" and f.severity == "error" and "9000 is an Ethernet value" in (f.hint or "")
               for f in found)
    data["fabric"]["host_mtu"] = 4092
    found, _ = findings(make_cluster, data)
    assert [f for f in found if f.severity == "error"] == []
    data["fabric"]["ipoib_mode"] = "connected"
    data["fabric"]["host_mtu"] = 65520
    found, _ = findings(make_cluster, data)
    assert [f for f in found if f.severity == "error"] == []


def test_breakout_lane_conflicts_with_whole_port(make_cluster):
    data = base()
    data["hosts"][0]["nics"][0]["port"] = "1/1/1"
    data["hosts"].append({"name": "extra", "role": "dgx", "mgmt": "198.18.0.99",
                          "nics": [{"name": "data0", "address": "198.19.0.99/24", "switch": "sw1", "port": "1/1"}]})
    found, _ = findings(make_cluster, data, "cabling")
    assert any("shares its physical port" in f.message for f in found)


def test_password_file_mode(make_cluster, tmp_path):
    secret = tmp_path / "pw"
    secret.write_text("x")
    os.chmod(secret, 0o644)
    data = base()
    data["switches"][0]["credentials"] = {"password_file": str(secret)}
    found, _ = findings(make_cluster, data, "secrets")
    assert found and found[0].expected == "0600" and "chmod 600" in (found[0].hint or "")
    os.chmod(secret, 0o600)
    assert findings(make_cluster, data, "secrets")[0] == []


def test_bandwidth_budget_numbers(make_cluster):
    data = base()
    cluster = make_cluster(data)
    budget = bandwidth_budget(cluster)
    assert budget.demand == pytest.approx(2 * 0.8)
    assert budget.supply == pytest.approx(8 * 5.625)  # nodes, not links, limit (8 x 10.75 GB/s links)
    assert budget.fed and budget.headroom == pytest.approx(45.0 / 1.6 - 1)
    data["acceptance"] = {"budget": {"workload": "custom", "client_gbytes_per_s": 30.0}}
    found, cluster = findings(make_cluster, data, "bandwidth")
    budget = bandwidth_budget(cluster)
    assert not budget.fed and budget.servers_fed == 1
    assert any("links carry" in f.message for f in found)
    assert any("storage supplies" in f.message for f in found)


# Property: whatever the ports drawn, the cabling rule flags exactly the duplicates and the
# ports off the panel, and nothing else.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=12))
def test_cabling_property(ports):
    data = base()
    data["hosts"] = [
        {"name": f"h{i}", "role": "dgx", "mgmt": f"198.18.0.{100 + i}",
         "nics": [{"name": "data0", "address": f"198.19.0.{100 + i}/24", "switch": "sw1", "port": f"1/{p}"}]}
        for i, p in enumerate(ports)
    ]
    cluster = build_cluster(parse_inventory(data, "prop.yaml"), Path("prop.yaml"), "prop.yaml", data)
    found = [f for f in evaluate(cluster) if f.rule == "cabling"]
    seen: set[int] = set()
    expected = 0
    for p in ports:
        if p > 32 or p in seen:
            expected += 1
        else:
            seen.add(p)
    assert len(found) == expected


def test_weka_without_a_distribution_is_a_warning(make_cluster):
    data = base()
    del data["software"]["weka"]["dist"]
    found, _ = findings(make_cluster, data, "software")
    assert [(f.severity, f.path) for f in found] == [("warning", "software.weka")]
    assert "without a distribution: deploy would install nothing" in found[0].message
