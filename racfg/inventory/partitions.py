"""Which inventory hosts each scheduler partition holds, resolved once and checked at load.

The section names hosts by name, name range or role; a name or range that matches no host, or a
``default_partition`` that names no partition, is an inventory error with its place (exit 2):
a drain aimed at a node the site does not have must not wait for ``racfg gate`` to find out.
"""

from __future__ import annotations

from dataclasses import dataclass

from racfg.inventory.cluster import Cluster
from racfg.inventory.ranges import check_range, expand_range


@dataclass(frozen=True)
class UnknownName:
    """One name of the scheduler section that the inventory does not have, and where it is."""

    loc: tuple[str | int, ...]
    value: str
    what: str  # "host" or "partition"


def partition_hosts(cluster: Cluster) -> dict[str, list[str]]:
    """Each partition's hosts in inventory order (unknown names left out; ``unknown_names`` says
    which). Empty when the inventory declares no scheduler."""
    scheduler = cluster.inventory.scheduler
    if scheduler is None:
        return {}
    order = [h.name for h in cluster.hosts]
    out: dict[str, list[str]] = {}
    for partition in scheduler.partitions:
        named = {n for entry in partition.hosts for n in _names(entry)}
        named |= {h.name for h in cluster.hosts if h.role in partition.roles}
        out[partition.name] = [n for n in order if n in named]
    return out


def default_partition(cluster: Cluster) -> str | None:
    scheduler = cluster.inventory.scheduler
    if scheduler is None:
        return None
    return scheduler.default_partition or scheduler.partitions[0].name


def unknown_names(cluster: Cluster) -> list[UnknownName]:
    """The scheduler section's host names and ranges no host of the inventory has, its partition
    names given twice, and a default partition that is not declared."""
    scheduler = cluster.inventory.scheduler
    if scheduler is None:
        return []
    known = {h.name for h in cluster.hosts}
    problems: list[UnknownName] = []
    seen: set[str] = set()
    for i, partition in enumerate(scheduler.partitions):
        if partition.name in seen:
            problems.append(UnknownName(("scheduler", "partitions", i, "name"), partition.name, "partition twice"))
        seen.add(partition.name)
        for j, entry in enumerate(partition.hosts):
            missing = [n for n in _names(entry) if n not in known]
            if missing:
                problems.append(UnknownName(("scheduler", "partitions", i, "hosts", j), entry, "host"))
        roles_hold = any(h.role in partition.roles for h in cluster.hosts)
        if not partition.hosts and not roles_hold:
            problems.append(UnknownName(("scheduler", "partitions", i), partition.name, "empty partition"))
    if scheduler.default_partition is not None and scheduler.default_partition not in seen:
        problems.append(UnknownName(("scheduler", "default_partition"), scheduler.default_partition, "partition"))
    return problems


def _names(entry: str) -> list[str]:
    return expand_range(entry) if check_range(entry) is not None else [entry]
