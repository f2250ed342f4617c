"""Build the intended site (racfg.intent.site_model) from a loaded Cluster, once per Cluster.

The rules here moved from where each reader once derived them: a switch's routing from
``Topology.switch_routing`` (racfg.inventory.topology), a host's routes from ``host_routing``
(racfg.render.routing), a switch's cabled ports from ``switch_ports`` (racfg.render.ansible_inventory),
what a leaf's hosts can send from validate's ``intent_from_cluster``.

Hosts reach the rest of the data fabric through the leaf their NIC is cabled to: one route per NIC to
the site's data networks via that leaf's gateway. A host with NICs in several leaf subnets (a storage
node's second port on another leaf, a DGX's rails) also gets, per NIC, a routing table of its own and a
rule sending replies from that NIC's address through it (source routing), so a reply leaves by the NIC
its request came in on.
"""

from __future__ import annotations

import weakref

from racfg.intent.site_model import CabledPort, HostRoute, HostRouting, IslEnd, SiteIntent, SwitchIntent, SwitchRouting
from racfg.inventory.cluster import Cluster, ClusterHost, ClusterSwitch
from racfg.inventory.topology import Isl, Topology

FIRST_TABLE = 101  # source-routing tables: 101, 102 ... per NIC, clear of the kernel's 253-255
FIRST_METRIC = 100  # main-table routes: the first NIC's route is preferred, the others stand by

_BUILT: dict[int, SiteIntent] = {}  # id(cluster) -> its intent, dropped when the cluster is


def site_intent(cluster: Cluster) -> SiteIntent:
    """The intended site of a loaded Cluster, built on first use and shared by every reader after."""
    found = _BUILT.get(id(cluster))
    if found is None:
        found = _BUILT[id(cluster)] = build_site_intent(cluster)
        weakref.finalize(cluster, _BUILT.pop, id(cluster), None)
    return found


def build_site_intent(cluster: Cluster) -> SiteIntent:
    """The intended site, built afresh (``site_intent`` caches it)."""
    topo = cluster.topology
    networks = tuple(topo.data_networks(list(cluster.fabric.data_subnets))) if topo.routed else ()
    host_gbps: dict[str, float] = {}
    for host in cluster.hosts:
        for nic in host.nics:
            host_gbps[nic.switch] = host_gbps.get(nic.switch, 0.0) + nic.speed_gbps
    return SiteIntent(
        name=cluster.name,
        topology=topo,
        switches={name: _switch(cluster, sw) for name, sw in cluster.switches.items()},
        hosts={h.name: _host_routing(topo, networks, h) for h in cluster.hosts},
        host_gbps=host_gbps,
        max_oversubscription=cluster.fabric.max_oversubscription,
        pfc=cluster.fabric.pfc,
        roce=cluster.fabric.roce,
        switch_mtu=cluster.fabric.effective_switch_mtu,
        data_networks=networks,
    )


def _switch(cluster: Cluster, switch: ClusterSwitch) -> SwitchIntent:
    spec = switch.spec
    return SwitchIntent(name=switch.name, platform=switch.platform, model=switch.model,
                        role=cluster.topology.roles.get(switch.name), ports=_cabled_ports(cluster, switch.name),
                        shutdown_unused=spec.shutdown_unused, os_version=spec.os_version,
                        routing=_switch_routing(cluster.topology, switch.name))


def _cabled_ports(cluster: Cluster, name: str) -> tuple[CabledPort, ...]:
    """The ports of switch ``name`` hosts are cabled to, in port order (lanes of a split port in order)."""
    rows = [((nic.port_index or 0, nic.lane or 0),
             CabledPort(nic.port, host.name, nic.name, cluster.fabric.effective_switch_mtu, nic.speed_gbps))
            for host in cluster.hosts for nic in host.nics if nic.switch == name and nic.port is not None]
    rows.sort(key=lambda row: row[0])
    return tuple(port for _, port in rows)


def _switch_routing(topo: Topology, name: str) -> SwitchRouting | None:
    """What one switch routes; None where it does not (single, InfiniBand)."""
    if not topo.routed or name not in topo.roles:
        return None
    role = topo.roles[name]
    isls = tuple(_isl_end(topo, isl, role) for isl in topo.links_of(name))
    per_peer = [sum(1 for i in isls if i.peer == p) for p in {i.peer for i in isls}]
    spines = topo.of_role("spine")
    return SwitchRouting(
        role=role, asn=topo.asns[name], router_id=topo.router_ids[name],
        spine_asn=topo.asns[spines[0]] if spines else None, isls=isls, subnets=tuple(topo.subnets.get(name, [])),
        # ECMP: a leaf spreads over every uplink, a spine over its links to one leaf
        maximum_paths=max(len(isls) if role == "leaf" else max(per_peer, default=1), 1),
    )


def _isl_end(topo: Topology, isl: Isl, role: str) -> IslEnd:
    """One ISL seen from its ``role`` end: local port and address, the peer's name, port, address, ASN."""
    if role == "leaf":
        port, address, peer, peer_port, peer_address = (isl.leaf_port, isl.leaf_address, isl.spine,
                                                        isl.spine_port, isl.spine_address)
    else:
        port, address, peer, peer_port, peer_address = (isl.spine_port, isl.spine_address, isl.leaf,
                                                        isl.leaf_port, isl.leaf_address)
    return IslEnd(port=port, address=str(address), peer=peer, peer_port=peer_port,
                  peer_address=str(peer_address.ip) if peer_address else None, peer_asn=topo.asns[peer],
                  mtu=isl.mtu, speed_gbps=isl.speed_gbps)


def _host_routing(topo: Topology, networks: tuple[str, ...], host: ClusterHost) -> HostRouting | None:
    """A host's gateway and routes on a routed leaf-spine site, else None."""
    if not topo.routed:
        return None
    routed = [(nic, topo.gateway_for(nic.address)) for nic in host.nics]
    source_routing = len({str(nic.address.network) for nic, _ in routed}) > 1
    routes = []
    for k, (nic, found) in enumerate(routed):
        if found is None:
            continue
        leaf, subnet = found
        routes.append(HostRoute(nic=nic.name, leaf=leaf, to=networks, via=str(subnet.gateway.ip),
                                source=str(nic.address.ip), subnet=str(subnet.network), metric=FIRST_METRIC + k,
                                table=FIRST_TABLE + k if source_routing else None))
    return HostRouting(gateway=routes[0].via if routes else None, source_routing=source_routing,
                       routes=tuple(routes))
