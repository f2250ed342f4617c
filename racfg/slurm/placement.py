"""Which of the hosts a command wants Slurm can run a job on now, grouped by partition, and why the
others cannot: the one rule smoke's measured steps (racfg.smoke.launch) and validate's reads
(racfg.slurm.node_step) share for going to a host through Slurm or over SSH.

A node Slurm would not give a job now (drained, down, allocated to another job, in no partition, or
not a node of Slurm at all) is still reached, over SSH, and the caller says why: an operator
measures or reads a drained node to see it repaired before resuming it. A node in several partitions
goes in its first, since a job (and so a job step) runs in one partition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from racfg.hostfacts.scontrol import SlurmNode


def allocations(hosts: Sequence[str], nodes: Mapping[str, SlurmNode]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(partition -> its hosts Slurm can run a job on now, host -> why it is reached over SSH)."""
    groups: dict[str, list[str]] = {}
    ssh: dict[str, str] = {}
    for host in hosts:
        node = nodes.get(host)
        if node is None:
            ssh[host] = "not a node of the site's Slurm"
        elif node.drained or node.down or node.state == "ALLOCATED":
            ssh[host] = f"{node.state_text} in Slurm" + (f" ({node.reason})" if node.reason else "")
        elif not node.partitions:
            ssh[host] = "in no Slurm partition"
        else:
            groups.setdefault(node.partitions[0], []).append(host)
    return groups, ssh


def hosts_by(values: Mapping[str, str]) -> dict[str, list[str]]:
    """host -> value (its job, its reason) turned into value -> its hosts, in the hosts' order: how a
    report says which hosts went which way in one line each."""
    out: dict[str, list[str]] = {}
    for host, value in values.items():
        out.setdefault(value, []).append(host)
    return out
