"""The declarative inventory: schema (model), YAML source with lines, expansion (cluster)."""

from racfg.inventory.cluster import Cluster, ClusterDrive, ClusterHost, ClusterNic, ClusterSwitch
from racfg.inventory.loader import InventoryError, Problem, load_cluster

__all__ = [
    "Cluster",
    "ClusterDrive",
    "ClusterHost",
    "ClusterNic",
    "ClusterSwitch",
    "InventoryError",
    "Problem",
    "load_cluster",
]
