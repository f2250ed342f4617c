"""What a site is made of: the bill of materials (the papers' table, docs/architecture.md) and the cabling list."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from racfg.inventory.cluster import Cluster
from racfg.policy.budget import array_gbytes

# Cables the RA used (seed 000, tables 1 and 2), by fabric.
CABLE_TYPES = {
    "ethernet": "100G QSFP28 copper (e.g. MCP1600-C003)",
    "infiniband": "EDR QSFP copper (e.g. MCP1600-E003)",
}


@dataclass(frozen=True)
class BomRow:
    part: str
    model: str
    qty: int
    notes: str


@dataclass(frozen=True)
class Cable:
    switch: str
    port: str
    host: str
    nic: str
    address: str
    speed_gbps: float


def bill_of_materials(cluster: Cluster) -> list[BomRow]:
    """Servers, switches and cables by count, like the papers' tables 1 and 2."""
    rows: list[BomRow] = []
    for role, part in (("dgx", "compute"), ("storage", "storage")):
        models = Counter((h.model or "unspecified") for h in cluster.role(role))
        for model, qty in sorted(models.items()):
            hosts = [h for h in cluster.role(role) if (h.model or "unspecified") == model]
            links = Counter(len(h.nics) for h in hosts)
            link_text = ", ".join(f"{n}x {cluster.fabric.speed_gbps:g}G" for n in sorted(links))
            if role == "dgx":
                gpus = Counter(h.gpus for h in hosts)
                kinds = sorted({h.gpu_model for h in hosts if h.gpu_model})
                kind = f"x {'/'.join(kinds)}" if kinds else ""
                notes = f"{'/'.join(str(g) for g in sorted(gpus))}{kind} GPUs each; data links {link_text}"
            else:
                drives = Counter(len(h.drives) for h in hosts)
                notes = f"{'/'.join(str(d) for d in sorted(drives))} NVMe each; data links {link_text}"
            rows.append(BomRow(part, model, qty, notes))
    array = cluster.inventory.array
    if array is not None:
        gbytes = array_gbytes(array)
        reads = array.read_percent
        mix = f" at {reads}/{100 - reads} read/write" if reads is not None else ""
        rate = f"{gbytes / array.count:g} GB/s mixed I/O{mix} each; " if gbytes else ""
        rows.append(BomRow("storage array", array.model, array.count,
                           f"{rate}{array.protocol.upper()} {array.server}:{array.export} on {array.mount_point}"))
    roles = cluster.topology.roles
    switches = Counter((roles.get(s.name), s.model.name, s.platform, s.model.ports) for s in cluster.switches.values())
    for (role, model, platform, ports), qty in sorted(switches.items(), key=lambda kv: (str(kv[0][0]), kv[0][1:])):
        rows.append(BomRow(role or "switch", model, qty, f"{ports} ports, {platform}"))
    cables = sum(1 for h in cluster.hosts for n in h.nics if n.switch in cluster.switches)
    rows.append(BomRow("cables", CABLE_TYPES[cluster.fabric.type], cables, "one per data link"))
    if cluster.topology.isls:
        isls = Counter(i.speed_gbps for i in cluster.topology.isls)
        for speed, qty in sorted(isls.items()):
            rows.append(BomRow("ISL cables", CABLE_TYPES[cluster.fabric.type], qty,
                               f"leaf-spine links, {speed:g}G (mind the length between racks: optics past 5 m)"))
    return rows


def cabling(cluster: Cluster) -> list[Cable]:
    """Every cable, grouped by switch and in port order: the topology summary."""
    order = {name: i for i, name in enumerate(cluster.switches)}
    cables = [
        Cable(n.switch, n.port or "?", h.name, n.name, str(n.address), n.speed_gbps)
        for h in cluster.hosts
        for n in h.nics
    ]
    index = {(h.name, n.name): (n.port_index or 0, n.lane or 0) for h in cluster.hosts for n in h.nics}
    cables.sort(key=lambda c: (order.get(c.switch, len(order)), c.switch, index[(c.host, c.nic)]))
    return cables
