"""Leaf-spine sites (issue 37): the model, the load-time refusals, the topology rules, the budget's
spine tier, the BOM and what render derives (switch routing intent, host routes, fabric.md) — each on
small inventories that bend one valid two-leaf, two-spine site one way."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from racfg.inventory import InventoryError, load_cluster
from racfg.policy import bandwidth_budget, evaluate
from racfg.render import load_rendered, render_files
from racfg.render.routing import switch_routing
from racfg.summary import bill_of_materials
from tests.inventory.conftest import ansible_plain

REPO = Path(__file__).resolve().parents[2]


def _switch(name: str, role: str | None, mgmt: str, platform: str = "onyx", model: str = "SN2700") -> dict:
    out = {"name": name, "platform": platform, "model": model, "mgmt": mgmt,
           "credentials": {"password_env": "SW_PASSWORD"}}
    return {**out, "role": role} if role else out


def _host(name: str, role: str, mgmt: str, address: str, switch: str, port: str) -> dict:
    out = {"name": name, "role": role, "mgmt": mgmt,
           "nics": [{"name": "data0", "address": address, "switch": switch, "port": port}]}
    return {**out, "drives": [{"path": "/dev/nvme[0:1]n1"}]} if role == "storage" else out


LEAFSPINE: dict[str, Any] = {
    "site": {"name": "ls"},
    "fabric": {"type": "ethernet", "design": "leaf-spine", "data_subnets": ["198.19.0.0/16"],
               "p2p_pool": "198.18.255.0/24"},
    "switches": [_switch("leaf1", "leaf", "198.18.0.2"), _switch("leaf2", "leaf", "198.18.0.3"),
                 _switch("spine1", "spine", "198.18.0.4"), _switch("spine2", "spine", "198.18.0.5")],
    "links": [{"leaves": "leaf[1:2]", "spines": "spine[1:2]", "count": 1, "leaf_port": "1/31", "spine_port": "1/1"}],
    "hosts": [_host("dgx[01:02]", "dgx", "198.18.0.11", "198.19.1.11/24", "leaf1", "1/1"),
              _host("st[01:02]", "storage", "198.18.0.21", "198.19.2.21/24", "leaf2", "1/1")],
    "software": {"ofed": {"flavor": "inbox"}},
}


def leafspine() -> dict[str, Any]:
    return copy.deepcopy(LEAFSPINE)


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def errors(tmp_path: Path, data: dict[str, Any], rule: str | None = None) -> list[Any]:
    cluster = load_cluster(write(tmp_path, data))
    return [f for f in evaluate(cluster) if f.severity == "error" and (rule is None or f.rule == rule)]


def test_valid_site_and_its_routing_plan(tmp_path):
    cluster = load_cluster(write(tmp_path, leafspine()))
    assert [(f.rule, f.message) for f in evaluate(cluster)] == []
    topo = cluster.topology
    assert [(i.leaf, i.leaf_port, i.spine, i.spine_port) for i in topo.isls] == [
        ("leaf1", "1/31", "spine1", "1/1"), ("leaf1", "1/32", "spine2", "1/1"),
        ("leaf2", "1/31", "spine1", "1/2"), ("leaf2", "1/32", "spine2", "1/2")]
    leaf1 = switch_routing(cluster, "leaf1")
    assert leaf1["asn"] == 65101 and leaf1["spine_asn"] == 65100 and leaf1["maximum_paths"] == 2
    assert leaf1["subnets"] == [{"subnet": "198.19.1.0/24", "gateway": "198.19.1.1/24", "ports": ["1/1", "1/2"]}]
    assert leaf1["isls"][0] == {"port": "1/31", "address": "198.18.255.1/31", "peer": "spine1", "peer_port": "1/1",
                                "peer_address": "198.18.255.0", "peer_asn": 65100, "mtu": 9216, "speed_gbps": 100.0}
    spine2 = switch_routing(cluster, "spine2")
    assert spine2["asn"] == 65100 and spine2["subnets"] == [] and spine2["maximum_paths"] == 1
    assert [(n["address"], n["asn"]) for n in spine2["neighbors"]] == [("198.18.255.3", 65101),
                                                                        ("198.18.255.7", 65102)]
    files = render_files(cluster)
    switch_vars = load_rendered(files["host_vars/leaf2.yml"])
    assert switch_vars["racfg_switch_routing"] == switch_routing(cluster, "leaf2")
    host = load_rendered(files["host_vars/st02.yml"])["racfg_routing"]
    assert host == {"gateway": "198.19.2.1", "source_routing": False, "routes": [
        {"nic": "data0", "leaf": "leaf2", "to": ["198.19.0.0/16"], "via": "198.19.2.1", "source": "198.19.2.22",
         "subnet": "198.19.2.0/24", "metric": 100, "table": None}]}
    doc = files["fabric.md"]
    for needle in ("## Tiers", "| leaf | leaf1 | SN2700 | 65101 | 2 | spine1 spine2 | 1.00:1 |",
                   "| leaf1 | 1/31 | 198.18.255.1/31 | spine1 | 1/1 | 198.18.255.0/31 | 100G | 9216 |",
                   "## ASN plan", "| leaf2 | 198.19.2.0/24 | 198.19.2.1/24 | 2 |"):
        assert needle in doc, doc


def test_single_site_renders_no_routing(tmp_path):
    files = render_files(load_cluster(REPO / "inventory" / "ra-ethernet.yaml"))
    assert "racfg_routing" not in files["host_vars/dgx01.yml"]
    assert "racfg_switch_routing" not in files["host_vars/sn2700.yml"] and "## Tiers" not in files["fabric.md"]


def test_given_gateway_asn_and_pool(tmp_path):
    data = leafspine()
    data["switches"][1].update(asn=64999, gateways=["198.19.2.254/24"])
    data["links"][0]["pool"] = "10.0.0.0/30"
    data["links"][0]["leaves"] = "leaf1"
    data["links"].append({"leaves": "leaf2", "spines": "spine[1:2]", "leaf_port": "1/31", "spine_port": "1/2"})
    topo = load_cluster(write(tmp_path, data)).topology
    assert topo.asns["leaf2"] == 64999 and str(topo.subnets["leaf2"][0].gateway) == "198.19.2.254/24"
    assert [str(i.spine_address) for i in topo.isls] == ["10.0.0.0/31", "10.0.0.2/31", "198.18.255.0/31",
                                                         "198.18.255.2/31"]


def _bend(change: str) -> dict[str, Any]:
    data = leafspine()
    if change == "unknown-role":
        data["switches"][0]["role"] = "core"
    elif change == "no-role":
        del data["switches"][3]["role"]
    elif change == "isl-on-host-port":
        data["links"][0]["leaf_port"] = "1/2"
    elif change == "leaf-without-uplinks":
        data["links"][0]["leaves"] = "leaf1"
    elif change == "spine-with-hosts":
        data["hosts"][1]["nics"][0]["switch"] = "spine1"
        data["hosts"][1]["nics"][0]["port"] = "1/20"
    elif change == "subnet-overlap":
        data["hosts"][1]["nics"][0]["address"] = "198.19.1.21/24"
    elif change == "asn-reused":
        data["switches"][1]["asn"] = 65101
    elif change == "asn-on-spine":
        data["switches"][2]["asn"] = 65000
    elif change == "links-name-a-leaf-as-spine":
        data["links"][0]["spines"] = "leaf2"
    elif change == "pool-too-small":
        data["fabric"]["p2p_pool"] = "198.18.255.0/30"
    elif change == "role-on-single":
        data["fabric"]["design"] = "single"
    elif change == "gateway-outside":
        data["switches"][0]["gateways"] = ["198.19.9.1/24"]
    return data


@pytest.mark.parametrize(("change", "path", "needle"), [
    ("unknown-role", "switches[0].role", "Input should be 'leaf' or 'spine'"),
    ("no-role", "switches[3]", "switch spine2 has no role"),
    ("isl-on-host-port", "links[0].leaf_port", "port leaf1 1/2 is already cabled to dgx02:data0"),
    ("leaf-without-uplinks", "switches[1]", "leaf leaf2 has no link to any spine"),
    ("spine-with-hosts", "hosts[1].nics[0].switch", "spine1 is a spine: spines carry only leaves"),
    ("subnet-overlap", "hosts[1].nics[0].address", "subnet 198.19.1.0/24 of leaf leaf2 (st01) overlaps"),
    ("asn-reused", "switches[1].asn", "ASN 65101 of leaf leaf2 is already used by leaf leaf1"),
    ("asn-on-spine", "switches[2]", "asn and gateways belong to a leaf"),
    ("links-name-a-leaf-as-spine", "links[0].spines", "leaf2 is not a spine"),
    ("pool-too-small", "fabric.p2p_pool", "no /31 left"),
    ("role-on-single", "switches[0].role", "a switch role needs a leaf-spine site"),
    ("gateway-outside", "switches[0].gateways[0]", "is in no host subnet of leaf1"),
])
def test_bad_input_is_a_located_inventory_error(tmp_path, change, path, needle):
    with pytest.raises(InventoryError) as caught:
        load_cluster(write(tmp_path, _bend(change)))
    problems = [p for p in caught.value.problems if p.path == path and needle in p.message]
    assert problems, [(p.path, p.message) for p in caught.value.problems]
    assert problems[0].line > 1


@pytest.mark.parametrize("change", ["unknown-role", "isl-on-host-port", "leaf-without-uplinks", "spine-with-hosts",
                                    "subnet-overlap", "asn-reused"])
def test_bad_input_exits_2_and_renders_nothing(tmp_path, change):
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "racfg", "render", str(write(tmp_path, _bend(change))), "-o",
                             str(out), "--force"], capture_output=True, text=True, cwd=REPO,
                            env={"PATH": "/usr/bin:/bin", "RACFG_PLAIN": "1"})
    assert result.returncode == 2, result.stdout + result.stderr
    assert "site.yaml:" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()


def _rule_case(change: str) -> dict[str, Any]:
    data = leafspine()
    if change == "two-islands":
        data["links"][0].update(leaves="leaf1", spines="spine1")
        data["links"].append({"leaves": "leaf2", "spines": "spine2", "leaf_port": "1/31", "spine_port": "1/1"})
    elif change == "unequal":
        data["links"][0]["leaves"] = "leaf1"
        data["links"].append({"leaves": "leaf2", "spines": "spine1", "count": 2, "leaf_port": "1/29",
                              "spine_port": "1/5"})
        data["links"].append({"leaves": "leaf2", "spines": "spine2", "leaf_port": "1/31", "spine_port": "1/5"})
    elif change == "isl-mtu":
        data["fabric"]["isl_mtu"] = 1500
    elif change == "isl-mtu-eos":  # the default 9216 on an EOS spine, whose ports stop at 9214
        data["switches"][3].update(platform="eos", model="7060CX-32S")
        data["links"] = [{**data["links"][0], "spines": "spine1"},
                         {**data["links"][0], "spines": "spine2", "spine_port": "Ethernet1"}]
        data["links"][1]["leaf_port"] = "1/32"
    elif change == "oversubscribed":
        data["hosts"][0]["name"] = "dgx[01:03]"
    elif change == "pool-in-data":
        data["fabric"]["p2p_pool"] = "198.19.200.0/24"
    elif change == "pool-in-mgmt":
        data["fabric"]["mgmt_subnet"] = "198.18.0.0/16"
    elif change == "gateway-is-a-host":
        data["hosts"][0]["nics"][0]["address"] = "198.19.1.1/24"
    elif change == "isl-pfc":
        data["links"][0]["pfc"] = True
    return data


@pytest.mark.parametrize(("change", "rule", "path", "needle"), [
    ("two-islands", "reachability", "links", "the switches form 2 islands [leaf1 spine1: 2 GPU server(s)] "
     "[leaf2 spine2: 2 storage node(s)]"),
    ("two-islands", "leaf-spine-mesh", "switches[0]", "leaf leaf1 has no link to spine2"),
    ("unequal", "leaf-spine-mesh", "switches[1]", "leaf leaf2 has an unequal number of links per spine (spine1: 2)"),
    ("isl-mtu", "isl-mtu", "fabric.isl_mtu", "below the hosts' MTU"),
    ("isl-mtu-eos", "isl-mtu", "fabric.isl_mtu", "inter-switch link MTU above what spine2 accept"),
    ("oversubscribed", "oversubscription", "switches[0]", "leaf leaf1 is oversubscribed 1.50:1"),
    ("pool-in-data", "fabric-addressing", "links[0]", "198.19.200.0/31 is already used by 198.19.0.0/16"),
    ("pool-in-mgmt", "fabric-addressing", "links[0]", "198.18.255.0/31 is already used by 198.18.0.0/16"),
    ("gateway-is-a-host", "fabric-addressing", "switches[0].gateways", "is the address of dgx01:data0"),
    ("isl-pfc", "isl-no-pfc", "links[0].pfc", "priority flow control"),
])
def test_topology_rules(tmp_path, change, rule, path, needle):
    found = errors(tmp_path, _rule_case(change), rule)
    assert any(f.path == path and needle in f.message and f.hint for f in found), [(f.path, f.message)
                                                                                  for f in found]


def test_single_design_with_unlinked_switches_names_the_islands(tmp_path):
    data = leafspine()
    data["fabric"] = {"type": "ethernet"}
    data["links"] = []
    for sw in data["switches"]:
        del sw["role"]
    found = errors(tmp_path, data, "reachability")
    assert len(found) == 1 and "4 islands [leaf1: 2 GPU server(s)] [leaf2: 2 storage node(s)] [spine1: no hosts]" \
        in found[0].message and found[0].path == "switches"
    budget = bandwidth_budget(load_cluster(write(tmp_path, data)))
    assert budget.cut_off == 2 and not budget.fed


def test_budget_spine_tier(tmp_path):
    data = leafspine()
    # leaf1 carries 2 clients and one storage node; leaf2 one storage node and (below) one client
    data["hosts"].append(_host("st03", "storage", "198.18.0.30", "198.19.1.30/24", "leaf1", "1/5"))
    data["hosts"].append(_host("dgx09", "dgx", "198.18.0.40", "198.19.2.40/24", "leaf2", "1/6"))
    data["fabric"]["max_oversubscription"] = 2.0
    budget = bandwidth_budget(load_cluster(write(tmp_path, data)))
    spine = budget.spine
    assert spine is not None
    # clients: leaf1 2/3, leaf2 1/3; storage: leaf1 1/3, leaf2 2/3 -> reads that cross:
    # 2/3 * 2/3 + 1/3 * 1/3 = 5/9 of the demand (3 x 0.8 GB/s)
    assert spine.cross_share == pytest.approx(5 / 9)
    assert spine.crossing == pytest.approx(3 * 0.8 * 5 / 9)
    # leaf1 (uplinks 2 x 12.5 x 0.86 = 21.5 GB/s) is full first: inbound 4/9 of the reads
    assert spine.limiting_leaf == "leaf1" and spine.capacity == pytest.approx(21.5 / (4 / 9))
    assert budget.limiting_tier == "storage nodes"
    data["acceptance"] = {"budget": {"storage_node_gbytes_per_s": 100.0}}
    data["links"][0]["speed"] = "10G"
    budget = bandwidth_budget(load_cluster(write(tmp_path, data)))
    assert budget.limiting_tier == "uplinks of leaf leaf1"
    assert budget.supply == pytest.approx(2 * 10 / 8 * 0.86 / (4 / 9))


def test_hosts_on_two_leaves_get_source_routing(tmp_path):
    data = leafspine()
    data["hosts"][1]["nics"].append({"name": "data1", "address": "198.19.1.21/24", "switch": "leaf1",
                                     "port": "1/11"})
    cluster = load_cluster(write(tmp_path, data))
    routing = load_rendered(render_files(cluster)["host_vars/st01.yml"])["racfg_routing"]
    assert routing["source_routing"] is True and routing["gateway"] == "198.19.2.1"
    assert [(r["nic"], r["leaf"], r["via"], r["source"], r["table"], r["metric"]) for r in routing["routes"]] == [
        ("data0", "leaf2", "198.19.2.1", "198.19.2.21", 101, 100), ("data1", "leaf1", "198.19.1.1", "198.19.1.21",
                                                                     102, 101)]


def test_infiniband_two_tier_is_a_cabling_plan(tmp_path):
    data = leafspine()
    data["fabric"] = {"type": "infiniband", "speed": "EDR", "host_mtu": 4092, "design": "leaf-spine"}
    for sw in data["switches"]:
        sw.update(platform="mlnxos-ib", model="SB7800")
    cluster = load_cluster(write(tmp_path, data))
    assert [f for f in evaluate(cluster) if f.severity == "error"] == []
    assert switch_routing(cluster, "leaf1") is None and cluster.topology.asns == {}
    doc = render_files(cluster)["fabric.md"]
    assert "## Fat tree cabling plan" in doc and "| leaf1 | 1/31 | - | spine1 | 1/1 | - | 100G | 4096 |" in doc
    assert "## ASN plan" not in doc
    data["links"][0]["spines"] = "spine1"  # spine2 loses every leaf: refused; half the up ports: policy
    data["switches"].pop()
    data["hosts"][0]["name"] = "dgx[01:02]"
    found = errors(tmp_path, data, "oversubscription")
    assert found and "oversubscribed 2.00:1 (down/up ports on the fat tree)" in found[0].message


@pytest.mark.parametrize("name", ["ra-leafspine", "ra-leafspine-eos"])
def test_examples_bom_and_plan(name):
    cluster = load_cluster(REPO / "inventory" / f"{name}.yaml")
    bom = {(r.part, r.qty) for r in bill_of_materials(cluster)}
    assert {("compute", 24), ("storage", 16), ("leaf", 4), ("spine", 2), ("cables", 40), ("ISL cables", 40)} <= bom
    assert [f for f in evaluate(cluster) if f.severity == "error"] == []
    assert {round(ratio, 2) for _, ratio, _, _ in __import__("racfg.policy", fromlist=["x"]).leaf_ratios(cluster)} \
        == {1.0}
    budget = bandwidth_budget(cluster)
    assert budget.fed and budget.spine is not None and budget.spine.cross_share == pytest.approx(0.75)


def test_the_lab_builds_leaf_spine_sites(tmp_path):
    from racfg_lab.lifecycle import _check_labbable

    assert _check_labbable(load_cluster(write(tmp_path, leafspine()))) is None


def test_budget_warning_names_the_uplinks_when_they_limit(tmp_path):
    data = leafspine()
    data["links"][0]["speed"] = "1G"  # 2 x 1G uplinks per leaf against 1.6 GB/s of reads
    data["fabric"]["max_oversubscription"] = 100.0
    cluster = load_cluster(write(tmp_path, data))
    [warning] = [f for f in evaluate(cluster) if f.rule == "bandwidth"]
    assert warning.hint == "the uplinks of leaf leaf1 limit first: add links to the spines, or spread the hosts"


def test_check_lists_the_isls_and_the_spine_tier():
    result = subprocess.run([sys.executable, "-m", "racfg", "check", "inventory/ra-leafspine.yaml", "--format", "json"],
                            capture_output=True, text=True, cwd=REPO, env={"PATH": "/usr/bin:/bin", "RACFG_PLAIN": "1"})
    document = yaml.safe_load(result.stdout)
    assert result.returncode == 0 and document["summary"]["errors"] == 0, result.stdout + result.stderr
    assert len(document["isls"]) == 40 and document["isls"][0] == {
        "leaf": "leaf1", "leaf_port": "1/21", "leaf_address": "198.18.255.1/31", "spine": "spine1", "spine_port": "1/1",
        "spine_address": "198.18.255.0/31", "speed_gbps": 100.0}
    assert document["budget"]["limiting_tier"] == "storage nodes"
    assert document["budget"]["spine_tier"]["crossing_gbytes_per_s"] == pytest.approx(24 * 0.8 * 0.75)


@pytest.mark.parametrize("name", ["ra-leafspine", "ra-leafspine-eos"])
def test_examples_render_deterministically_and_ansible_reads_the_routing(tmp_path, name):
    import json

    from racfg.render import write_rendered

    cluster = load_cluster(REPO / "inventory" / f"{name}.yaml")
    assert render_files(cluster) == render_files(load_cluster(REPO / "inventory" / f"{name}.yaml"))
    out = tmp_path / "out"
    write_rendered(cluster, out)
    assert write_rendered(cluster, out).written == []
    listed = subprocess.run([str(Path(sys.executable).with_name("ansible-inventory")), "-i", str(out / "hosts.yml"),
                             "--list"], capture_output=True, text=True, check=True, cwd=tmp_path)
    hostvars = ansible_plain(json.loads(listed.stdout))["_meta"]["hostvars"]
    gateway = cluster.topology.subnets["leaf2"][0].gateway.ip
    assert hostvars["dgx07"]["racfg_routing"]["routes"][0]["via"] == str(gateway)
    spine = hostvars["spine2"]["racfg_switch_routing"]
    assert spine["asn"] == 65100 and len(spine["neighbors"]) == 20 and spine["maximum_paths"] == 5
    assert hostvars["leaf4"]["racfg_switch_routing"]["maximum_paths"] == 10
