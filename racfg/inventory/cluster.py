"""The site as racfg works with it: ranges expanded, defaults applied, ports parsed.

Every resolved object keeps ``src``, the path of the inventory entry it came from, so policy
findings, render errors and validators can point back at the line a user has to edit.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racfg.catalog import HOST_MODELS, SWITCH_MODELS, SwitchModel, parse_port, parse_speed, port_by_index
from racfg.inventory import model as m
from racfg.inventory.ranges import expand_range, range_size
from racfg.inventory.source import Loc, format_path, line_of
from racfg.inventory.topology import Topology

# Sources the hosts read themselves (MLNX_OFED URLs); anything else is a path on the controller.
HOST_READ_PREFIXES = ("http://", "https://")

# Hosts, their NICs and drives once ranges expand. One range may name 100,000 hosts, so a few lines
# could name 10^8 (a "range bomb", as an alias bomb is one of values). Counted before anything is
# built; far above a real site (a 4,000-host site has 14,000).
MAX_EXPANDED = 250_000


class TooLarge(ValueError):
    """The inventory expands past MAX_EXPANDED; ``loc`` is the host entry where it does."""

    def __init__(self, loc: Loc, message: str) -> None:
        super().__init__(message)
        self.loc = loc


@dataclass(frozen=True)
class ClusterSwitch:
    spec: m.Switch
    model: SwitchModel
    src: Loc

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def platform(self) -> str:
        return self.spec.platform


@dataclass(frozen=True)
class ClusterNic:
    name: str
    address: ipaddress.IPv4Interface
    switch: str
    port: str | None  # canonical port name, None when it could not be parsed (see port_error)
    port_index: int | None
    lane: int | None
    speed_gbps: float
    mtu: int
    src: Loc
    port_error: str | None = None


@dataclass(frozen=True)
class ClusterDrive:
    path: str
    model: str | None
    size: str | None
    src: Loc


@dataclass
class ClusterHost:
    name: str
    role: str
    mgmt: ipaddress.IPv4Address
    ssh_user: str
    ssh_key: str | None
    ssh_port: int
    model: str | None
    gpus: int
    drives: list[ClusterDrive]
    wipe_drives: bool
    nics: list[ClusterNic]
    vars: dict[str, Any]
    src: Loc
    range_index: int = 0  # position inside its name range (0 for the first or a single host)
    gpu_model: str | None = None  # for the bill of materials: the inventory's, else the catalog's
    python: str | None = None  # the host's Python (ansible_python_interpreter); None: render's default
    known_hosts: Path | None = None  # the site's known_hosts file (site.known_hosts), None: the user's


@dataclass
class Cluster:
    """The loaded, expanded site plus what is needed to point at its source lines."""

    inventory: m.Inventory
    path: Path
    display: str
    root: Any  # the LDict tree, for line lookups
    hosts: list[ClusterHost] = field(default_factory=list)
    switches: dict[str, ClusterSwitch] = field(default_factory=dict)
    # the switch graph: ISLs, roles, leaf subnets, ASNs (filled at load by racfg.inventory.leafspine)
    topology: Topology = field(default_factory=lambda: Topology("single", "ethernet"))

    @property
    def fabric(self) -> m.Fabric:
        return self.inventory.fabric

    @property
    def name(self) -> str:
        return self.inventory.site.name

    def role(self, role: str) -> list[ClusterHost]:
        return [h for h in self.hosts if h.role == role]

    def where(self, loc: Loc) -> str:
        """``inventory/lab.yaml:23 hosts[3].nics[0].port``."""
        return f"{self.display}:{line_of(self.root, loc)} {format_path(loc)}"

    def line(self, loc: Loc) -> int:
        return line_of(self.root, loc)

    @property
    def known_hosts_file(self) -> Path | None:
        """``site.known_hosts`` as a path on the controller (relative to the inventory file, like
        every path in it), or None: the user's files (racfg.ssh.known_hosts)."""
        named = self.inventory.site.known_hosts
        if not named:
            return None
        path = Path(os.path.expanduser(named))
        return path if path.is_absolute() else (self.path.parent / path).absolute()

    def ofed_source_on_controller(self) -> Path | None:
        """The mlnx flavor's source as a path on the controller (a relative path is relative to
        the inventory file, like every path in it), or None when there is none or the hosts read
        it themselves (an http(s) URL). Render hands the role this absolute path; preflight checks it."""
        ofed = self.inventory.software.ofed
        if ofed is None or ofed.flavor != "mlnx" or not ofed.source or ofed.source.startswith(HOST_READ_PREFIXES):
            return None
        return self.on_controller(ofed.source)

    def on_controller(self, value: str) -> Path:
        """A path the inventory names on the controller (an installer, a signing key): relative
        to the inventory file, like every path in it."""
        path = Path(os.path.expanduser(value))
        return path if path.is_absolute() else self.path.parent / path


def _pick(name: str, host: m.Host, defaults: m.Defaults) -> tuple[Any, Loc]:
    """A host field from the host, else its role's defaults, else defaults.all; with its source path."""
    value = getattr(host, name)
    if value is not None:
        return value, ()
    for scope in (host.role, "all"):
        value = getattr(getattr(defaults, scope), name)
        if value is not None:
            return value, ("defaults", scope, name)
    return None, ()


def resolve_switch(index: int, spec: m.Switch) -> ClusterSwitch:
    """Attach the catalog model (or one built from the inventory's port count) to a switch."""
    known = SWITCH_MODELS.get(spec.model)
    ports = spec.ports or (known.ports if known else 0)
    per_slot = spec.ports_per_slot if spec.ports_per_slot is not None else (known.ports_per_slot if known else 0)
    speed = known.speed_gbps if known else 100.0
    model = SwitchModel(spec.model, spec.platform, ports, speed, per_slot)
    return ClusterSwitch(spec, model, ("switches", index))


def check_size(inv: m.Inventory) -> None:
    """Raise TooLarge at the host entry whose ranges take the site past MAX_EXPANDED."""
    expanded = 0
    for index, host in enumerate(inv.hosts):
        nics = _pick("nics", host, inv.defaults)[0] or []
        drives = _pick("drives", host, inv.defaults)[0] or []
        expanded += range_size(host.name) * (1 + len(nics) + sum(range_size(d.path) for d in drives))
        if expanded > MAX_EXPANDED:
            raise TooLarge(("hosts", index, "name"), f"the hosts expand to more than {MAX_EXPANDED:,} hosts, "
                           "NICs and drives with this entry")


def build_cluster(inv: m.Inventory, path: Path, display: str, root: Any) -> Cluster:
    """Expand ranges and defaults into concrete hosts. Never raises for RA-level problems:
    those are policy findings (an unknown switch, a port off the panel ...)."""
    cluster = Cluster(inv, path, display, root)
    for index, spec in enumerate(inv.switches):
        cluster.switches.setdefault(spec.name, resolve_switch(index, spec))
    check_size(inv)
    for h_index, host in enumerate(inv.hosts):
        names = expand_range(host.name)
        nics, nics_src = _pick("nics", host, inv.defaults)
        nics = nics or []
        drives, drives_src = _pick("drives", host, inv.defaults)
        stride, _ = _pick("port_stride", host, inv.defaults)
        model_name, _ = _pick("model", host, inv.defaults)
        gpus, _ = _pick("gpus", host, inv.defaults)
        if gpus is None:
            known = HOST_MODELS.get(model_name or "")
            gpus = known.gpus if known else 0
        gpu_model, _ = _pick("gpu_model", host, inv.defaults)
        if gpu_model is None and HOST_MODELS.get(model_name or "") is not None:
            gpu_model = HOST_MODELS[model_name or ""].gpu_model or None
        host_vars, _ = _pick("vars", host, inv.defaults)
        per_switch: dict[str, int] = {}
        for nic in nics:
            per_switch[nic.switch] = per_switch.get(nic.switch, 0) + 1
        base_mgmt = ipaddress.IPv4Address(host.mgmt)
        for k, name in enumerate(names):
            host_src: Loc = ("hosts", h_index)
            resolved_nics = []
            for n_index, nic in enumerate(nics):
                src = (nics_src or (*host_src, "nics")) + (n_index,)
                resolved_nics.append(_resolve_nic(cluster, nic, k, stride or per_switch[nic.switch], src))
            resolved_drives = []
            for d_index, drive in enumerate(drives or []):
                src = (drives_src or (*host_src, "drives")) + (d_index,)
                for path_name in expand_range(drive.path):
                    resolved_drives.append(ClusterDrive(path_name, drive.model, drive.size, src))
            cluster.hosts.append(
                ClusterHost(
                    name=name,
                    role=host.role,
                    mgmt=base_mgmt + k,
                    ssh_user=_pick("ssh_user", host, inv.defaults)[0] or "root",
                    ssh_key=_pick("ssh_key", host, inv.defaults)[0],
                    ssh_port=_pick("ssh_port", host, inv.defaults)[0] or 22,
                    model=model_name,
                    gpus=gpus,
                    drives=resolved_drives,
                    wipe_drives=bool(_pick("wipe_drives", host, inv.defaults)[0]),
                    nics=resolved_nics,
                    vars=dict(host_vars or {}),
                    src=host_src,
                    range_index=k,
                    gpu_model=gpu_model,
                    python=_pick("python", host, inv.defaults)[0],
                    known_hosts=cluster.known_hosts_file,
                )
            )
    return cluster


def _resolve_nic(cluster: Cluster, nic: m.Nic, k: int, stride: int, src: Loc) -> ClusterNic:
    fabric = cluster.inventory.fabric
    base = ipaddress.IPv4Interface(nic.address)
    address = ipaddress.IPv4Interface(f"{base.ip + k}/{base.network.prefixlen}")
    speed = parse_speed(nic.speed) if nic.speed is not None else fabric.speed_gbps
    mtu = nic.mtu if nic.mtu is not None else fabric.effective_host_mtu
    switch = cluster.switches.get(nic.switch)
    port = index = lane = error = None
    if switch is not None:
        try:
            first = parse_port(switch.platform, nic.port, switch.model)
            index = first.index + k * stride
            lane = first.lane
            port = port_by_index(switch.platform, index, switch.model)
            if lane is not None:
                port += f"/{lane}"
        except ValueError as exc:
            error = str(exc)
    return ClusterNic(nic.name, address, nic.switch, port, index, lane, speed, mtu, src, error)
