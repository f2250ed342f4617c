"""The routing a leaf-spine site renders, as the roles read it: each switch's ``racfg_switch_routing``
(its ISLs, subnets and BGP peers) and each host's ``racfg_routing`` (its gateway and routes).

A view: the routing itself is the intended site's (racfg.intent: built once from the inventory, where
the rules for gateways, source routing and ECMP live); this writes it as the variables' plain data.
The roles read this as data; nothing here runs anything.
"""

from __future__ import annotations

from typing import Any

from racfg.intent import HostRouting, IslEnd, SwitchRouting, site_intent
from racfg.inventory.cluster import Cluster, ClusterHost


def host_routing(cluster: Cluster, host: ClusterHost) -> dict[str, Any] | None:
    """``racfg_routing`` of one host on a routed leaf-spine site, else None."""
    routing = site_intent(cluster).hosts.get(host.name)
    return routing_vars(routing) if routing is not None else None


def routing_vars(routing: HostRouting) -> dict[str, Any]:
    """A host's routing as ``racfg_routing``."""
    return {
        "gateway": routing.gateway,
        "source_routing": routing.source_routing,
        "routes": [{"nic": r.nic, "leaf": r.leaf, "to": list(r.to), "via": r.via, "source": r.source,
                    "subnet": r.subnet, "metric": r.metric, "table": r.table} for r in routing.routes],
    }


def switch_routing(cluster: Cluster, name: str) -> dict[str, Any] | None:
    """``racfg_switch_routing`` of one switch; None where it does not route (single, InfiniBand)."""
    routing = site_intent(cluster).routing_of(name)
    return switch_routing_vars(routing) if routing is not None else None


def switch_routing_vars(routing: SwitchRouting) -> dict[str, Any]:
    """A switch's routing as ``racfg_switch_routing``: what the switch module turns into routed ISLs,
    the host subnets' VLAN interfaces and BGP, and what the lab configures its routing daemon from."""
    return {
        "role": routing.role,
        "asn": routing.asn,
        "router_id": routing.router_id,
        "spine_asn": routing.spine_asn,
        "isls": [_isl_vars(i) for i in routing.isls],
        "subnets": [{"subnet": str(s.network), "gateway": str(s.gateway), "ports": list(s.ports)}
                    for s in routing.subnets],
        "neighbors": [{"address": i.peer_address, "asn": i.peer_asn, "peer": i.peer, "port": i.port}
                      for i in routing.isls],
        "maximum_paths": routing.maximum_paths,
    }


def _isl_vars(end: IslEnd) -> dict[str, Any]:
    return {"port": end.port, "address": end.address, "peer": end.peer, "peer_port": end.peer_port,
            "peer_address": end.peer_address, "peer_asn": end.peer_asn, "mtu": end.mtu,
            "speed_gbps": end.speed_gbps}
