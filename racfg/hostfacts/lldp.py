"""``lldpcli -f json show neighbors`` (lldpd 1.0.x): who is cabled to each of the host's interfaces.

lldpd's JSON writer turns a list of one element into the element itself, so with one neighbour
``lldp.interface`` is an object keyed by interface name, with several it is a list of such one-key
objects; ``chassis`` is keyed by the system name in the same way. With no neighbour at all lldpd
prints ``{"lldp": {}}`` (or ``"interface": []``). Recorded with lldpd 1.0.16 in two network namespaces
(see tests/hostfacts/fixtures/capture_host_tools.sh).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from racfg.hostfacts.common import load_json
from racfg.hostfacts.parse_error import ParseError

TOOL = "lldpcli"


@dataclass(frozen=True)
class LldpNeighbour:
    """The far end of one local interface: switch name, its port id (``swp1``, ``Eth1/1``) and description."""

    local_interface: str
    system_name: str | None
    port_id: str | None
    port_description: str | None
    chassis_id: str | None = None


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def parse_lldp_neighbors(text: str | bytes) -> dict[str, list[LldpNeighbour]]:
    """Parse ``lldpcli -f json show neighbors``: local interface -> neighbours (usually one)."""
    data = load_json(text, TOOL)
    if not isinstance(data, dict) or not isinstance(data.get("lldp"), (dict, list)):
        raise ParseError(TOOL, "-f json: no 'lldp' object")
    result: dict[str, list[LldpNeighbour]] = {}
    for lldp in _as_list(data["lldp"]):
        for block in _as_list(lldp.get("interface")):
            if not isinstance(block, dict):
                raise ParseError(TOOL, "-f json: an interface entry is not an object")
            for local, neighbour in block.items():
                result.setdefault(local, []).append(_neighbour(local, neighbour))
    return result


def _neighbour(local: str, entry: Any) -> LldpNeighbour:
    if not isinstance(entry, dict):
        raise ParseError(TOOL, f"-f json: interface {local} is not an object")
    name, chassis = None, {}
    chassis_block = entry.get("chassis") or {}
    # Keyed by system name ({"leaf01": {...}}), or unnamed ({"id": {...}}) when the neighbour sends none.
    if isinstance(chassis_block, dict) and "id" not in chassis_block and len(chassis_block) == 1:
        name, chassis = next(iter(chassis_block.items()))
    elif isinstance(chassis_block, dict):
        chassis = chassis_block
    port = entry.get("port") or {}
    return LldpNeighbour(
        local_interface=local, system_name=name,
        port_id=(port.get("id") or {}).get("value"), port_description=port.get("descr"),
        chassis_id=(chassis.get("id") or {}).get("value") if isinstance(chassis, dict) else None,
    )
