"""What the virtual lab cannot provide for an inventory, and the nearest real thing it runs instead.

An example inventory describes real hardware: MLNX_OFED from Mellanox, NVMe drives of a given
model, InfiniBand HCAs. The lab has none of these. Rather than asking the user to edit a copy of
the inventory (and so test something else than what they will deploy), the lab, as a provider
of connection overrides, replaces each missing thing by variables set for its runs only, and
says so in one line per substitution. The roles and validators read these variables; with no
provider (a real site) none of them is set and every step and check keeps its original meaning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from racfg.inventory import Cluster
from racfg_lab import ibfabric, mlnxofed

# The variables the roles and validators read (documented in the roles' defaults).
IPOIB_UNAVAILABLE = "fabric_ipoib_unavailable"  # reason IPoIB mode / IB port MTU cannot be set; "" on real hosts
CHECK_DRIVE_MODEL = "nvme_storage_check_model"  # false: the declared drive model is not compared
DRIVE_MODEL_UNCHECKED = "nvme_storage_check_model_reason"  # why not (the role's and validate's skip line)
RDMA_DEVICES_UNAVAILABLE = "ofed_rdma_devices_unavailable"  # why a fabric that needs RDMA devices has none

IPOIB_REASON = ("lab InfiniBand NICs are Ethernet stand-ins (veth): IPoIB mode and the IB port MTU cannot be set; "
                "address, netdev MTU, routes and sysctls are applied")
RDMA_DEVICES_REASON = "lab NICs are Ethernet stand-ins (veth): there is no RDMA device to find"
IB_TWO_TIER_LINE = ("InfiniBand two-tier fabric (routed by a subnet manager) -> routed Ethernet: the ISLs as "
                    "routed /31s of the lab's own, BGP with ECMP over the spines, each leaf announcing its hosts' "
                    "/32s and answering ARP for the others (proxy ARP)")
DRIVE_MODEL_REASON = "lab drives are loop devices and report no model: declared drive models are not checked"


@dataclass(frozen=True)
class Substitutions:
    """One printed line per substitution and the variables that carry them out."""

    lines: list[str] = field(default_factory=list)
    host_vars: dict[str, Any] = field(default_factory=dict)


def inventory_substitutions(cluster: Cluster) -> Substitutions:
    """The substitutions this inventory needs in the lab (none for what the lab can provide)."""
    subs = Substitutions()
    ofed = cluster.inventory.software.ofed
    served = mlnxofed.lab_source(cluster)
    if served is not None:
        subs.lines.append(f"MLNX_OFED {served.release} at {served.url} -> a stand-in distribution of that release "
                          "served by the lab (its mlnxofedinstall installs an ofed_info only: no drivers; "
                          f"sha256 {mlnxofed.sha256_of(served)})")
    elif ofed is not None and ofed.flavor == "mlnx":
        pinned = f"MLNX_OFED {ofed.version}" if ofed.version else "MLNX_OFED"
        subs.lines.append(f"{pinned} -> the distribution's inbox RDMA stack (rdma-core): "
                          "no MLNX_OFED distribution in the lab")
        subs.host_vars["racfg_ofed"] = {**ofed.model_dump(mode="json"), "flavor": "inbox", "version": None,
                                        "source": None, "sha256": None, "signed_by": None, "install_flags": []}
    if any(d.model for h in cluster.hosts for d in h.drives):
        subs.lines.append("declared drive models -> not checked (lab drives are loop devices and report none)")
        subs.host_vars[CHECK_DRIVE_MODEL] = False
        subs.host_vars[DRIVE_MODEL_UNCHECKED] = DRIVE_MODEL_REASON
    if cluster.fabric.type == "infiniband":
        subs.lines.append("InfiniBand NICs -> Ethernet stand-ins: IPoIB mode and the IB port MTU are skipped with "
                          "that reason; address, netdev MTU, routes and sysctls apply")
        subs.host_vars[IPOIB_UNAVAILABLE] = IPOIB_REASON
    if ibfabric.stands_in(cluster):
        subs.lines.append(IB_TWO_TIER_LINE)
    if cluster.fabric.type == "infiniband" or cluster.fabric.roce:
        subs.host_vars[RDMA_DEVICES_UNAVAILABLE] = RDMA_DEVICES_REASON
    return subs
