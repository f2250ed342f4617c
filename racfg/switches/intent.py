"""Intended switch state: a view of one switch of the intended site (racfg.intent: ``intended_for``,
``intended_switch``), or read from the rendered Ansible vars (``intended_from_vars``: what the
racfg_switch module receives, render's view of the same site). Both paths produce the same
IntendedSwitch (a test holds that for every example), so ``racfg validate``/``drift``/``deploy``'s
checks and the playbook agree on what a switch should look like."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from racfg.catalog import SWITCH_MODELS, SwitchModel, port_by_index
from racfg.errors import UsageError

if TYPE_CHECKING:
    from racfg.intent import SiteIntent
    from racfg.inventory.cluster import Cluster


@dataclass(frozen=True)
class IntendedPort:
    port: str  # canonical
    description: str
    mtu: int
    speed_gbps: float | None
    admin_up: bool = True


@dataclass(frozen=True)
class RoutedPort:
    """An inter-switch link seen from this switch: a routed port (no switchport) with its /31."""

    port: str  # canonical
    address: str  # "10.0.0.1/31"


@dataclass(frozen=True)
class HostVlan:
    """A leaf's host subnet: a VLAN whose interface is the hosts' gateway, the host ports in it."""

    vlan: int
    gateway: str  # "10.1.0.1/24": the VLAN interface's address
    subnet: str  # "10.1.0.0/24": advertised in BGP
    ports: tuple[str, ...]
    mtu: int  # the host ports' MTU: a routed VLAN interface must carry the hosts' frames


@dataclass(frozen=True)
class IntendedRouting:
    """What a leaf or spine routes (from ``racfg_switch_routing``): the drivers turn it into config."""

    asn: int
    router_id: str
    routed_ports: tuple[RoutedPort, ...]
    vlans: tuple[HostVlan, ...]
    neighbors: tuple[tuple[str, int], ...]  # (address, remote ASN)
    maximum_paths: int


# The host subnets' VLAN ids: the intent names subnets, not VLANs, so racfg numbers them per leaf
# from here (the first subnet is VLAN 100); a VLAN id is local to its leaf, the subnets are not.
HOST_VLAN_BASE = 100


@dataclass(frozen=True)
class IntendedSwitch:
    """What racfg enforces on one switch: cabled ports, global PFC/RoCE off, unused ports policy."""

    name: str
    platform: str
    model: str
    ports_count: int
    ports_per_slot: int
    ports: dict[str, IntendedPort]
    shutdown_unused: bool = False
    pfc: bool = False
    roce: bool = False
    os_version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    routing: IntendedRouting | None = None  # leaf-spine: routed ISLs, host VLAN interfaces, BGP

    def panel_ports(self) -> list[str]:
        """Every front-panel port (canonical), cabled or not."""
        model = SwitchModel(self.model, self.platform, self.ports_count, 100.0, self.ports_per_slot)
        return [port_by_index(self.platform, i, model) for i in range(1, self.ports_count + 1)]

    def managed_ports(self, observed: set[str] | None = None) -> list[str]:
        """Ports racfg touches: the cabled ones, plus unused ones when they are to be shut."""
        if not self.shutdown_unused:
            return list(self.ports)
        ports = list(self.ports)
        for port in self.panel_ports() if observed is None else sorted(observed):
            if port not in self.ports:
                ports.append(port)
        return ports

    def wanted(self, port: str) -> IntendedPort | None:
        """The intended state of any port: cabled ports as inventoried, unused ones shut (or None)."""
        if port in self.ports:
            return self.ports[port]
        if self.shutdown_unused:
            return IntendedPort(port, "", 0, None, admin_up=False)
        return None


def routing_from_vars(routing: dict[str, Any], ports: dict[str, IntendedPort]) -> IntendedRouting:
    """``racfg_switch_routing`` as the drivers need it (host VLANs numbered from HOST_VLAN_BASE)."""
    return IntendedRouting(
        asn=int(routing["asn"]), router_id=str(routing["router_id"]),
        routed_ports=tuple(RoutedPort(str(i["port"]), str(i["address"])) for i in routing.get("isls") or ()),
        vlans=host_vlans([(s["gateway"], s["subnet"], s.get("ports") or ()) for s in routing.get("subnets") or ()],
                         ports),
        neighbors=tuple((str(n["address"]), int(n["asn"])) for n in routing.get("neighbors") or ()),
        maximum_paths=int(routing.get("maximum_paths") or 1),
    )


def host_vlans(subnets: list[tuple[Any, Any, Any]], ports: dict[str, IntendedPort]) -> tuple[HostVlan, ...]:
    """A leaf's host subnets (gateway, subnet, ports) as VLANs numbered from HOST_VLAN_BASE, each at the
    largest MTU of its ports."""
    return tuple(
        HostVlan(vlan=HOST_VLAN_BASE + i, gateway=str(gateway), subnet=str(subnet),
                 ports=tuple(str(p) for p in members),
                 mtu=max((ports[p].mtu for p in members if p in ports), default=9000))
        for i, (gateway, subnet, members) in enumerate(subnets)
    )


def isl_port(port: str, peer: str, peer_port: str, mtu: int, speed_gbps: float | None) -> IntendedPort:
    """An ISL port as a managed port (so that ``shutdown_unused`` never shuts it): described by the
    peer switch and port, at the ISL's MTU and speed."""
    return IntendedPort(port=str(port), description=f"{peer}:{peer_port}", mtu=int(mtu),
                        speed_gbps=float(speed_gbps) if speed_gbps else None)


def isl_ports(routing: dict[str, Any]) -> dict[str, IntendedPort]:
    """The ISL ports of ``racfg_switch_routing`` as managed ports (isl_port)."""
    return {str(i["port"]): isl_port(i["port"], i["peer"], i["peer_port"], i["mtu"], i.get("speed_gbps"))
            for i in routing.get("isls") or ()}


def intended_from_vars(
    switch: dict[str, Any], ports: list[dict[str, Any]], fabric: dict[str, Any] | None = None,
    routing: dict[str, Any] | None = None,
) -> IntendedSwitch:
    """From the rendered host vars ``racfg_switch``, ``racfg_switch_ports``, ``racfg_fabric`` and, on a
    leaf-spine site, ``racfg_switch_routing``."""
    fabric = fabric or {}
    try:
        model = SWITCH_MODELS.get(switch["model"])
        per_slot = switch.get("ports_per_slot")
        if per_slot is None:
            per_slot = model.ports_per_slot if model else 0
        intended = {
            p["port"]: IntendedPort(
                port=str(p["port"]),
                description=str(p.get("description") or f"{p.get('host', '')}:{p.get('nic', '')}"),
                mtu=int(p.get("mtu") or fabric.get("switch_mtu") or 9000),
                speed_gbps=float(p["speed_gbps"]) if p.get("speed_gbps") else None,
                admin_up=bool(p.get("admin_up", True)),
            )
            for p in ports
        }
        if routing:
            intended.update(isl_ports(routing))
        return IntendedSwitch(
            name=str(switch["name"]),
            platform=str(switch["platform"]),
            model=str(switch["model"]),
            ports_count=int(switch.get("ports_count") or (model.ports if model else len(intended))),
            ports_per_slot=int(per_slot or 0),
            ports=intended,
            shutdown_unused=bool(switch.get("shutdown_unused", False)),
            pfc=bool(fabric.get("pfc", False)),
            roce=bool(fabric.get("roce", False)),
            os_version=switch.get("os_version"),
            routing=routing_from_vars(routing, intended) if routing else None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"switch vars are incomplete or invalid: {exc}") from exc


def intended_for(cluster: Cluster, switch_name: str) -> IntendedSwitch:
    """Intended state of one switch of a loaded Cluster (validate, drift, deploy's checks, the ANTA
    catalog), from its intended site."""
    from racfg.intent import site_intent  # here: the racfg_switch module, which reads only vars, never loads it

    if switch_name not in cluster.switches:
        raise UsageError(f"no switch named {switch_name!r} in {cluster.display}")
    return intended_switch(site_intent(cluster), switch_name)


def intended_switch(site: SiteIntent, name: str) -> IntendedSwitch:
    """One switch of the intended site as the switch layer enforces it: its cabled ports (at the switch
    MTU, described host:nic), its ISL ports, the fabric's PFC/RoCE and, where it routes, its routing."""
    switch = site.switches[name]
    ports = {p.port: IntendedPort(port=p.port, description=p.description, mtu=int(p.mtu or site.switch_mtu or 9000),
                                  speed_gbps=float(p.speed_gbps) if p.speed_gbps else None)
             for p in switch.ports}
    routing = switch.routing
    if routing is not None:
        ports.update({i.port: isl_port(i.port, i.peer, i.peer_port, i.mtu, i.speed_gbps) for i in routing.isls})
    known = SWITCH_MODELS.get(switch.model.name)
    return IntendedSwitch(
        name=switch.name, platform=switch.platform, model=switch.model.name,
        ports_count=int(switch.model.ports or (known.ports if known else len(ports))),
        ports_per_slot=int(switch.model.ports_per_slot or 0), ports=ports,
        shutdown_unused=bool(switch.shutdown_unused), pfc=site.pfc, roce=site.roce, os_version=switch.os_version,
        routing=None if routing is None else IntendedRouting(
            asn=routing.asn, router_id=routing.router_id,
            routed_ports=tuple(RoutedPort(i.port, i.address) for i in routing.isls),
            vlans=host_vlans([(s.gateway, s.network, s.ports) for s in routing.subnets], ports),
            neighbors=tuple((str(i.peer_address), i.peer_asn) for i in routing.isls),
            maximum_paths=int(routing.maximum_paths or 1)),
    )
