"""``lab status``: what is up, what answers, how the cables are set, and what it all costs.

Everything is read from the kernel (link state, qdiscs, processes), not from the state file,
so the table shows the truth after faults and after a switch CLI changed a port.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from racfg_lab import lldpd, machines, names, slurm, switches
from racfg_lab.fabric import read_rate_mbit
from racfg_lab.netns import link_info, list_netns, netns_pids
from racfg_lab.state import LabState, site_dir
from racfg_lab.switchcli import lldp

RDMA_NOTE = ("InfiniBand fabric: host NICs are Ethernet stand-ins named as declared (e.g. ib0); "
             "RDMA is not emulated (no verbs devices, ib_* and perftest RDMA tests cannot pass)")


@dataclass
class NodeStatus:
    name: str
    kind: str  # dgx | storage | switch | slurmctld
    state: str  # up | down
    mgmt: str
    ssh: bool
    memory_mib: float
    slurm: str = ""  # the node's state as slurmctld has it (`idle`, `drained (reason)`), "" without a scheduler


@dataclass
class CableStatus:
    host: str
    nic: str
    switch: str
    port: str  # where the cable lands now
    rate_mbit: float | None  # switch -> host (tbf on the switch port)
    host_rate_mbit: float | None  # host -> switch (tbf on the host NIC)
    host_mtu: int | None
    switch_mtu: int | None
    host_carrier: bool
    switch_admin_up: bool
    switch_carrier: bool
    swapped_with: str = ""  # host:nic whose switch port this cable took (`lab swap`), "" as cabled


@dataclass
class LabStatus:
    site: str
    inventory: str
    fabric: str
    complete: bool
    nodes: list[NodeStatus] = field(default_factory=list)
    scheduler: str = ""  # the Slurm controller's name when the lab runs Slurm
    cables: list[CableStatus] = field(default_factory=list)
    memory_mib: float = 0.0
    disk_mib: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _pss_mib(pids: list[int]) -> float:
    """Proportional memory of processes (shared pages split between sharers), in MiB."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total / 1024


def _du_mib(path: Path) -> float:
    if not path.exists():
        return 0.0
    proc = subprocess.run(["du", "-sxm", str(path)], capture_output=True, text=True)
    try:
        return float(proc.stdout.split()[0])
    except (IndexError, ValueError):
        return 0.0


def collect(state: LabState) -> LabStatus:
    status = LabStatus(state.site, state.inventory, state.fabric, state.complete)
    present = set(list_netns())
    for host in state.machines():
        running = machines.is_running(host.pid) and host.netns in present
        pids = netns_pids(host.netns) + ([host.pid] if running and host.pid else [])
        status.nodes.append(NodeStatus(host.name, host.role, "up" if running else "down", host.mgmt,
                                       running and machines.ssh_banner(host.mgmt, timeout=1.0), _pss_mib(pids)))
    _slurm_states(state, status)
    for sw in state.switches.values():
        exists = sw.netns in present
        cli = bool(sw.pid) and machines.is_running(sw.pid, switches.CLI_MODULE)
        status.nodes.append(NodeStatus(sw.name, "switch", "up" if exists else "down", sw.mgmt,
                                       cli and machines.ssh_banner(sw.mgmt, timeout=1.0),
                                       _pss_mib(netns_pids(sw.netns)) if exists else 0.0))
        if exists and not cli:
            status.notes.append(f"switch {sw.name}: no SSH CLI running (data plane only)")
        if exists and lldp.runs_lldp(sw.platform) and not lldpd.is_up(sw):
            status.notes.append(f"switch {sw.name}: lldpd not running (its LLDP table is empty)")
    for cable in state.cables:
        host_ns = state.hosts[cable.host].netns
        sw_ns = state.switches[cable.switch].netns
        h = link_info(host_ns, cable.nic) if host_ns in present else {}
        s = link_info(sw_ns, cable.switch_ifname) if sw_ns in present else {}
        status.cables.append(CableStatus(
            cable.host, cable.nic, cable.switch, cable.port,
            read_rate_mbit(sw_ns, cable.switch_ifname) if s else None,
            read_rate_mbit(host_ns, cable.nic) if h else None,
            h.get("mtu"), s.get("mtu"),
            "LOWER_UP" in h.get("flags", []), "UP" in s.get("flags", []), "LOWER_UP" in s.get("flags", []),
            cable.swapped_with,
        ))
        if cable.swapped_with and cable.key < cable.swapped_with:  # one note per swapped pair
            status.notes.append(f"cables {cable.key} and {cable.swapped_with} are swapped at the switch "
                                f"(undo: racfg lab swap {cable.key} {cable.swapped_with} --undo)")
    status.memory_mib = round(sum(n.memory_mib for n in status.nodes), 1)
    status.disk_mib = _du_mib(site_dir(state.site))
    if state.fabric == "infiniband":
        status.notes.append(RDMA_NOTE)
    return status


def _slurm_states(state: LabState, status: LabStatus) -> None:
    """Each host's Slurm state, read with sinfo on the controller (a note when it does not answer)."""
    if state.controller is None:
        return
    status.scheduler = state.controller.name
    states = slurm.node_states(state)
    if states is None:
        status.notes.append(f"Slurm: slurmctld on {state.controller.name} did not answer sinfo")
        return
    for node in status.nodes:
        if node.name in state.hosts:
            node.slurm = states.get(node.name, "unknown to slurmctld")


def mgmt_bridge_present(site: str) -> bool:
    return os.path.exists(f"/sys/class/net/{names.mgmt_bridge(site)}")
