"""The two-tier part of the fabric document: tiers, the ISL map with its addresses, the ASN plan and
each leaf's subnets (a routed Ethernet leaf-spine), or the fat tree's cabling plan (InfiniBand, where
the subnet manager routes and there are no addresses or ASNs)."""

from __future__ import annotations

from racfg.console import markdown_table
from racfg.inventory.cluster import Cluster
from racfg.policy import leaf_ratios


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return markdown_table(header, rows).split("\n")


def tiers_markdown(cluster: Cluster) -> list[str]:
    """Markdown lines for a leaf-spine site; none for a single-tier one."""
    topo = cluster.topology
    if topo.design != "leaf-spine":
        return []
    ratios = {leaf: ratio for leaf, ratio, _, _ in leaf_ratios(cluster)}
    routed = topo.routed
    out = ["", "## Tiers", "",
           f"Leaf-spine ({'routed: eBGP, ECMP over every spine' if routed else 'fat tree routed by the subnet manager'}"
           f"), ISL MTU {cluster.fabric.effective_isl_mtu}, oversubscription at most "
           f"{cluster.fabric.max_oversubscription:g}:1.", ""]
    rows = []
    for name in topo.roles:
        sw = cluster.switches[name]
        links = topo.links_of(name)
        peers = sorted({i.spine if i.leaf == name else i.leaf for i in links})
        ratio = f"{ratios[name]:.2f}:1" if name in ratios else "-"
        rows.append([topo.roles[name], name, sw.model.name, str(topo.asns.get(name, "-")), str(len(links)),
                     " ".join(peers), ratio])
    out += _table(["tier", "switch", "model", "ASN", "ISLs", "linked to", "oversubscription"], rows)
    title = "Inter-switch links" if routed else "Fat tree cabling plan"
    out += ["", f"## {title}", ""]
    out += _table(["leaf", "leaf port", "leaf address", "spine", "spine port", "spine address", "speed", "mtu"],
                  [[i.leaf, i.leaf_port, str(i.leaf_address or "-"), i.spine, i.spine_port,
                    str(i.spine_address or "-"), f"{i.speed_gbps:g}G", str(i.mtu)] for i in topo.isls])
    if not routed:
        return out
    spines = topo.of_role("spine")
    out += ["", "## ASN plan", "", f"Spines share ASN {topo.asns[spines[0]] if spines else '-'}; each leaf has "
            "its own and peers with every spine over each ISL.", ""]
    out += _table(["switch", "tier", "ASN", "router id"],
                  [[n, topo.roles[n], str(topo.asns[n]), topo.router_ids[n]] for n in topo.roles])
    out += ["", "## Leaf subnets", "", "Each leaf is the gateway of its hosts' subnets; hosts route the data "
            f"network(s) {', '.join(topo.data_networks(list(cluster.fabric.data_subnets)))} through it.", ""]
    out += _table(["leaf", "subnet", "gateway", "host ports"],
                  [[leaf, str(s.network), str(s.gateway), str(len(s.ports))]
                   for leaf, subnets in topo.subnets.items() for s in subnets])
    return out
