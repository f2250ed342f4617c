"""The diagnosis: all results of a validate run read together with the cabling plan, grouped into problems.

Why here (racfg.validate) and not with the results model: the rules read validate's check ids
(``sw1/switches/port_admin_up[1/17]``) and the intent that joins them (which host NIC is cabled to
which switch port). The result model only carries the outcome (``Problem``, ``Result.cause``), so
every renderer shows it without knowing the rules.

The causal order is the physical one: switch port admin state, host NIC admin state, link/carrier,
the agent that reads the link (lldpd, chronyd), that agent's configuration (chrony's sources against
the site's, what lldpd announces), LLDP neighbours, routes and neighbour entries that override the
NIC's, address, MTU, the end-to-end path.
Each rule takes the failed results of one kind as roots (a reading; never an error, which says only
that a machine could not be read) and claims, from what is still unclaimed,
the failures that root explains (the same cable's later links, the switch's unsaved config ...).
Kinds run in causal order, so a symptom two causes could explain goes to the earlier cause. A
failure nothing explains is its own problem; errors with one message on one target (a host that
cannot be reached) are one problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from racfg.results.model import Result, Status, natural_key
from racfg.results.problems import Problem
from racfg.results.wording import headline
from racfg.validate.analysis import CableEnd
from racfg.validate.fabric_diagnosis import IslPlan, bgp_session, isl_admin, isl_cabling, isl_carrier, isl_mtu

_CHECK = re.compile(r"^(?P<target>[^/]+)/(?P<category>[^/]+)/(?P<func>[^\[]+)(?:\[(?P<label>.*)\])?$")
_PFC_CHECKS = ("pfc_off", "no_lossless_priority", "roce_off")
AGENTS = {"lldpd": "lldp", "chronyd": "clock"}  # agent -> what reads through it (check ids system/<agent>_running)


def check_key(target: str, category: str, func: str, label: str = "") -> str:
    """The check id validate gives a result: ``sw1/switches/port_mtu[1/2]``."""
    return f"{target}/{category}/{func}" + (f"[{label}]" if label else "")


@dataclass
class _Run:
    """The failing results of a run (fail or error), and which problem has claimed each."""

    failing: dict[str, Result]
    claimed: dict[str, str]

    def open(self, check: str) -> Result | None:
        """The failing, unclaimed result of ``check``."""
        return None if check in self.claimed else self.failing.get(check)

    def root(self, check: str) -> Result | None:
        """The unclaimed result of ``check`` if it failed: only a reading is evidence of a cause. An error
        (the machine could not be read: unreachable, no password) says nothing of the port or NIC it
        was about, and is left to the unreadable problem of its machine (``_unexplained``)."""
        found = self.open(check)
        return found if found is not None and found.status is Status.FAIL else None

    def _explained(self, check: str, root: Result) -> bool:
        """An error on another machine than the cause's is not its symptom: that machine could not be read."""
        found = self.open(check)
        return found is not None and (found.status is Status.FAIL or found.target == root.target)

    def take(self, kind: str, where: str, root: Result, cause: str, explains: Iterable[str]) -> Problem:
        symptoms = tuple(dict.fromkeys(c for c in explains if c != root.check and self._explained(c, root)))
        problem = Problem(f"{kind}:{where}", kind, root.target, cause, root.fix, root.check, symptoms)
        for check in problem.checks:
            self.claimed[check] = problem.id
        return problem


def _port(cable: CableEnd, func: str) -> str:
    return check_key(cable.switch, "switches", func, cable.port)


def _nic(cable: CableEnd, category: str, func: str) -> str:
    return check_key(cable.host, category, func, cable.nic)


def _link_symptoms(cable: CableEnd) -> list[str]:
    """What a dead link fails beyond itself: both ends' state, speed and LLDP, and the paths through the NIC."""
    return [_port(cable, "port_oper_up"), _nic(cable, "network", "carrier"), _port(cable, "port_speed"),
            _nic(cable, "network", "speed"), _port(cable, "port_lldp_neighbour"),
            _nic(cable, "fabric", "lldp_neighbour"), _nic(cable, "fabric", "jumbo_frames")]


def _unsaved(run: _Run, switch: str) -> list[str]:
    saved = check_key(switch, "switches", "config_saved")
    return [saved] if run.open(saved) is not None else []


def _port_admin(run: _Run, cables: list[CableEnd]) -> Iterator[Problem]:
    for c in cables:
        root = run.root(_port(c, "port_admin_up"))
        if root is not None:
            unsaved = _unsaved(run, c.switch)
            cause = f"{c.switch} {c.port} shut down in the running config" + (" (not saved)" if unsaved else "")
            yield run.take("port_admin", f"{c.switch}:{c.port}", root, cause, [*_link_symptoms(c), *unsaved])


def _nic_admin(run: _Run, cables: list[CableEnd]) -> Iterator[Problem]:
    for c in cables:
        root = run.root(_nic(c, "network", "carrier"))
        if root is not None and root.actual == "admin down":
            yield run.take("nic_admin", f"{c.host}:{c.nic}", root, f"{c.host}:{c.nic} is set down on the host",
                           _link_symptoms(c))


def _carrier(run: _Run, cables: list[CableEnd]) -> Iterator[Problem]:
    for c in cables:
        root = run.root(_port(c, "port_oper_up")) or run.root(_nic(c, "network", "carrier"))
        if root is not None:
            admin = run.failing.get(_port(c, "port_admin_up"))  # failed: claimed above; an error: unknown
            ends = f"{c.switch} could not be read" if admin is not None else "both ends admin up"
            yield run.take("carrier", f"{c.switch}:{c.port}", root,
                           f"no link between {c.switch} {c.port} and {c.host}:{c.nic} ({ends})", _link_symptoms(c))


def _agents(run: _Run, cables: list[CableEnd]) -> Iterator[Problem]:
    hosts = sorted({c.host for c in cables} | {r.target for r in run.failing.values()}, key=natural_key)
    for host in hosts:
        for agent, reads in AGENTS.items():
            root = run.root(check_key(host, "system", f"{agent}_running"))
            if root is None:
                continue
            if reads == "lldp":
                explains = [x for c in cables if c.host == host
                            for x in (_nic(c, "fabric", "lldp_neighbour"), _port(c, "port_lldp_neighbour"))]
            else:
                explains = [check_key(host, "system", "clock_synchronised")]
            yield run.take("agent", f"{host}:{agent}", root, f"{agent} is not running on {host}", explains)


def _agent_config(run: _Run, cables: list[CableEnd]) -> Iterator[Problem]:
    """An agent running with the wrong configuration: chrony pointed at sources that are not the
    site's explains the clock that does not synchronise; lldpd announcing the wrong name or port id
    explains the neighbours both ends hear wrong (not a cable in the wrong port). And racfg's sysctl
    file missing is one problem, not one per kernel parameter."""
    hosts = sorted({c.host for c in cables} | {r.target for r in run.failing.values()}, key=natural_key)
    for host in hosts:
        sources = run.open(check_key(host, "system", "time_sources"))
        if sources is not None and sources.status is Status.FAIL:
            yield run.take("time_sources", f"{host}:chrony", sources,
                           f"chrony on {host} is configured with {sources.actual}, not the site's time sources "
                           f"{sources.expected} (site.time_sources)", [check_key(host, "system", "clock_synchronised")])
        lldpd = run.open(check_key(host, "system", "lldpd_config"))
        if lldpd is not None and lldpd.status is Status.FAIL:
            explains = [x for c in cables if c.host == host
                        for x in (_nic(c, "fabric", "lldp_neighbour"), _port(c, "port_lldp_neighbour"))]
            yield run.take("lldpd_config", f"{host}:lldpd", lldpd,
                           f"lldpd on {host} is configured to announce {lldpd.actual}, not {lldpd.expected}", explains)
        missing = sorted((r for r in run.failing.values() if r.target == host and "/tuning/sysctl_persisted[" in r.check
                          and run.root(r.check) is not None and (r.actual or "").endswith(" missing)")),
                         key=lambda r: natural_key(r.check))
        if missing:
            yield run.take("sysctl_file", f"{host}:sysctl", missing[0],
                           f"{(missing[0].actual or '').strip('()')} on {host}: no kernel parameter racfg sets "
                           "survives the next boot", [r.check for r in missing[1:]])


def _cabling(run: _Run, cables: list[CableEnd]) -> Iterator[Problem]:
    """A swapped pair is one problem (each port hears the other's host, per expected/actual); any other
    wrong or missing neighbour is one per cable."""
    by_description = {f"{c.host}:{c.nic}": c for c in cables}
    for c in sorted(cables, key=lambda c: (natural_key(c.switch), natural_key(c.port))):  # a pair: lower port first
        root = run.root(_port(c, "port_lldp_neighbour")) or run.root(_nic(c, "fabric", "lldp_neighbour"))
        if root is None:
            continue
        heard = run.failing.get(_port(c, "port_lldp_neighbour"))
        other = by_description.get(heard.actual or "") if heard is not None else None
        back = run.failing.get(_port(other, "port_lldp_neighbour")) if other is not None else None
        ends = [c]
        if other is not None and back is not None and back.actual == f"{c.host}:{c.nic}":
            ends.append(other)
            cause = (f"cables swapped at {c.switch}: {c.port} has {other.host}:{other.nic} and {other.port} has "
                     f"{c.host}:{c.nic}")
            where = f"{c.switch}:{c.port}+{other.port}"
        else:
            cause = f"{c.switch} {c.port} <-> {c.host}:{c.nic}: {headline(root)}"
            where = f"{c.switch}:{c.port}"
        explains = [x for e in ends for x in (_port(e, "port_lldp_neighbour"), _nic(e, "fabric", "lldp_neighbour"),
                                             _nic(e, "fabric", "jumbo_frames"))]
        yield run.take("cabling", where, root, cause, explains)


def _overrides(run: _Run, cables: list[CableEnd]) -> Iterator[Problem]:
    """A route or static neighbour entry on the host overriding the NIC's routes (racfg.validate.dataplane):
    the cause of the NIC's failing paths, whose finding names the same entry."""
    for c in cables:
        root = run.root(_nic(c, "network", "nothing_overrides"))
        if root is not None:  # a planned route missing fails its own route check too (network/route[nic:to])
            routes = [k for k in run.failing if k.startswith((f"{c.host}/network/route[{c.nic}:",
                                                               f"{c.host}/network/source_route[{c.nic}:"))]
            yield run.take("dataplane", f"{c.host}:{c.nic}", root, f"{c.host}: {root.actual}",
                           [_nic(c, "fabric", "jumbo_frames"), *routes])


def _address_and_mtu(run: _Run, cables: list[CableEnd]) -> Iterator[Problem]:
    for c in cables:
        path = _nic(c, "fabric", "jumbo_frames")
        address = run.root(_nic(c, "network", "address"))
        if address is not None:
            yield run.take("address", f"{c.host}:{c.nic}", address,
                           f"{c.host}:{c.nic} has {address.actual}, the inventory says {address.expected}", [path])
        port_mtu = run.root(_port(c, "port_mtu"))
        if port_mtu is not None:
            yield run.take("port_mtu", f"{c.switch}:{c.port}", port_mtu,
                           f"{c.switch} {c.port} MTU {port_mtu.actual}, the inventory says {port_mtu.expected}",
                           [path, *_unsaved(run, c.switch)])
        host_mtu = run.root(_nic(c, "network", "mtu"))
        if host_mtu is not None:
            yield run.take("host_mtu", f"{c.host}:{c.nic}", host_mtu,
                           f"{c.host}:{c.nic} MTU {host_mtu.actual}, the inventory says {host_mtu.expected}",
                           [path, check_key(c.host, "consistency", "same_as_peers", "nic_mtu")])


def _pfc(run: _Run, cables: list[CableEnd]) -> Iterator[Problem]:
    """PFC, lossless priorities, RoCE on one switch: one problem (one deploy of the switch repairs them)."""
    switches = sorted({r.target for r in run.failing.values() if _is_pfc(r.check)}, key=natural_key)
    for switch in switches:
        found = sorted((r for r in run.failing.values() if r.target == switch and _is_pfc(r.check)
                        and run.root(r.check) is not None), key=lambda r: natural_key(r.check))
        if not found:
            continue
        evidence = "; ".join(_pfc_evidence(r) for r in found)
        yield run.take("pfc", switch, found[0], f"lossless settings on {switch}: {evidence}",
                       [*(r.check for r in found[1:]), *_unsaved(run, switch)])


def _pfc_evidence(result: Result) -> str:
    m = _CHECK.match(result.check)
    func, label = (m["func"], m["label"]) if m else ("", "")
    return {"port_pfc_off": f"port {label} {result.actual}",
            "no_lossless_priority": f"lossless priority {result.actual}",
            "pfc_off": f"globally {result.actual}"}.get(func, str(result.actual))


def _is_pfc(check: str) -> bool:
    m = _CHECK.match(check)
    return bool(m) and m["category"] == "switches" and m["func"] in (*_PFC_CHECKS, "port_pfc_off")


_RULES: tuple[Callable[[_Run, list[CableEnd]], Iterator[Problem]], ...] = (
    _port_admin, _nic_admin, _carrier, _agents, _agent_config, _cabling, _overrides, _address_and_mtu, _pfc)
_FABRIC_RULES: tuple[Callable[[_Run, list[IslPlan]], Iterator[Problem]], ...] = (
    isl_admin, isl_carrier, isl_cabling, isl_mtu, bgp_session)


def plan_cables(switches: dict[str, dict[str, Any]]) -> list[CableEnd]:
    """The cabling plan from the rendered switches' ``racfg_switch_ports`` (the whole plan, whatever
    --limit selected: a fault on a selected host's cable shows at the switch too)."""
    return [CableEnd(name, p["port"], p["host"], p["nic"]) for name, sv in switches.items()
            for p in sv.get("racfg_switch_ports", [])]


def diagnose(results: list[Result], cables: list[CableEnd],
             isls: list[IslPlan] | None = None) -> tuple[list[Problem], list[Result]]:
    """The problems of a run, causes first, and the results with ``cause`` set to their problem's id
    and ``fix`` to its fix (a symptom's own fix is for the symptom read alone: Result.folded_under).

    ``cables``: the cabling plan (every host NIC and the switch port it is cabled to); ``isls``: a
    leaf-spine site's inter-switch links (racfg.validate.fabric_diagnosis), whose faults come after
    the hosts' own and explain the cross-leaf paths they break."""
    failing = {r.check: r for r in results if r.status in (Status.FAIL, Status.ERROR)}
    run = _Run(failing, {})
    problems: list[Problem] = []
    for rule in _RULES:
        problems.extend(rule(run, cables))
    for fabric_rule in _FABRIC_RULES:
        problems.extend(fabric_rule(run, isls or []))
    problems.extend(_unexplained(run, results))
    by_id = {p.id: p for p in problems}
    return problems, [r.folded_under(by_id[run.claimed[r.check]]) if r.check in run.claimed else r.explained_by(None)
                      for r in results]


_NOT_CHECKED = " could not be read, so this was not checked: "
_HINT = re.compile(r" \(hint: [^()]*\)$")


def _read_error(result: Result) -> str:
    """What kept an error's machine from being read: a check that says what it could not read names
    the read's own failure after it (racfg.validate.fabric_checks), so a switch with no password is
    one cause, whether its ports, its BGP summary or its routing table were being checked."""
    text = headline(result)
    return _HINT.sub("", text.split(_NOT_CHECKED, 1)[1] if _NOT_CHECKED in text else text)


def _unexplained(run: _Run, results: list[Result]) -> Iterator[Problem]:
    """Each failure nothing explains; the errors of one target with one read failure (unreachable,
    no password) as one problem, rooted at the error that carries its fix."""
    errors: dict[tuple[str, str], list[Result]] = {}
    for r in sorted(results, key=lambda r: (natural_key(r.target), natural_key(r.check))):
        if run.open(r.check) is None:
            continue
        if r.status is Status.FAIL:
            yield run.take("check", r.check, r, headline(r), [])
        else:
            errors.setdefault((r.target, _read_error(r)), []).append(r)
    groups_of: dict[str, int] = {}
    for target, _ in errors:
        groups_of[target] = groups_of.get(target, 0) + 1
    for (target, reason), same in errors.items():
        root = next((r for r in same if r.fix), same[0])
        where = target if groups_of[target] == 1 else root.check  # a problem's id is its own
        yield run.take("unreadable", where, root, reason or "could not be checked", [r.check for r in same])
