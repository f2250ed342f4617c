"""InfiniBand / RDMA adapters: ``ibv_devinfo`` (what validate runs on every host: it is in
rdma-core and OFED alike, where ``ibstat`` needs infiniband-diags).

Read into per-device, per-port facts (:class:`IbPort`) so a validator can ask "is every HCA port
ACTIVE with IB MTU 4096". Formats read: ``ibv_devinfo`` / ``ibv_devinfo -d DEV`` without ``-v``
(``state: PORT_ACTIVE (4)``, ``active_mtu: 4096 (5)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from racfg.hostfacts.common import first_number, require_text, split_key_value
from racfg.hostfacts.parse_error import ParseError

# IB port physical states by number (IBTA), in the spelling ibstat prints.
_PHYS_STATES = {
    1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp",
    6: "LinkErrorRecovery", 7: "PhyTest",
}
_PHYS_BY_NAME = {name.lower(): name for name in _PHYS_STATES.values()} | {"link_up": "LinkUp"}


@dataclass(frozen=True)
class IbPort:
    """One HCA port. ``state`` is DOWN/INIT/ARMED/ACTIVE whatever the tool's spelling; ``rate_gbps``
    and ``phys_state`` are None when the tool does not print them (``ibv_devinfo`` without ``-v``)."""

    device: str
    port: int
    state: str
    phys_state: str | None = None
    rate_gbps: float | None = None
    active_mtu: int | None = None
    link_layer: str | None = None  # "InfiniBand" or "Ethernet" (RoCE)

    @property
    def active(self) -> bool:
        return self.state == "ACTIVE"


@dataclass(frozen=True)
class IbDevice:
    """One HCA (``mlx5_0``) with what the tool says about it and its ports."""

    name: str
    ports: tuple[IbPort, ...]
    ca_type: str | None = None
    firmware: str | None = None
    node_guid: str | None = None


def _state(value: str, tool: str) -> str:
    """``Active``, ``4: ACTIVE``, ``PORT_ACTIVE (4)`` -> ``ACTIVE``."""
    word = re.sub(r"\(\d+\)|^\d+:", "", value).strip().upper().removeprefix("PORT_")
    if word not in {"DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER", "NOP"}:
        raise ParseError(tool, f"unknown port state {value!r}")
    return word


def _phys_state(value: str, tool: str) -> str:
    """``LinkUp``, ``5: LinkUp``, ``LINK_UP (5)`` -> ``LinkUp``."""
    number = re.search(r"(?:^|\()(\d+)(?::|\))", value)
    if number and int(number.group(1)) in _PHYS_STATES:
        return _PHYS_STATES[int(number.group(1))]
    word = re.sub(r"\(\d+\)", "", value).strip().lower()
    if word not in _PHYS_BY_NAME:
        raise ParseError(tool, f"unknown physical state {value!r}")
    return _PHYS_BY_NAME[word]


def _mtu(value: str, tool: str) -> int:
    """``4096 (5)`` -> 4096."""
    return int(first_number(value, tool, "active_mtu"))


def parse_ibv_devinfo(text: str | bytes) -> list[IbDevice]:
    """Parse ``ibv_devinfo`` / ``ibv_devinfo -d DEV`` (``-v`` adds lines that are read where known)."""
    tool = "ibv_devinfo"
    devices: list[tuple[dict[str, str], list[dict[str, str]]]] = []
    for line in require_text(text, tool):
        pair = split_key_value(line)
        if pair is None:
            # -v continues flag lists on indented lines without a colon (``\t\t\t\t\tBAD_PKEY_CNT``).
            if line.strip() and not (devices and line[:1].isspace()):
                raise ParseError(tool, f"unexpected line {line.strip()[:80]!r}")
            continue
        key, value = pair
        if key == "hca_id":
            devices.append(({"hca_id": value}, []))
        elif not devices:
            raise ParseError(tool, f"unexpected line before hca_id: {line.strip()[:80]!r}")
        elif key == "port":
            devices[-1][1].append({"port": value})
        elif devices[-1][1]:
            devices[-1][1][-1][key] = value
        else:
            devices[-1][0][key] = value
    if not devices:
        raise ParseError(tool, "no hca_id listed (no RDMA device, or not ibv_devinfo output)")
    result = []
    for fields, ports in devices:
        name = fields["hca_id"]
        result.append(IbDevice(
            name=name, firmware=fields.get("fw_ver"), node_guid=fields.get("node_guid"),
            ca_type=f"MT{fields['vendor_part_id']}" if "vendor_part_id" in fields else None,
            ports=tuple(_devinfo_port(name, port) for port in ports),
        ))
    return result


def _devinfo_port(device: str, fields: dict[str, str]) -> IbPort:
    tool = "ibv_devinfo"
    if "state" not in fields:
        raise ParseError(tool, f"{device} port {fields['port']}: no state line")
    return IbPort(
        device=device, port=int(first_number(fields["port"], tool, "port")), state=_state(fields["state"], tool),
        phys_state=_phys_state(fields["phys_state"], tool) if "phys_state" in fields else None,
        active_mtu=_mtu(fields["active_mtu"], tool) if "active_mtu" in fields else None,
        link_layer=fields.get("link_layer"),
    )
