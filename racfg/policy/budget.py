"""The bandwidth budget: can the storage keep every GPU server fed?

The RA's promise is that storage saturates the GPU servers, so training throughput scales
linearly with their number. This module turns that promise into arithmetic on the inventory:
what the GPU servers will read (a workload profile from the papers, per 8-GPU server) against
what the storage nodes deliver (per-node throughput from the papers, capped by their links).
"""

from __future__ import annotations

from dataclasses import dataclass

from racfg.catalog import ARRAY_MODELS
from racfg.inventory import model as m
from racfg.inventory.cluster import Cluster, ClusterHost

# Storage read rate one 8-GPU server needs while training (docs/architecture.md, seed 002).
WORKLOAD_GBYTES_PER_8_GPUS = {"resnet50": 0.8, "lenet": 2.5}


def array_gbytes(array: m.StorageArray) -> float | None:
    """Mixed-I/O throughput of all the declared arrays: the inventory's figure, else the catalog's."""
    known = ARRAY_MODELS.get(array.model)
    per_array = array.mixed_gbytes_per_s or (known.mixed_gbytes_per_s if known else None)
    return per_array * array.count if per_array is not None else None


def _link_gbytes(host: ClusterHost, efficiency: float) -> float:
    return sum(nic.speed_gbps for nic in host.nics) / 8.0 * efficiency


@dataclass(frozen=True)
class SpineTier:
    """The storage traffic that crosses the spines of a leaf-spine site (GB/s): clients read from every
    storage node evenly, so what a client on leaf L reads from nodes on other leaves leaves L through
    its uplinks, and what a node on L serves to other leaves' clients leaves through them too."""

    cross_share: float  # share of all storage reads that cross the spines
    crossing: float  # GB/s of the demand that crosses them
    capacity: float  # GB/s of storage reads the site delivers before the fullest leaf's uplinks are full
    limiting_leaf: str | None  # that leaf
    uplinks: float  # its usable uplink bandwidth (GB/s, each way)

    @property
    def capacity_crossing(self) -> float:
        """What the spines carry at that point (GB/s crossing them)."""
        return self.capacity * self.cross_share

    def as_dict(self) -> dict[str, object]:
        bounded = self.limiting_leaf is not None  # nothing crosses: the spines bound nothing
        return {"cross_share": round(self.cross_share, 3), "crossing_gbytes_per_s": round(self.crossing, 3),
                "capacity_gbytes_per_s": round(self.capacity, 3) if bounded else None,
                "capacity_crossing_gbytes_per_s": round(self.capacity_crossing, 3) if bounded else None,
                "limiting_leaf": self.limiting_leaf, "leaf_uplinks_gbytes_per_s": round(self.uplinks, 3)}


@dataclass(frozen=True)
class BandwidthBudget:
    """Supply and demand of storage bandwidth, in GB/s."""

    workload: str
    gpu_servers: int
    demand_per_server: float  # what one GPU server reads (GB/s)
    client_link: float  # usable link bandwidth of the slowest GPU server (GB/s)
    storage_nodes: int
    supply_nodes: float  # what the storage nodes can serve
    supply_links: float  # what their links can carry
    demand: float
    supply_iops: float = 0.0  # 4 KiB random reads the storage nodes serve (0: an array, not sized in IOPS)
    array: str | None = None  # the external array feeding the GPU servers, when one is declared
    array_gbytes_per_s: float = 0.0  # its mixed-I/O throughput (all of it)
    training_share: float = 1.0  # the share of it given to training
    spine: SpineTier | None = None  # leaf-spine sites: the tier between the leaves
    cut_off: int = 0  # GPU servers that share no switch island with some storage node

    @property
    def supply(self) -> float:
        if self.array is not None:
            return self.array_gbytes_per_s * self.training_share
        caps = [self.supply_nodes, self.supply_links] + ([self.spine.capacity] if self.spine else [])
        return min(caps)

    @property
    def limiting_tier(self) -> str | None:
        """The tier that limits the storage reads first: client links, storage links, storage nodes, or a
        leaf's uplinks (None for an array, which is sized by its own throughput)."""
        if self.array is not None or not self.gpu_servers or not self.storage_nodes:
            return None
        tiers = {"client links": self.client_link * self.gpu_servers, "storage links": self.supply_links,
                 "storage nodes": self.supply_nodes}
        if self.spine is not None and self.spine.limiting_leaf:
            tiers[f"uplinks of leaf {self.spine.limiting_leaf}"] = self.spine.capacity
        return min(tiers, key=lambda name: tiers[name])

    @property
    def headroom(self) -> float:
        """Spare supply as a fraction of demand: 0.25 = 25% more than needed; < 0 = short."""
        return self.supply / self.demand - 1.0 if self.demand > 0 else float("inf")

    @property
    def fed(self) -> bool:
        enough = self.servers_fed >= self.gpu_servers if self.array is not None else self.supply >= self.demand
        return enough and self.client_link >= self.demand_per_server and not self.cut_off

    @property
    def servers_fed(self) -> int:
        """How many such GPU servers this storage keeps saturated."""
        return self.servers_for(self.demand_per_server)

    def servers_for(self, per_server: float) -> int:
        """GPU servers needing ``per_server`` GB/s each that the supply feeds. Storage nodes: whole servers
        fully fed (floor). An array is sized as its vendor's talk sizes it, to the nearest server: the
        per-server rates are approximate (~0.8 GB/s), and 7.05 / 0.8 = 8.8 is the talk's "nine"."""
        if per_server <= 0:
            return 0
        ratio = self.supply / per_server
        return int(ratio + 0.5) if self.array is not None else int(ratio)

    def servers_by_workload(self, gpus: int = 8) -> dict[str, int]:
        """The sizing table of seed 002: how many ``gpus``-GPU servers each known workload can run."""
        return {name: self.servers_for(rate * gpus / 8.0) for name, rate in WORKLOAD_GBYTES_PER_8_GPUS.items()}

    def as_dict(self) -> dict[str, object]:
        return {
            "workload": self.workload,
            "gpu_servers": self.gpu_servers,
            "demand_per_server_gbytes_per_s": round(self.demand_per_server, 3),
            "client_link_gbytes_per_s": round(self.client_link, 3),
            "storage_nodes": self.storage_nodes,
            "supply_nodes_gbytes_per_s": round(self.supply_nodes, 3),
            "supply_links_gbytes_per_s": round(self.supply_links, 3),
            "supply_gbytes_per_s": round(self.supply, 3),
            "demand_gbytes_per_s": round(self.demand, 3),
            "headroom": round(self.headroom, 3) if self.demand > 0 else None,
            "servers_fed": self.servers_fed,
            "servers_fed_by_workload": self.servers_by_workload(),
            "supply_iops": round(self.supply_iops),
            "array": self.array,
            "array_gbytes_per_s": round(self.array_gbytes_per_s, 3),
            "training_share": self.training_share,
            "fed": self.fed,
            "limiting_tier": self.limiting_tier,
            "spine_tier": self.spine.as_dict() if self.spine else None,
            "cut_off_gpu_servers": self.cut_off,
        }


def bandwidth_budget(cluster: Cluster) -> BandwidthBudget:
    """Compute the budget from the inventory's hosts and its acceptance.budget settings."""
    settings = cluster.inventory.acceptance.budget
    dgx = cluster.role("dgx")
    storage = cluster.role("storage")
    if settings.workload == "custom":
        assert settings.client_gbytes_per_s is not None
        per_server = [settings.client_gbytes_per_s for _ in dgx]
    else:
        rate = WORKLOAD_GBYTES_PER_8_GPUS[settings.workload]
        per_server = [rate * (host.gpus or 8) / 8.0 for host in dgx]
    demand = sum(per_server)
    links = [_link_gbytes(h, settings.nic_efficiency) for h in dgx]
    array = cluster.inventory.array
    if array is not None and array.clients == "dgx":
        return BandwidthBudget(
            workload=settings.workload, gpu_servers=len(dgx), demand_per_server=max(per_server, default=0.0),
            client_link=min(links, default=0.0), storage_nodes=0, supply_nodes=0.0, supply_links=0.0,
            demand=demand, array=f"{array.count}x {array.model}" if array.count > 1 else array.model,
            array_gbytes_per_s=array_gbytes(array) or 0.0, training_share=array.training_share,
        )
    _, _, cut = cluster.topology.cut_off(list(cluster.switches), cluster.hosts)
    return BandwidthBudget(
        workload=settings.workload,
        gpu_servers=len(dgx),
        demand_per_server=max(per_server, default=0.0),
        client_link=min(links, default=0.0),
        storage_nodes=len(storage),
        supply_nodes=len(storage) * settings.storage_node_gbytes_per_s,
        supply_links=sum(_link_gbytes(h, settings.nic_efficiency) for h in storage),
        demand=demand,
        supply_iops=len(storage) * settings.storage_node_iops,
        spine=spine_tier(cluster, demand, settings.nic_efficiency),
        cut_off=len(cut),
    )


def _leaf_shares(cluster: Cluster, role: str) -> dict[str, float]:
    """Share of a role's traffic each leaf carries: hosts count evenly, a host's share splits over its NICs
    by line rate."""
    hosts = cluster.role(role)
    shares: dict[str, float] = {}
    for host in hosts:
        total = sum(n.speed_gbps for n in host.nics) or 1.0
        for nic in host.nics:
            if cluster.topology.roles.get(nic.switch) == "leaf":
                shares[nic.switch] = shares.get(nic.switch, 0.0) + nic.speed_gbps / total / len(hosts)
    return shares


def spine_tier(cluster: Cluster, demand: float, efficiency: float) -> SpineTier | None:
    """The spine tier of a leaf-spine site (None elsewhere): what of the demand crosses it, and how much
    storage traffic the site carries before the first leaf's uplinks are full (each way)."""
    topo = cluster.topology
    if topo.design != "leaf-spine" or not cluster.role("dgx") or not cluster.role("storage"):
        return None
    clients, servers = _leaf_shares(cluster, "dgx"), _leaf_shares(cluster, "storage")
    uplinks: dict[str, float] = {}
    for isl in topo.isls:
        uplinks[isl.leaf] = uplinks.get(isl.leaf, 0.0) + isl.speed_gbps / 8.0 * efficiency
    cross = 0.0
    capacity, limiting = float("inf"), None
    for leaf in topo.of_role("leaf"):
        inbound = clients.get(leaf, 0.0) * (1.0 - servers.get(leaf, 0.0))
        outbound = servers.get(leaf, 0.0) * (1.0 - clients.get(leaf, 0.0))
        cross += inbound
        heavier = max(inbound, outbound)
        if heavier > 0 and uplinks.get(leaf, 0.0) / heavier < capacity:
            capacity, limiting = uplinks.get(leaf, 0.0) / heavier, leaf
    return SpineTier(cross, demand * cross, capacity if limiting else float("inf"), limiting,
                     uplinks.get(limiting, 0.0) if limiting else 0.0)
