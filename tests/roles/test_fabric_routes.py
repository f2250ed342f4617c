"""The fabric role's templates carry a leaf-spine host's routes (``racfg_routing``, rendered by racfg
from the inventory): a route per NIC to the data network through its leaf, and for a host with NICs on
two leaves a table and a rule per NIC (source routing). Rendered as Ansible renders them (trim_blocks)
from the variables ``racfg render`` writes for a real two-leaf site; a site without routing renders
exactly what it did before (no routes, no blank lines). Applying them on hosts is a lab test for the
step that makes the lab route (issue 37); these tests read the files the role would write."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
import yaml

from racfg.inventory import load_cluster
from racfg.render import load_rendered, render_files
from tests.inventory.test_leafspine import leafspine, write

TEMPLATES = Path(__file__).resolve().parents[2] / "roles" / "fabric" / "templates"
ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                         trim_blocks=True, keep_trailing_newline=True)


def host_values(tmp_path: Path, name: str, two_leaves: bool) -> dict:
    data = leafspine()
    if two_leaves:  # st01 gets a second port on the other leaf, in that leaf's subnet
        data["hosts"][1]["nics"].append({"name": "data1", "address": "198.19.1.21/24", "switch": "leaf1",
                                         "port": "1/11"})
    host = load_rendered(render_files(load_cluster(write(tmp_path, data)))[f"host_vars/{name}.yml"])
    nics = host["racfg_nics"]
    return {"ansible_managed": "racfg", "racfg_fabric": {"type": "ethernet"}, "fabric_ipoib_unavailable": "",
            "common_data_nics": nics, "item": nics[0], "racfg_routing": host["racfg_routing"]}


def sections(text: str) -> list[tuple[str, dict[str, str]]]:
    """A .network file as (section, {key: value}) in order; sections repeat ([Route])."""
    out: list[tuple[str, dict[str, str]]] = []
    for line in text.splitlines():
        if line.startswith("["):
            out.append((line.strip("[]"), {}))
        elif "=" in line and out:
            key, value = line.split("=", 1)
            out[-1][1][key] = value
    return out


def test_one_nic_gets_one_route_through_its_leaf(tmp_path):
    values = host_values(tmp_path, "dgx01", two_leaves=False)
    routes = [body for name, body in sections(ENV.get_template("data.network.j2").render(**values)) if name == "Route"]
    assert routes == [{"Destination": "198.19.0.0/16", "Gateway": "198.19.1.1", "Metric": "100"}]
    netplan = yaml.safe_load(ENV.get_template("netplan-data.yaml.j2").render(**values))["network"]["ethernets"]
    assert netplan["data0"]["routes"] == [{"to": "198.19.0.0/16", "via": "198.19.1.1", "metric": 100}]
    assert "routing-policy" not in netplan["data0"]
    ifupdown = ENV.get_template("ifupdown-data.j2").render(**values)
    assert "    post-up ip route replace 198.19.0.0/16 via 198.19.1.1 dev data0 metric 100\n" in ifupdown
    assert "ip rule" not in ifupdown


@pytest.mark.parametrize(("nic", "table", "gateway", "source", "subnet", "metric"), [
    (0, 101, "198.19.2.1", "198.19.2.21", "198.19.2.0/24", 100),
    (1, 102, "198.19.1.1", "198.19.1.21", "198.19.1.0/24", 101),
])
def test_nics_on_two_leaves_get_a_table_and_a_rule_each(tmp_path, nic, table, gateway, source, subnet, metric):
    values = host_values(tmp_path, "st01", two_leaves=True)
    values["item"] = values["common_data_nics"][nic]
    name = values["item"]["name"]
    found = sections(ENV.get_template("data.network.j2").render(**values))
    assert [body for kind, body in found if kind == "Route"] == [
        {"Destination": "198.19.0.0/16", "Gateway": gateway, "Metric": str(metric)},
        {"Destination": "198.19.0.0/16", "Gateway": gateway, "Table": str(table)},
        {"Destination": subnet, "Scope": "link", "Table": str(table)}]
    assert [body for kind, body in found if kind == "RoutingPolicyRule"] == [{"From": f"{source}/32",
                                                                             "Table": str(table)}]
    netplan = yaml.safe_load(ENV.get_template("netplan-data.yaml.j2").render(**values))["network"]["ethernets"][name]
    assert netplan["routes"] == [{"to": "198.19.0.0/16", "via": gateway, "metric": metric},
                                 {"to": "198.19.0.0/16", "via": gateway, "table": table},
                                 {"to": subnet, "scope": "link", "table": table}]
    assert netplan["routing-policy"] == [{"from": source, "table": table}]
    ifupdown = ENV.get_template("ifupdown-data.j2").render(**values)
    for line in (f"post-up ip route replace 198.19.0.0/16 via {gateway} dev {name} table {table}",
                 f"post-up ip route replace {subnet} dev {name} scope link table {table}",
                 f"post-up ip rule add from {source} table {table}",
                 f"pre-down ip rule del from {source} table {table} || true"):
        assert f"    {line}\n" in ifupdown, ifupdown


def test_a_site_without_routing_renders_no_route(tmp_path):
    values = host_values(tmp_path, "dgx01", two_leaves=False)
    del values["racfg_routing"]
    for name in ("data.network.j2", "netplan-data.yaml.j2", "ifupdown-data.j2"):
        text = ENV.get_template(name).render(**values)
        assert "oute" not in text and "rule" not in text and "\n\n\n" not in text, (name, text)
