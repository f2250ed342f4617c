"""Everything a validation session knows before it checks anything.

The validators are parametrised from the **rendered** inventory (``racfg render`` output:
``hosts.yml``, ``group_vars/all.yml``, ``host_vars/*.yml``), so a person can run
``pytest validators/ --rendered DIR`` by hand and get the same checks ``racfg validate`` runs.
``racfg validate`` builds this context itself (with the provider's connection overrides) and
hands it to pytest as a plugin; a hand-run session builds it from the command-line options.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.render.unsafe import load_rendered
from racfg.ssh.host_sessions import HostSession, SshEndpoint
from racfg.ssh.known_hosts import KnownHosts
from racfg.validate.analysis import CableEnd, CablingVerdict, cabling_verdicts
from racfg.validate.dataplane import DataEnd, data_ends
from racfg.validate.pathmatrix import NicPaths, Outcome, attribute
from racfg.validate.probe import HostProbe, PingPath, ping_paths, probe_of, run_probe, script

if TYPE_CHECKING:
    from racfg.slurm.node_step import NodeOutputs


class ContextPlugin:
    """Carries a prepared context into a pytest session (``pytest.main(plugins=[...])``)."""

    def __init__(self, context: ValidateContext) -> None:
        self.racfg_context = context


def find_context(config: Any) -> ValidateContext | None:
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, ContextPlugin):
            return plugin.racfg_context
    return None


def _load_yaml(path: Path) -> Any:
    """A rendered file; its ``!unsafe`` strings (racfg.render.unsafe) read as plain strings."""
    return load_rendered(path.read_text(encoding="utf-8")) if path.is_file() else None


def _each(names: list[str], fn: Any, workers: int) -> dict[str, Any]:
    """``fn(name)`` for every name at once (one thread each, up to ``workers``), keyed by name."""
    if not names:
        return {}
    with ThreadPoolExecutor(max_workers=min(workers, len(names))) as pool:
        return dict(zip(names, pool.map(fn, names), strict=True))


@dataclass
class RenderedSite:
    """The rendered inventory, as plain dicts."""

    group_vars: dict[str, Any]
    hosts: dict[str, dict[str, Any]]  # cluster hosts: name -> host_vars
    switches: dict[str, dict[str, Any]]  # name -> host_vars (racfg_switch, racfg_switch_ports)

    @classmethod
    def load(cls, directory: Path) -> RenderedSite:
        tree = _load_yaml(directory / "hosts.yml")
        if not isinstance(tree, dict):
            raise FileNotFoundError(f"{directory}/hosts.yml: not a rendered racfg inventory (racfg render --out DIR)")
        groups = tree["all"]["children"]
        cluster_groups = groups.get("cluster", {}).get("children", {})
        names = [n for g in cluster_groups.values() for n in (g.get("hosts") or {})]
        switches = list(groups.get("switches", {}).get("hosts") or {})
        host_vars = {n: _load_yaml(directory / "host_vars" / f"{n}.yml") or {} for n in [*names, *switches]}
        return cls(
            group_vars=_load_yaml(directory / "group_vars" / "all.yml") or {},
            hosts={n: host_vars[n] for n in names},
            switches={n: host_vars[n] for n in switches},
        )


@dataclass
class ValidateContext:
    """The site to check, how to reach it, what to check, and the caches the checks share."""

    site: RenderedSite
    inventory_display: str = "SITE.yaml"
    overrides: ConnectionOverrides = NO_OVERRIDES
    hosts_selected: list[str] | None = None  # None: every host
    switches_selected: list[str] | None = None
    on_progress: Any = None  # callable(target, status) for a live view
    # The switches as the caller read them already (drift reads each switch once for all its
    # layers): a callable giving name -> SwitchFacts, or the exception that kept it from being read.
    switches_read: Callable[[], dict[str, Any]] | None = None
    # (host vars, group vars, sysctl keys) -> section -> command: what the validators declared they
    # read, set by validators/conftest.py when pytest has collected them (racfg.validate.probe).
    commands: Callable[[dict[str, Any], dict[str, Any], list[str]], dict[str, str]] | None = None
    # host -> its probe script -> what came back (racfg.slurm.node_step.read_nodes): the hosts' reads as
    # Slurm job steps instead of one SSH session each (``validate --read-via slurm``); None: SSH.
    read_through: Callable[[dict[str, str]], NodeOutputs] | None = None
    reads: NodeOutputs | None = None  # what read_through gave, for the report
    read_seconds: float = 0.0  # the wall time of every host's read
    _probes: dict[str, HostProbe] | None = None
    _jumbo: tuple[list[PingPath], dict[tuple[str, str], NicPaths]] | None = None
    _cabling: dict[tuple[str, str], CablingVerdict] | None = None
    _switch_facts: dict[str, Any] | None = None
    _sessions: dict[str, HostSession] = field(default_factory=dict)  # one per host for the whole run
    _probe_lock: threading.Lock = field(default_factory=threading.Lock)
    _switch_lock: threading.Lock = field(default_factory=threading.Lock)
    _session_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def site_name(self) -> str:
        return str(self.site.group_vars.get("racfg_site", "site"))

    def host_vars(self, name: str) -> dict[str, Any]:
        """A host's variables, with the provider's overlay (e.g. the lab's ``racfg_gpu_required``)."""
        return {**self.site.hosts[name], **self.overrides.host_vars}

    @property
    def host_names(self) -> list[str]:
        names = list(self.site.hosts)
        return [n for n in names if self.hosts_selected is None or n in self.hosts_selected]

    @property
    def switch_names(self) -> list[str]:
        names = list(self.site.switches)
        return [n for n in names if self.switches_selected is None or n in self.switches_selected]

    def endpoint(self, name: str) -> SshEndpoint:
        hv = self.site.hosts[name]
        return SshEndpoint(
            name=name, address=str(hv.get("ansible_host", name)), user=str(hv.get("ansible_user") or "root"),
            port=int(hv.get("ansible_port") or 22),
            key_file=self.overrides.ssh_key_for(hv.get("ansible_ssh_private_key_file")),
            known_hosts=self.known_hosts,
        )

    @property
    def known_hosts(self) -> KnownHosts:
        """The host keys hosts and switches are checked against: the site's file (rendered as
        ``racfg_known_hosts``) or the user's, and the provider's."""
        site = self.site.group_vars.get("racfg_known_hosts")
        return KnownHosts(Path(site) if site else None, self.overrides.known_hosts)

    def session(self, name: str) -> HostSession:
        """The host's SSH session (racfg.ssh.host_sessions), made once per run; it connects on its first command."""
        with self._session_lock:
            if name not in self._sessions:
                self._sessions[name] = HostSession(self.endpoint(name))
            return self._sessions[name]

    def host(self, name: str) -> Any:
        """testinfra's ``host`` for a host, on its session."""
        from racfg.validate.transport import host_on

        return host_on(self.session(name))

    def close(self) -> None:
        """Close every host's session (the end of the run)."""
        with self._session_lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.close()

    def sysctl_expected(self, name: str) -> dict[str, str]:
        from racfg.validate.expectations import sysctl_settings

        return sysctl_settings(self.site.group_vars, self.host_vars(name))

    def ping_paths(self) -> list[PingPath]:
        """Paths from the selected hosts (to any storage NIC: a --limit picks who pings, not whom)."""
        return [p for p in ping_paths(self.site.hosts) if p.src_host in self.host_names]

    def probes(self) -> dict[str, HostProbe]:
        """Every selected host's probe, all hosts at once (one thread and one connection each)."""
        with self._probe_lock:
            if self._probes is None:
                self._probes = self._run_probes()
            return self._probes

    def _run_probes(self) -> dict[str, HostProbe]:
        """Every host's read: through Slurm where ``read_through`` is set (the hosts it could not read
        and why: over SSH), else one SSH session per host."""
        declared = self.commands
        if declared is None:
            raise RuntimeError("no commands to probe with: the validators declare them (validators/conftest.py)")
        start = time.monotonic()
        paths = self.ping_paths()
        plans = {name: (declared(self.host_vars(name), self.site.group_vars, sorted(self.sysctl_expected(name))),
                        [p for p in paths if p.src_host == name]) for name in self.host_names}
        probes: dict[str, HostProbe] = {}
        if self.read_through is not None:
            self.reads = self.read_through({name: script(*plan) for name, plan in plans.items()})
            for name, output in self.reads.outputs.items():
                probes[name] = self._progress(probe_of(name, *plans[name], output, "read in a Slurm job step",
                                                       time.monotonic() - start, via="in a Slurm job step"))

        def over_ssh(name: str) -> HostProbe:
            return self._progress(run_probe(self.host(name), name, *plans[name]))

        probes |= _each([n for n in self.host_names if n not in probes], over_ssh, 32)
        self.read_seconds = time.monotonic() - start
        return {name: probes[name] for name in self.host_names}

    def _progress(self, probe: HostProbe) -> HostProbe:
        if self.on_progress:
            self.on_progress(probe.name, "error" if probe.error else "probed")
        return probe

    def prefetch(self) -> None:
        """Read hosts and switches at the same time, before the first check asks for either."""
        with ThreadPoolExecutor(max_workers=2) as pool:
            for future in [pool.submit(self.probes), pool.submit(self.switch_facts)]:
                future.result()

    def switch_facts(self) -> dict[str, Any]:
        """name -> SwitchFacts, or the exception that kept it from being read."""
        with self._switch_lock:
            if self._switch_facts is None:
                self._switch_facts = self._read_switches()
            return self._switch_facts

    def _read_switches(self) -> dict[str, Any]:
        from racfg.errors import RacfgError

        if self.switches_read is not None:
            read = self.switches_read()
            return {name: read.get(name, RacfgError(f"switch {name} was not read")) for name in self.switch_names}
        from racfg.switches import SwitchTarget, read_facts, resolve_password

        def one(name: str) -> Any:
            spec = self.site.switches[name]["racfg_switch"]
            try:
                password = resolve_password(spec.get("credentials", {}), site=self.site_name, name=name,
                                            overrides=self.overrides)
                facts: Any = read_facts(SwitchTarget.from_vars(spec, password, known_hosts=self.known_hosts))
            except RacfgError as exc:
                facts = exc
            if self.on_progress:
                self.on_progress(name, "error" if isinstance(facts, Exception) else "probed")
            return facts

        return _each(self.switch_names, one, 16)

    # --- cluster-wide readings (computed once, after the probes) -------------------------------
    def jumbo(self) -> tuple[list[PingPath], dict[tuple[str, str], NicPaths]]:
        """The jumbo-frame matrix and what is filed on each NIC (see racfg.validate.pathmatrix)."""
        if self._jumbo is None:
            paths = self.ping_paths()
            outcomes: dict[str, Outcome | None] = {}
            for probe in self.probes().values():
                outcomes.update({label: Outcome(value) for label, value in probe.pings.items()})
            self._jumbo = (paths, attribute(paths, outcomes, self._path_causes(paths, outcomes)))
        return self._jumbo

    def _path_causes(self, paths: list[PingPath], outcomes: dict[str, Outcome | None]) -> dict[str, str]:
        """What a failing path's source says of it: the route its routing picks (a route failure), or
        its neighbour entry for the destination with a MAC the destination's NIC does not have."""
        from racfg.validate.dataplane import neighbour_entries, wrong_neighbour

        failing = [p for p in paths if outcomes.get(p.label) not in (None, Outcome.OK)]
        owners = self.data_ends() if failing else {}
        out = {}
        for p in failing:
            probe = self.probes()[p.src_host]
            if outcomes[p.label] is Outcome.ROUTE:
                out[p.label] = f"route: {probe.routes.get(p.label) or 'not read'}"
                continue
            neigh = probe.get("ip_neigh")
            wrong = (wrong_neighbour(neighbour_entries(neigh.out), p.dst_addr, p.src_nic, owners.get(p.dst_addr))
                     if neigh is not None and neigh.ok else None)
            if wrong:
                out[p.label] = wrong
        return out

    def data_ends(self) -> dict[str, DataEnd]:
        """Every data address of the site -> the host and NIC that has it, with that NIC's MAC as its
        probe read it (racfg.validate.dataplane: a neighbour entry is judged against it)."""
        from racfg.hostfacts.ip import parse_ip_json

        macs: dict[tuple[str, str], str | None] = {}
        for name, probe in self.probes().items():
            section = probe.get("ip_addr")
            if probe.error is None and section is not None and section.ok:
                macs |= {(name, ifname): link.mac for ifname, link in parse_ip_json(section.out).items()}
        return data_ends(self.site.hosts, macs)

    def cabling(self) -> dict[tuple[str, str], CablingVerdict]:
        """Both ends' LLDP against the cabling plan, keyed by (switch, canonical port)."""
        if self._cabling is None:
            self._cabling = self._read_cabling()
        return self._cabling

    def _read_cabling(self) -> dict[tuple[str, str], CablingVerdict]:
        from racfg.hostfacts.lldp import parse_lldp_neighbors
        from racfg.hostfacts.parse_error import ParseError
        from racfg.switches.ports import canonical_port

        cables, platforms = [], {}
        for name in self.site.switches:  # the whole cabling plan, whichever targets --limit selected
            sv = self.site.switches[name]
            platforms[name] = str(sv["racfg_switch"]["platform"])
            cables += [CableEnd(name, p["port"], p["host"], p["nic"]) for p in sv.get("racfg_switch_ports", [])]
        switch_lldp = {}
        for name, facts in self.switch_facts().items():
            if not isinstance(facts, Exception):
                for port, neighbour in facts.lldp.items():
                    switch_lldp[(name, port)] = (neighbour.system_name, neighbour.port)
        host_lldp = {}
        for host, probe in self.probes().items():
            section = probe.get("lldp")
            if probe.error or section is None or not section.ok:
                continue
            try:
                heard = parse_lldp_neighbors(section.out)
            except ParseError:
                continue
            for ifname, neighbours in heard.items():
                for neighbour in neighbours[:1]:
                    system = neighbour.system_name or neighbour.chassis_id or "?"
                    port_id = neighbour.port_id or neighbour.port_description or "?"
                    platform = platforms.get(system)
                    port = (canonical_port(platform, port_id) if platform else None) or port_id
                    host_lldp[(host, ifname)] = (system, port)
        return cabling_verdicts(cables, switch_lldp, host_lldp)
