"""The routing a leaf-spine site renders: each switch's intent (its ISLs, subnets and BGP peers, from
racfg.inventory.topology) and each host's gateway and routes.

Hosts reach the rest of the data fabric through the leaf their NIC is cabled to: one route per NIC to
the site's data networks via that leaf's gateway. A host with NICs in several leaf subnets (a storage
node's second port on another leaf, a DGX's rails) also gets, per NIC, a routing table of its own and a
rule sending replies from that NIC's address through it (source routing), so a reply leaves by the NIC
its request came in on. The roles read this as data; nothing here runs anything.
"""

from __future__ import annotations

from typing import Any

from racfg.inventory.cluster import Cluster, ClusterHost

FIRST_TABLE = 101  # source-routing tables: 101, 102 ... per NIC, clear of the kernel's 253-255
FIRST_METRIC = 100  # main-table routes: the first NIC's route is preferred, the others stand by


def host_routing(cluster: Cluster, host: ClusterHost) -> dict[str, Any] | None:
    """``racfg_routing`` of one host on a routed leaf-spine site, else None."""
    topo = cluster.topology
    if not topo.routed:
        return None
    networks = topo.data_networks(list(cluster.fabric.data_subnets))
    routed = [(nic, topo.gateway_for(nic.address)) for nic in host.nics]
    subnets = {str(nic.address.network) for nic, _ in routed}
    source_routing = len(subnets) > 1
    routes = []
    for k, (nic, found) in enumerate(routed):
        if found is None:
            continue
        leaf, subnet = found
        routes.append({
            "nic": nic.name,
            "leaf": leaf,
            "to": networks,
            "via": str(subnet.gateway.ip),
            "source": str(nic.address.ip),
            "subnet": str(subnet.network),  # the connected route a source-routing table also needs
            "metric": FIRST_METRIC + k,
            "table": FIRST_TABLE + k if source_routing else None,
        })
    return {
        "gateway": routes[0]["via"] if routes else None,
        "source_routing": source_routing,
        "routes": routes,
    }


def switch_routing(cluster: Cluster, name: str) -> dict[str, Any] | None:
    """``racfg_switch_routing`` of one switch (see Topology.switch_routing); None where it does not route."""
    return cluster.topology.switch_routing(name)
