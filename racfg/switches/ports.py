"""Port names both ways: what the inventory writes (canonical) and what a switch prints.

Onyx prints ``Eth1/1`` (breakout ``Eth1/1/2``), MLNX-OS IB ``IB1/1``, EOS ``Ethernet1`` or
``Et1`` (modular ``Ethernet3/1``). Canonical names are the catalog's: ``1/1``, ``1/1/2``,
``Ethernet1``, ``Ethernet3/1``. Anything else (VLANs, port channels, management) is not a
front-panel port and normalises to None.
"""

from __future__ import annotations

import re

_MLNX_RE = re.compile(r"^(?:eth(?:ernet)?|ib)?\s*(1/\d+(?:/\d+)?)$", re.I)
_EOS_RE = re.compile(r"^(?:ethernet|eth|et)\s*(\d+(?:/\d+){0,2})$", re.I)


def canonical_port(platform: str, name: str) -> str | None:
    """``Eth1/1`` -> ``1/1``; ``Et3/1`` -> ``Ethernet3/1``; ``Vlan 10``, ``Po1``, ``Management1`` -> None."""
    text = name.strip()
    if platform in ("onyx", "mlnxos-ib"):
        match = _MLNX_RE.match(text)
        return match.group(1) if match else None
    match = _EOS_RE.match(text)
    return f"Ethernet{match.group(1)}" if match else None


def device_port(platform: str, canonical: str, short: bool = False) -> str:
    """``1/1`` -> ``Eth1/1`` (Onyx) / ``IB1/1`` (IB); ``Ethernet1`` -> ``Ethernet1`` or ``Et1`` when short."""
    if platform == "onyx":
        return f"Eth{canonical}"
    if platform == "mlnxos-ib":
        return f"IB{canonical}"
    return canonical.replace("Ethernet", "Et", 1) if short else canonical


def interface_command(platform: str, canonical: str) -> str:
    """The config command that enters a port's interface mode."""
    if platform == "onyx":
        return f"interface ethernet {canonical}"
    if platform == "mlnxos-ib":
        return f"interface ib {canonical}"
    return f"interface {canonical}"


def port_sort_key(name: str) -> tuple[int, ...]:
    """Order ``1/2`` before ``1/10`` and ``Ethernet2/1`` after ``Ethernet1/8``."""
    return tuple(int(n) for n in re.findall(r"\d+", name))
