"""The nine root causes of the diagnosis lab test (tests/faults/test_planted_faults_lab.py), each with
the one problem validate must name for it: its id, its fix, and the targets its results may be on.

Planted in three groups, one validate each, to keep the suite's time in budget. Why the faults of a
group cannot interact:
- each fault is on its own host NIC or switch port, and switch faults are saved (so none leaves the
  switch's ``config_saved`` to another problem);
- at most two storage hosts carry a path fault in a group, so every dgx sender keeps a healthy
  destination and every storage host healthy senders; a storage host whose only destinations are
  the two faulty ones (stor01 in group 2) is the case the path matrix must not blame (it names an
  end only with evidence of its own);
- the agents (lldpd, chronyd) stopped are on hosts whose data path is healthy in that group, and
  the cable swap and PFC (group 3) leave every path working.
What may still cross: a path between two faulty ends fails for both; the matrix files it on both
named ends, which are the faults' own targets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sitelab import _PFC_OFF, _PFC_ON, INVENTORY, DeployedSite, _swap, _unswap


@dataclass(frozen=True)
class Planted:
    name: str
    plant: Callable[[DeployedSite], None]
    repair: Callable[[DeployedSite], None]
    problem: str  # the id validate gives its one problem
    fix: str
    targets: frozenset[str]  # where the problem's results may be: its own host and switch


def _deploy(limit: str, tags: str) -> str:
    return f"racfg deploy {INVENTORY} --limit {limit} --tags {tags}"


def _address(site: DeployedSite, host: str) -> str:
    out = site.lab.ssh(host, "ip -4 -o addr show dev data0").stdout.split()
    return out[out.index("inet") + 1]


_MOVED: dict[str, tuple[str, str]] = {}  # host -> (its address, where the fault moved it)


def _move_address(site: DeployedSite) -> None:
    have = _address(site, "stor02")
    moved = have.rsplit(".", 1)[0] + ".29/" + have.split("/")[1]
    _MOVED["stor02"] = (have, moved)
    site.lab.ssh("stor02", f"ip addr del {have} dev data0 && ip addr add {moved} dev data0")


def _move_back(site: DeployedSite) -> None:
    have, moved = _MOVED.pop("stor02")
    site.lab.ssh("stor02", f"ip addr del {moved} dev data0 && ip addr add {have} dev data0")


def _restart(host: str, unit: str) -> Callable[[DeployedSite], None]:
    def restart(site: DeployedSite) -> None:
        site.lab.ssh(host, f"systemctl start {unit}")
        site.settled([host])
    return restart


def _on_host(name: str, host: str, do: str, undo: str | Callable[[DeployedSite], None], problem: str,
             tags: str, *, switch: bool = False) -> Planted:
    """A fault made over SSH on ``host``; ``switch``: its problem's results may be on sw1 too (the link)."""
    repair = undo if callable(undo) else (lambda site: site.lab.ssh(host, undo))
    return Planted(name, lambda site: site.lab.ssh(host, do), repair, problem, _deploy(host, tags),
                   frozenset({host, *(["sw1"] if switch else [])}))


def _on_port(name: str, port: str, do: str, undo: str, problem: str, host: str) -> Planted:
    """A fault made on sw1's CLI on one port (saved), cabled to ``host``."""
    def cli(line: str) -> Callable[[DeployedSite], None]:
        return lambda site: site.switch_cli([f"interface ethernet {port}", line, "exit"])
    return Planted(name, cli(do), cli(undo), problem, _deploy("sw1", "switch"), frozenset({"sw1", host}))


GROUPS: tuple[tuple[Planted, ...], ...] = (
    (_on_port("switch port shut", "1/17", "shutdown", "no shutdown", "port_admin:sw1:1/17", "stor01"),
     _on_host("host data NIC down", "dgx01", "ip link set data0 down", "ip link set data0 up",
              "nic_admin:dgx01:data0", "fabric", switch=True),
     _on_host("host MTU 1500", "dgx02", "ip link set data0 mtu 1500", "ip link set data0 mtu 9000",
              "host_mtu:dgx02:data0", "fabric")),
    (Planted("data address moved", _move_address, _move_back, "address:stor02:data0", _deploy("stor02", "fabric"),
             frozenset({"stor02"})),
     _on_port("switch port MTU 1500", "1/19", "mtu 1500 force", "mtu 9000 force", "port_mtu:sw1:1/19", "stor03"),
     _on_host("lldpd stopped", "dgx03", "systemctl stop lldpd", _restart("dgx03", "lldpd"), "agent:dgx03:lldpd",
              "common", switch=True),
     _on_host("chrony stopped", "dgx01", "systemctl stop chrony", _restart("dgx01", "chrony"), "agent:dgx01:chronyd",
              "common")),
    (Planted("two cables swapped", _swap, _unswap, "cabling:sw1:1/3+1/18",
             "swap the cables at sw1 ports 1/3 and 1/18", frozenset({"sw1", "dgx03", "stor02"})),
     Planted("PFC on a port", lambda s: s.switch_cli(_PFC_ON), lambda s: s.switch_cli(_PFC_OFF),
             "pfc:sw1", _deploy("sw1", "switch"), frozenset({"sw1"}))),
)


def check_diagnosis(group: tuple[Planted, ...], report: dict, code: int) -> None:
    """Exactly one problem per planted fault, with its id and fix; its results only on its own
    targets; every failure and error explained by one of them (none elsewhere)."""
    assert code == 1
    problems = {p["id"]: p for p in report["problems"]}
    assert set(problems) == {f.problem for f in group}, [(p["id"], p["cause"]) for p in report["problems"]]
    by_check = {r["check"]: r for r in report["results"]}
    for fault in group:
        problem = problems[fault.problem]
        assert problem["fix"] == fault.fix, (fault.name, problem)
        targets = {by_check[c]["target"] for c in (problem["root"], *problem["symptoms"])}
        assert targets <= fault.targets, (fault.name, problem)
    loose = [r["check"] for r in report["results"] if r["status"] in ("fail", "error") and r["cause"] not in problems]
    assert loose == [], f"failures no planted fault explains: {loose}"
