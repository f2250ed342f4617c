"""The fabric-topology rules: the switch graph joins every GPU server to every storage node, and a
leaf-spine fabric is a balanced, non-blocking, routed Clos (RFC 7938) without lossless features.

They register in the one rule registry (racfg.policy.rules.rule) from their own module, because
rules.py holds the host-level rules and is long enough; racfg.policy imports this module after
rules, so the import runs one way (topology_rules -> rules) and every entry point sees every rule.
What cannot be drawn at all (a spine with hosts, an ASN used twice ...) never reaches here: the
loader refuses it (racfg.inventory.leafspine).
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Iterator

from racfg.catalog import MAX_PORT_MTU
from racfg.inventory.cluster import Cluster
from racfg.policy.findings import Finding
from racfg.policy.rules import rule


@rule("reachability", "Every GPU server reaches every storage node through the switch graph (no islands)")
def reachability(c: Cluster) -> Iterator[Finding]:
    parts, reach, cut = c.topology.cut_off(list(c.switches), c.hosts)
    if not cut:
        return
    shown = []
    for k, names in enumerate(parts):
        roles = Counter(h.role for h in c.hosts if k in reach[h.name])
        held = ", ".join(f"{n} {'GPU server' if r == 'dgx' else 'storage node'}(s)" for r, n in sorted(roles.items()))
        shown.append(f"[{' '.join(names)}: {held or 'no hosts'}]")
    loc = ("links",) if c.inventory.links else ("switches",)
    yield Finding("error", "reachability", loc,
                  f"{len(cut)} GPU server(s) cannot reach every storage node: the switches form {len(parts)} "
                  f"islands {' '.join(shown)}",
                  "link the switches (fabric.design: leaf-spine with links), or cable the hosts to one island",
                  subject=cut[0].name)


@rule("leaf-spine-mesh", "Every leaf links to every spine, with the same number of links (a balanced Clos)")
def leaf_spine_mesh(c: Cluster) -> Iterator[Finding]:
    topo = c.topology
    if topo.design != "leaf-spine":
        return
    pairs = Counter((i.leaf, i.spine) for i in topo.isls)
    spines = topo.of_role("spine")
    usual = Counter(pairs.values()).most_common(1)[0][0] if pairs else 0
    for leaf in topo.of_role("leaf"):
        sw = c.switches[leaf]
        missing = [s for s in spines if (leaf, s) not in pairs]
        if missing:
            yield Finding("error", "leaf-spine-mesh", sw.src, f"leaf {leaf} has no link to {', '.join(missing)}",
                          "every leaf links to every spine; add it to the links entry of those spines",
                          subject=leaf)
        odd = [f"{s}: {pairs[(leaf, s)]}" for s in spines if (leaf, s) in pairs and pairs[(leaf, s)] != usual]
        if odd:
            yield Finding("error", "leaf-spine-mesh", sw.src,
                          f"leaf {leaf} has an unequal number of links per spine ({', '.join(odd)})",
                          "ECMP spreads flows evenly over the spines: give every leaf-spine pair the same count",
                          subject=leaf, expected=str(usual))


@rule("isl-mtu", "The inter-switch links carry the hosts' frames (ISL MTU >= host MTU; RA: 9216 against 9000)")
def isl_mtu(c: Cluster) -> Iterator[Finding]:
    if not c.topology.isls:
        return
    f = c.fabric
    need = f.effective_ib_mtu if f.type == "infiniband" else max(
        [f.effective_host_mtu, *(n.mtu for h in c.hosts for n in h.nics)])
    if f.effective_isl_mtu < need:
        yield Finding("error", "isl-mtu", ("fabric", "isl_mtu"),
                      "inter-switch link MTU below the hosts' MTU: large frames between leaves would be dropped",
                      "set isl_mtu: 9216 (or remove it for the default)", expected=f">= {need}",
                      actual=str(f.effective_isl_mtu))
    on_isls = {name for isl in c.topology.isls for name in (isl.leaf, isl.spine)}
    too_big = sorted(name for name in on_isls
                     if f.effective_isl_mtu > MAX_PORT_MTU.get(c.switches[name].platform, f.effective_isl_mtu))
    if too_big:
        limit = min(MAX_PORT_MTU[c.switches[name].platform] for name in too_big)
        yield Finding("error", "isl-mtu", ("fabric", "isl_mtu"),
                      f"inter-switch link MTU above what {', '.join(too_big)} accept: the switch refuses the config",
                      f"set isl_mtu: {limit}", expected=f"<= {limit}", actual=str(f.effective_isl_mtu))


@rule("fabric-addressing", "ISL /31s, gateways and host addresses are unique; ISLs lie outside the data and "
      "management subnets")
def fabric_addressing(c: Cluster) -> Iterator[Finding]:
    topo = c.topology
    if not topo.routed:
        return
    hosts = {n.address.ip: f"{h.name}:{n.name}" for h in c.hosts for n in h.nics}
    for leaf, subnets in topo.subnets.items():
        for subnet in subnets:
            if subnet.gateway.ip in hosts:
                yield Finding("error", "fabric-addressing", (*c.switches[leaf].src, "gateways"),
                              f"gateway {subnet.gateway.ip} of leaf {leaf} is the address of "
                              f"{hosts[subnet.gateway.ip]}",
                              "give the leaf another gateway (gateways: [ADDRESS/PREFIX]) or move the host",
                              subject=leaf)
    data = [ipaddress.IPv4Network(s) for s in [*c.fabric.data_subnets, *filter(None, [c.fabric.mgmt_subnet])]]
    data += [s.network for subnets in topo.subnets.values() for s in subnets]
    seen: dict[ipaddress.IPv4Network, str] = {}
    reported: set[tuple[object, ...]] = set()
    for isl in topo.isls:
        assert isl.leaf_address is not None
        net = isl.leaf_address.network
        where = f"{isl.leaf} {isl.leaf_port} - {isl.spine} {isl.spine_port}"
        clash = seen.get(net) or next((str(d) for d in data if d.overlaps(net)), None)
        if clash is not None and isl.src not in reported:
            reported.add(isl.src)
            yield Finding("error", "fabric-addressing", isl.src, f"link {where}: {net} is already used by {clash}",
                          "give the links a pool of their own (pool:) or move fabric.p2p_pool")
        seen.setdefault(net, f"the link {where}")


@rule("oversubscription", "Each leaf's host-facing bandwidth over its uplink bandwidth is at most "
      "fabric.max_oversubscription (RA: 1.0, non-blocking)")
def oversubscription(c: Cluster) -> Iterator[Finding]:
    topo = c.topology
    limit = c.fabric.max_oversubscription
    for leaf, ratio, down, up in leaf_ratios(c):
        if ratio <= limit + 1e-9:
            continue
        ports = " (down/up ports on the fat tree)" if topo.fabric_type == "infiniband" else ""
        yield Finding("error", "oversubscription", c.switches[leaf].src,
                      f"leaf {leaf} is oversubscribed {ratio:.2f}:1{ports}: hosts {down:g} Gb/s, uplinks {up:g} Gb/s",
                      "add uplinks (links count), move hosts to another leaf, or raise fabric.max_oversubscription",
                      subject=leaf, expected=f"<= {limit:g}", actual=f"{ratio:.2f}")


def leaf_ratios(c: Cluster) -> list[tuple[str, float, float, float]]:
    """Per leaf: (name, oversubscription, host-facing Gb/s, uplink Gb/s); a leaf without uplinks is left out."""
    down: Counter[str] = Counter()
    for h in c.hosts:
        for n in h.nics:
            down[n.switch] += n.speed_gbps
    up: Counter[str] = Counter()
    for isl in c.topology.isls:
        up[isl.leaf] += isl.speed_gbps
    return [(leaf, down[leaf] / up[leaf], down[leaf], up[leaf]) for leaf in c.topology.of_role("leaf") if up[leaf]]


@rule("isl-no-pfc", "No priority flow control on the inter-switch links either")
def isl_no_pfc(c: Cluster) -> Iterator[Finding]:
    for g, spec in enumerate(c.inventory.links):
        if spec.pfc:
            yield Finding("error", "isl-no-pfc", ("links", g, "pfc"), "priority flow control is not part of the RA",
                          "set pfc: false on the links", expected="false", actual="true")
