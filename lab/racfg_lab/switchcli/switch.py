"""One emulated switch: its config (running/startup), its cabling and its links."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from racfg.catalog import SwitchModel
from racfg_lab.switchcli import dataplane, frrctl, l3dataplane
from racfg_lab.switchcli.config import CliConfig
from racfg_lab.switchcli.routing import frr_config
from racfg_lab.switchcli.state import ConfigStore, SwitchConfig, factory_config, load_or_factory

VERSIONS = {"onyx": "3.6.8010", "eos": "4.30.0F", "mlnxos-ib": "3.6.8010"}


@dataclass(frozen=True)
class PortStatus:
    admin_up: bool
    oper_up: bool
    mtu: int
    speed_gbps: float
    description: str
    counters: dict[str, int]


class EmulatedSwitch:
    def __init__(self, cfg: CliConfig) -> None:
        self.cfg = cfg
        self.model = SwitchModel(cfg.model, cfg.platform, cfg.ports_count, cfg.default_speed_gbps, cfg.ports_per_slot)
        self.store = ConfigStore(cfg.state_dir)
        factory = factory_config(cfg.name, cfg.platform, self.model, cfg.default_speed_gbps)
        self.factory = factory.copy()  # what an empty startup config means (EOS ``show startup-config``)
        self.running: SwitchConfig = load_or_factory(self.store, factory)
        self.boot_time = time.time()
        self.version = cfg.os_version or VERSIONS[cfg.platform]  # a lab switch runs the pinned release
        self.sessions: dict[str, SwitchConfig] = {}  # EOS config sessions, by name
        self.session_terminals: dict[str, set[str]] = {}  # the CLIs now in each session (its instances)
        self.terminals = 0
        self.control_frames = dataplane.ControlFrameSink()  # LLDP is control traffic, not discards
        for cabled in cfg.ports.values():
            if cabled.ifname:
                self.control_frames.claim(cabled.ifname)
        self.sync_links()
        self.sync_l3()

    def new_terminal(self) -> str:
        self.terminals += 1
        return f"vty{self.terminals}"

    def join_session(self, name: str | None, terminal: str) -> None:
        if name is not None:
            self.session_terminals.setdefault(name, set()).add(terminal)

    def leave_session(self, name: str | None, terminal: str) -> None:
        inside = self.session_terminals.get(name or "")
        if inside is not None:
            inside.discard(terminal)
            if not inside:
                del self.session_terminals[name or ""]

    def sync_links(self) -> str:
        """Push port MTU and admin state of the running config onto the veths."""
        settings = {}
        for name, cabled in self.cfg.ports.items():
            port = self.running.ports.get(name)
            if cabled.ifname and port is not None:
                settings[cabled.ifname] = (port.mtu, port.admin_up)
        return dataplane.apply_links(settings) if settings else ""

    def sync_port(self, port: str) -> str:
        """Push one port's MTU and admin state onto its veth (if it is cabled to one)."""
        cabled = self.cfg.ports.get(port)
        if cabled is None or not cabled.ifname:
            return ""
        pc = self.running.ports[port]
        return dataplane.apply_links({cabled.ifname: (pc.mtu, pc.admin_up)})

    def commit(self, new: SwitchConfig) -> str:
        """Make ``new`` the running config and apply it to the links."""
        self.running = new
        return "; ".join(e for e in (self.sync_links(), self.sync_l3()) if e)

    @property
    def routes(self) -> bool:
        """A switch of a routed lab fabric: its L3 config acts on the namespace and on FRR."""
        return self.cfg.frr_dir is not None

    def sync_l3(self) -> str:
        """Push the running L3 config onto the namespace (addresses, forwarding) and FRR (BGP).
        An L2-only lab switch keeps its config without acting on it. Returns an error text or ''."""
        if not self.routes:
            return ""
        assert self.cfg.frr_dir is not None
        ports = {name: c.ifname for name, c in self.cfg.ports.items() if c.ifname}
        isls = frozenset(c.ifname for c in self.cfg.ports.values() if c.ifname and c.isl)
        errors = [l3dataplane.apply(self.running.l3, ports, isls)]
        try:
            frrctl.apply_bgp(self.cfg.frr_dir, frr_config(self.running.hostname, self.running.l3))
        except frrctl.FrrError as exc:
            errors.append(str(exc))
        return "; ".join(e for e in errors if e)

    def frr_json(self, command: str) -> Any:
        """The routing daemon's answer to a vtysh show command, as JSON (None: the switch does not route)."""
        if self.cfg.frr_dir is None:
            return None
        return frrctl.vtysh_json(self.cfg.frr_dir, command)

    def save(self) -> None:
        self.store.save(self.running)

    def status(self, port: str, config: SwitchConfig | None = None) -> PortStatus:
        pc = (config or self.running).ports[port]
        cabled = self.cfg.ports.get(port)
        if cabled is None:
            oper, counters = False, dict.fromkeys(dataplane.COUNTERS, 0)
        elif cabled.ifname:
            oper = pc.admin_up and dataplane.link_up(cabled.ifname)
            self.control_frames.claim(cabled.ifname)
            counters = dataplane.counters(cabled.ifname)
        else:
            oper, counters = pc.admin_up, dict.fromkeys(dataplane.COUNTERS, 0)
        return PortStatus(pc.admin_up, oper, pc.mtu, pc.speed_gbps, pc.description, counters)

    def mac(self, index: int) -> str:
        base = sum(self.cfg.name.encode()) % 250
        return f"7c:fe:90:{base:02x}:{index // 256:02x}:{index % 256:02x}"
