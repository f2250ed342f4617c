"""What a validator is parametrised over: hosts, NICs, drives, sysctls, switches, ports ...

Each subject knows its ``target`` (the host or switch a result is filed under) and its ``label``
(the bracket part of the check id, ``dgx03/network/mtu[data0]``), so check ids are stable and
derived from the inventory alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Subject:
    target: str
    label: str = ""

    def __str__(self) -> str:
        return f"{self.target}[{self.label}]" if self.label else self.target


@dataclass(frozen=True)
class HostSubject(Subject):
    role: str = ""
    vars: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class NicSubject(Subject):
    role: str = ""
    nic: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def name(self) -> str:
        return str(self.nic["name"])


@dataclass(frozen=True)
class DriveSubject(Subject):
    drive: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class SettingSubject(Subject):
    """A named setting of a host (sysctl key, package, consistency attribute) and its expected value."""

    role: str = ""
    value: Any = None


@dataclass(frozen=True)
class SwitchSubject(Subject):
    vars: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class PortSubject(Subject):
    port: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
