"""What a running lab is made of, on disk, so that status, exec, faults and down can find it.

``lab_root()/<site>/state.json`` is written step by step during ``lab up`` (so a failed up
can still be torn down) and read by everything else. Teardown does not depend on it: it also
finds the lab's resources by name (see names.py), so a lost state file leaves nothing stuck.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from racfg.paths import lab_root


@dataclass
class HostState:
    name: str
    role: str
    netns: str
    mgmt: str
    root: str  # overlay mount point (the machine's /)
    pid: int | None = None  # systemd-nspawn
    drives: dict[str, str] = field(default_factory=dict)  # inventory path -> /dev/loopN
    nics: list[str] = field(default_factory=list)


@dataclass
class SwitchState:
    name: str
    platform: str
    netns: str
    mgmt: str
    config: str  # cli.json
    pid: int | None = None  # switch CLI process, None when not started
    lldpd_pid: int | None = None  # the switch's lldpd (Ethernet platforms), see lldpd.py


@dataclass
class CableState:
    """A cable as it is plugged now: host NIC -> switch port. After ``lab swap`` the switch end
    (switch, port, device, rate) is the other cable's inventory port; ``swapped_with`` names it."""

    host: str
    nic: str
    switch: str
    port: str  # canonical port name where the cable lands now (the inventory's unless swapped)
    switch_ifname: str
    speed_gbps: float
    lab_rate_mbit: int
    swapped_with: str = ""  # "host:nic" of the cable whose switch port this one took, "" as cabled

    @property
    def key(self) -> str:
        return f"{self.host}:{self.nic}"


@dataclass
class LabState:
    site: str
    inventory: str
    inventory_hash: str
    mgmt_bridge: str
    mgmt_gateway: str  # CIDR on the root-namespace bridge
    fabric: str
    scale_mbit_per_100g: int
    image: str
    repo: str
    started: str
    complete: bool = False
    hosts: dict[str, HostState] = field(default_factory=dict)
    switches: dict[str, SwitchState] = field(default_factory=dict)
    cables: list[CableState] = field(default_factory=list)
    controller: HostState | None = None  # the scheduler's controller machine (slurm.py), when declared

    def machines(self) -> list[HostState]:
        """Every nspawn machine of the lab: the inventory's hosts, then the Slurm controller if any."""
        return [*self.hosts.values(), *([self.controller] if self.controller is not None else [])]

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabState:
        data = dict(data)
        data["hosts"] = {k: HostState(**v) for k, v in data.get("hosts", {}).items()}
        data["switches"] = {k: SwitchState(**v) for k, v in data.get("switches", {}).items()}
        data["cables"] = [CableState(**c) for c in data.get("cables", [])]
        data["controller"] = HostState(**data["controller"]) if data.get("controller") else None
        return cls(**data)


def site_dir(site: str) -> Path:
    return lab_root() / site


def state_path(site: str) -> Path:
    return site_dir(site) / "state.json"


def load_state(site: str) -> LabState | None:
    path = state_path(site)
    try:
        return LabState.from_dict(json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError):
        return None  # a torn write from a killed `lab up`: teardown finds things by name


def save_state(state: LabState) -> None:
    path = state_path(state.site)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(state.to_json())
    os.replace(tmp, path)


def known_sites() -> list[str]:
    root = lab_root()
    if not root.is_dir():
        return []
    return sorted(p.parent.name for p in root.glob("*/state.json"))


def no_lab_running(root: Path) -> bool:
    """True when no lab of any site is up or being built: no state file under ``root``, no
    ``rf-`` namespace on the machine (labs of other lab roots count too), no held site lock."""
    from racfg_lab.names import NETNS_PREFIX
    from racfg_lab.netns import list_netns

    if any(root.glob("*/state.json")) or any(ns.startswith(NETNS_PREFIX) for ns in list_netns()):
        return False
    for lock in root.glob("*-lab.lock"):
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released with the fd below
        except BlockingIOError:
            return False  # a lab up (or down) of that site is running now
        finally:
            os.close(fd)
    return True
