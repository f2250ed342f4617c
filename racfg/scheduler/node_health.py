"""Each scheduler node's health from a drift run: the problems that keep jobs off it, or why it
could not be judged.

A finding lands on a node three ways: on the host itself; on a switch port a NIC of the host is
cabled to (the port is named in the check id or the problem id: ``sw1/state/port_mtu[1/2]``,
``sw1/environment/ports/1/2/mtu``, ``port_admin:sw1:1/17``); or on a switch as a whole (no port
named: a BGP session, the switch's own software; or one of its ISL ports), which lands on every
host cabled to it. A problem on a port that neither a host nor an ISL uses lands on no node (it is
reported, and drains nothing). validate's diagnosis files each symptom under its root cause, and
a symptom lands where its cause is: a path that fails *to* dgx01's NIC set to MTU 1500 is dgx01's
problem (not the sending host's), one through a switch port the port's host's.

A failed read (status ``error``: a host unreachable, a tool's output unreadable, a switch that
could not be read) never makes a node broken: it makes it *unknown*, and gate neither drains nor
resumes an unknown node. A failed read of the whole site (``cluster``: Ansible could not run, the
facts could not be read) makes every node unknown. A node with a failure that was read is broken
even if another of its reads failed: the drain rests on what was read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from racfg.inventory import Cluster
from racfg.results import Report, Result, Status


@dataclass(frozen=True)
class NodeProblem:
    """One problem that keeps jobs off a node: its stable id, the short fix, where it was found."""

    id: str
    fix: str | None
    found_on: str  # the node itself, or the switch the problem is on


@dataclass
class NodeHealth:
    problems: dict[str, NodeProblem] = field(default_factory=dict)  # id -> problem, in reading order
    unreadable: list[str] = field(default_factory=list)  # why it could not be judged

    @property
    def broken(self) -> bool:
        return bool(self.problems)

    @property
    def unknown(self) -> bool:
        return not self.problems and bool(self.unreadable)


@dataclass
class SiteHealth:
    nodes: dict[str, NodeHealth]
    elsewhere: list[str]  # findings on no node (a switch no host is cabled to, the site): reported only


_PORT = re.compile(r"(?:\[|/ports/|:)\d+(?:/\d+)+(?:\]|/|:|$)")  # a port number anywhere in a check or problem id


def cabling(cluster: Cluster) -> dict[str, dict[str, list[str]]]:
    """switch -> port -> the hosts with a NIC cabled there (inventory hosts[].nics[].switch/port)."""
    out: dict[str, dict[str, list[str]]] = {}
    for host in cluster.hosts:
        for nic in host.nics:
            if nic.port is not None:
                hosts = out.setdefault(nic.switch, {}).setdefault(nic.port, [])
                if host.name not in hosts:
                    hosts.append(host.name)
    return out


def ports_named(text: str, ports: Iterable[str]) -> list[str]:
    """The ports of ``ports`` that ``text`` (a check or problem id) names as a whole: ``[1/2]``,
    ``/ports/1/2/``, ``:1/2`` (never ``1/2`` inside ``1/20``)."""
    return [p for p in ports if re.search(rf"(?:\[|/ports/|:){re.escape(p)}(?:\]|/|:|$)", text)]


def site_health(cluster: Cluster, report: Report) -> SiteHealth:
    hosts = {h.name for h in cluster.hosts}
    cables = cabling(cluster)
    isl_ports: dict[str, set[str]] = {}
    for isl in cluster.topology.isls:
        isl_ports.setdefault(isl.leaf, set()).add(isl.leaf_port)
        isl_ports.setdefault(isl.spine, set()).add(isl.spine_port)
    nodes: dict[str, NodeHealth] = {h.name: NodeHealth() for h in cluster.hosts}
    elsewhere: list[str] = []
    # validate's diagnosed problems first: a node's reason names its root cause, not a config task
    for result in sorted(report.results, key=lambda r: not _diagnosed(r)):
        if result.status not in (Status.FAIL, Status.ERROR):
            continue
        problem_id, fix, target, texts = _problem(result)
        on = _nodes_of(target, texts, hosts, cables, isl_ports)
        if not on:
            if result.status is Status.ERROR and target not in cables and target not in hosts:
                on = [h.name for h in cluster.hosts]  # the site could not be read: every node unknown
            else:
                elsewhere.append(f"{target}: {problem_id}")
                continue
        for node in on:
            health = nodes[node]
            if result.status is Status.FAIL:
                health.problems.setdefault(problem_id, NodeProblem(problem_id, fix, target))
            else:
                health.unreadable.append(f"{result.check}: {result.message}")
    return SiteHealth(nodes, list(dict.fromkeys(elsewhere)))


def _diagnosed(result: Result) -> bool:
    problem = result.data.get("problem") if isinstance(result.data, dict) else None
    return isinstance(problem, dict) and bool(problem.get("id"))


def _problem(result: Result) -> tuple[str, str | None, str, str]:
    """The problem a finding belongs to (validate's diagnosis, carried by drift's state layer): its
    id, fix, the target it is on (its root check's: a path that fails *to* dgx01 is dgx01's problem,
    not the sender's) and the text that may name its port; else the finding itself."""
    problem = result.data.get("problem") if _diagnosed(result) else None
    if problem is not None:
        root = str(problem.get("root") or result.check)
        return str(problem["id"]), problem.get("fix") or result.fix, root.split("/", 1)[0], f"{root} {problem['id']}"
    return result.check, result.fix, result.target, " ".join([result.check, str(result.data.get("validate_check", ""))])


def _nodes_of(target: str, texts: str, hosts: set[str], cables: dict[str, dict[str, list[str]]],
              isl_ports: dict[str, set[str]]) -> list[str]:
    if target in hosts:
        return [target]
    ports = cables.get(target)
    if ports is None:
        return []
    named = ports_named(texts, ports)
    if not named and _PORT.search(texts) and not ports_named(texts, isl_ports.get(target, ())):
        return []  # a port no host and no ISL uses
    behind = [h for p in (named or ports) for h in ports[p]]
    return list(dict.fromkeys(behind))
