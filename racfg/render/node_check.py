"""The node check's intent: what Slurm's HealthCheckProgram checks on one node, as data.

Why a document of its own: the check runs on the node with no racfg there (roles/healthcheck
installs roles/healthcheck/files/racfg-node-check, a Python script of the standard library), so
everything it judges by is rendered here from the site's intent and written to the node as JSON:
the data NICs with their MTU, address and routes (the fabric role's declaration judges them there),
the mounts of the parallel file system and the array, the GPUs, the clock, and how to name its
drains. Validate's own rules travel as data too (the Xid pattern and the application Xids of
racfg.hostfacts.xid, chrony's synchronised leap states of racfg.hostfacts.chrony), so the node
judges as validate does. Only hosts in the scheduler's partitions get one: a site without a
``scheduler:`` section gets no node check.
"""

from __future__ import annotations

from typing import Any

from racfg.hostfacts.chrony import SYNCED_LEAP
from racfg.hostfacts.xid import APPLICATION_XIDS, EVENT_PATTERN
from racfg.inventory.cluster import Cluster, ClusterHost
from racfg.inventory.partitions import partition_hosts
from racfg.paths import role_defaults

# Where the healthcheck role installs the check (slurm.conf HealthCheckProgram names it).
NODE_CHECK_PROGRAM = "/usr/local/sbin/racfg-node-check"
# The drain reason's prefix: racfg-check's own, distinct from `racfg gate`'s (the check resumes only its
# drains; gate, which re-reads the whole site, takes both as racfg's: racfg.scheduler.drain_reason).
REASON_PREFIX = "racfg-check:"
# The longest reason the check writes: short enough for `sinfo -R` and scontrol's column, whole ids kept.
REASON_MAX = 120


def scheduled_hosts(cluster: Cluster) -> set[str]:
    """The hosts in any of the scheduler's partitions (none without a scheduler section)."""
    return {name for hosts in partition_hosts(cluster).values() for name in hosts}


def _mounts(cluster: Cluster, host: ClusterHost) -> list[dict[str, Any]]:
    """The parallel file system (Weka) and the array export this host mounts, as validate checks them."""
    out: list[dict[str, Any]] = []
    weka = cluster.inventory.software.weka
    if weka is not None and weka.clients == host.role:
        mount: dict[str, Any] = {"check": "weka/mounted", "point": weka.mount_point, "types": ["wekafs"],
                                 "source": None, "fix": "racfg deploy --tags weka"}
        if not weka.dist:  # deploy installs no Weka client: validate skips the mount while there is none
            mount |= {"unless_missing": "weka",
                      "why_missing": "no Weka client installed (software.weka.dist is not given)"}
        out.append(mount)
    array = cluster.inventory.array
    if array is not None and array.clients == host.role:
        fstype = str(role_defaults("nfs_client")["nfs_client_fstypes"][array.protocol])
        out.append({"check": "array/mounted", "point": array.mount_point,
                    "types": ["nfs", "nfs4"] if fstype == "nfs" else [fstype],
                    "source": f"{array.server}:{array.export}", "fix": "racfg deploy --tags nfs_client"})
    return out


def node_check_intent(cluster: Cluster, host: ClusterHost, routing: dict[str, Any] | None) -> dict[str, Any] | None:
    """The node check's document for ``host`` (``racfg_node_check``), or None when no partition holds it.
    The GPUs' ``required`` is the play's (racfg_gpu_required: a lab run lifts it), added by the role."""
    if host.name not in scheduled_hosts(cluster):
        return None
    return {
        "node": host.name,  # the Slurm node name: nodes are the inventory's hosts, under the same names
        "mgmt": str(host.mgmt),
        "nics": [{"name": n.name, "address": str(n.address), "mtu": n.mtu, "switch": n.switch, "port": n.port}
                 for n in host.nics],
        "routing": routing,
        "mounts": _mounts(cluster, host),
        "gpus": {"count": host.gpus or 0},
        "xid": {"pattern": EVENT_PATTERN, "application": sorted(APPLICATION_XIDS)},
        "clock": {"synchronised": sorted(SYNCED_LEAP)},
        "slurm": {"reason_prefix": REASON_PREFIX, "reason_max": REASON_MAX},
    }
