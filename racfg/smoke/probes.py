"""What was busy around a step: switch port counters and host CPU, read before and after.

The counters are read through the switch drivers (the same SSH CLI sessions validate uses),
once at the start of a run and kept open; a switch that cannot be read turns into a note and a
skipped check, never a failed measurement. CPU is ``/proc/stat`` of each host.
"""

from __future__ import annotations

import contextlib

from racfg.connection import ConnectionOverrides
from racfg.errors import RacfgError
from racfg.inventory.cluster import Cluster
from racfg.smoke.measured import Snapshot, StepProbe
from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.remote import Fleet
from racfg.ssh.known_hosts import KnownHosts
from racfg.switches.parsers.port_counters import parse_counters


class SwitchCounters:
    """Open sessions to the switches carrying the measured links; ``snapshot`` reads every port."""

    def __init__(self, cluster: Cluster, overrides: ConnectionOverrides, switches: set[str]) -> None:
        self.cluster = cluster
        self.overrides = overrides
        self.wanted = sorted(switches)
        self.sessions: dict[str, object] = {}
        self.problem: str | None = None

    def open(self) -> None:
        from racfg.switches import SwitchSession, SwitchTarget, resolve_password

        problems = []
        known = KnownHosts(self.cluster.known_hosts_file, self.overrides.known_hosts)
        for name in self.wanted:
            sw = self.cluster.switches[name]
            try:
                password = self.overrides.switch_passwords.get(name) or resolve_password(
                    sw.spec.credentials.model_dump(), site=self.cluster.name, name=name)
                session = SwitchSession(SwitchTarget(name, sw.platform, sw.spec.mgmt, sw.spec.ssh_port,
                                                     sw.spec.credentials.username, password, known_hosts=known))
                session.open()
                self.sessions[name] = session
            except RacfgError as exc:
                problems.append(str(exc))
        if problems:
            self.problem = "; ".join(problems)

    def snapshot(self) -> Snapshot:
        out: Snapshot = {}
        for name, session in list(self.sessions.items()):
            try:
                raw = session.show(session.driver.show["interfaces"])  # type: ignore[attr-defined]
                for port, counters in parse_counters(session.target.platform, raw).items():  # type: ignore[attr-defined]
                    out[(name, port)] = counters
            except (RacfgError, ValueError, OSError, EOFError) as exc:
                self.problem = f"switch {name}: counters could not be read ({exc})"
                self.sessions.pop(name, None)
        return out

    def ports_down(self, ports: list[tuple[str, str]]) -> frozenset[tuple[str, str]]:
        """Of ``ports`` (switch, canonical port), those their switch reports operationally down (its facts,
        read through the driver); a switch that cannot be read reports none."""
        down = set()
        for name in sorted({switch for switch, _ in ports}):
            session = self.sessions.get(name)
            if session is None:
                continue
            try:
                interfaces = session.facts().interfaces  # type: ignore[attr-defined]
            except (RacfgError, ValueError, OSError, EOFError):
                continue
            down |= {(s, p) for s, p in ports if s == name and p in interfaces and not interfaces[p].oper_up}
        return frozenset(down)

    def close(self) -> None:
        for session in self.sessions.values():
            with contextlib.suppress(Exception):
                session.close()  # type: ignore[attr-defined]
        self.sessions.clear()


def cpu_times(fleet: Fleet, hosts: list[str]) -> dict[str, tuple[int, int]]:
    """(busy, total) jiffies per host from the first line of /proc/stat."""
    out = {}
    for host in hosts:
        with contextlib.suppress(MeasurementError):
            fields = [int(x) for x in fleet[host].run("head -1 /proc/stat", timeout=10).stdout.split()[1:]]
            idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
            out[host] = (sum(fields) - idle, sum(fields))
    return out


def controller_cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of the machine racfg runs on (its own /proc/stat; None where it has none):
    a controller too busy to start a load's processes together is the limit of what smoke measures."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 4:
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


class Probes:
    """Both probes together, for the run: ``before()`` / ``after(probe)`` around each load."""

    def __init__(self, fleet: Fleet, switches: SwitchCounters, hosts: list[str]) -> None:
        self.fleet = fleet
        self.switches = switches
        self.hosts = hosts

    def before(self) -> StepProbe:
        return StepProbe(counters_before=self.switches.snapshot(), cpu_before=cpu_times(self.fleet, self.hosts),
                         controller_before=controller_cpu_times())

    def after(self, probe: StepProbe) -> StepProbe:
        probe.cpu_after = cpu_times(self.fleet, self.hosts)
        probe.controller_after = controller_cpu_times()
        probe.counters_after = self.switches.snapshot()
        return probe
