"""The fabric document: port map, cabling table and addressing, as Markdown for the site's wiki."""

from __future__ import annotations

from racfg.console import markdown_table
from racfg.inventory.cluster import Cluster
from racfg.render.ansible_inventory import switch_ports
from racfg.render.fabric_tiers import tiers_markdown
from racfg.summary import bill_of_materials


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return markdown_table(header, rows).split("\n")


def fabric_markdown(cluster: Cluster) -> str:
    f = cluster.fabric
    out = [f"# Fabric of site {cluster.name}", ""]
    if cluster.inventory.site.description:
        out += [cluster.inventory.site.description, ""]
    mtu = f"host MTU {f.effective_host_mtu}, switch MTU {f.effective_switch_mtu}"
    if f.type == "infiniband":
        mtu = f"IB MTU {f.effective_ib_mtu}, IPoIB {f.effective_ipoib_mode} MTU {f.effective_host_mtu}"
    out += [
        f"- Fabric: {f.type}, {f.speed_gbps:g} Gb/s per link, {mtu}",
        f"- RoCE: {'on' if f.roce else 'off'}; PFC: {'on' if f.pfc else 'off'}",
        f"- Data subnets: {', '.join(f.data_subnets) or '(not declared)'}; "
        f"management: {f.mgmt_subnet or '(not declared)'}",
        "",
        "## Bill of materials",
        "",
    ]
    out += _table(["part", "model", "qty", "notes"], [[r.part, r.model, str(r.qty), r.notes]
                                                      for r in bill_of_materials(cluster)])
    out += tiers_markdown(cluster)
    for sw in cluster.switches.values():
        ports = {p["port"]: p for p in switch_ports(cluster, sw)}
        out += ["", f"## Switch {sw.name} ({sw.model.name}, {sw.platform}, mgmt {sw.spec.mgmt})", ""]
        out += [f"{len(ports)} of {sw.model.ports} ports cabled.", ""]
        out += _table(["port", "host", "nic", "speed", "description"],
                      [[p["port"], p["host"], p["nic"], f"{p['speed_gbps']:g}G", p["description"]]
                       for p in ports.values()])
    out += ["", "## Addressing", ""]
    rows = []
    for host in cluster.hosts:
        for nic in host.nics:
            rows.append([host.name, host.role, str(host.mgmt), nic.name, str(nic.address), str(nic.mtu),
                         f"{nic.switch} {nic.port or '?'}"])
        if not host.nics:
            rows.append([host.name, host.role, str(host.mgmt), "-", "-", "-", "-"])
    out += _table(["host", "role", "mgmt", "nic", "address", "mtu", "cabled to"], rows)
    return "\n".join(out) + "\n"
