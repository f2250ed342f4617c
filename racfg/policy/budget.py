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

    @property
    def supply(self) -> float:
        if self.array is not None:
            return self.array_gbytes_per_s * self.training_share
        return min(self.supply_nodes, self.supply_links)

    @property
    def headroom(self) -> float:
        """Spare supply as a fraction of demand: 0.25 = 25% more than needed; < 0 = short."""
        return self.supply / self.demand - 1.0 if self.demand > 0 else float("inf")

    @property
    def fed(self) -> bool:
        enough = self.servers_fed >= self.gpu_servers if self.array is not None else self.supply >= self.demand
        return enough and self.client_link >= self.demand_per_server

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
    )
