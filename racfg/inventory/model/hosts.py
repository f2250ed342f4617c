"""The hosts: their NICs and cabling, drives, and the defaults each role inherits."""

from __future__ import annotations

import ipaddress
from typing import Any, Literal

from pydantic import Field, field_validator

from racfg.inventory.model.base import NAME_PATTERN, Speed, Strict, _check_ipv4, _check_speed
from racfg.inventory.model.text import AbsPath, LocalPath, Port, Text, UserName, VarName, Version
from racfg.inventory.ranges import check_range


class Nic(Strict):
    """A data NIC of a host and the switch port its cable goes to."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]{1,15}$", description="Interface name on the host (<= 15 chars).")
    address: str = Field(description="IPv4 address with prefix, e.g. 198.19.0.11/24. Increments across a range.")
    switch: str = Field(pattern=NAME_PATTERN, description="Name of the switch this NIC is cabled to.")
    port: Port | int = Field(description="Switch port (1/1, Eth1/1, Ethernet1, Et1). Increments across a range.")
    speed: Speed | None = Field(None, description="Line rate; default: the fabric speed.")
    mtu: int | None = Field(None, ge=576, le=65520, description="Override of fabric.host_mtu for this NIC.")

    _speed = field_validator("speed")(_check_speed)

    @field_validator("address")
    @classmethod
    def _address(cls, value: str) -> str:
        if "/" not in value:
            raise ValueError("expected an address with prefix length, e.g. 198.19.0.11/24")
        ipaddress.IPv4Interface(value)
        return value


class Drive(Strict):
    """An NVMe drive (or a range of them) a storage host must have."""

    path: str = Field(
        pattern=r"^/dev/[A-Za-z0-9_/\-\[\]:]+$",
        description="Block device path; a range such as /dev/nvme[0:5]n1 names several drives.",
    )
    model: Text | None = Field(None, description="Expected drive model, as nvme list reports it.")
    size: Version | None = Field(None, description="Expected size, e.g. 3.2T (validated when given).")

    @field_validator("path")
    @classmethod
    def _range(cls, value: str) -> str:
        check_range(value)
        return value


class HostBase(Strict):
    """Fields a host entry and a ``defaults`` entry share."""

    ssh_user: UserName | None = Field(None, description="SSH login on the host (default root).")
    ssh_key: LocalPath | None = Field(None, description="Private key file for SSH (path, ~ expanded).")
    ssh_port: int | None = Field(None, ge=1, le=65535, description="SSH port of the host (default 22).")
    python: AbsPath | None = Field(None, description="Absolute path of the host's Python 3, which Ansible runs "
                                   "the roles' modules with (default /usr/bin/python3).")
    model: Text | None = Field(None, description="Server model, e.g. DGX-1; known models give GPU and drive counts.")
    gpus: int | None = Field(None, ge=0, le=64, description="dgx hosts: expected GPU count (default: from model).")
    gpu_model: Text | None = Field(None, description="dgx hosts: GPU model for the bill of materials, e.g. "
                                   "Tesla V100 SXM2 16GB (default: from model).")
    drives: list[Drive] | None = Field(None, description="storage hosts: NVMe drives for Weka.")
    wipe_drives: bool | None = Field(
        None, description="storage hosts: allow wiping free drives that carry data; a drive in use (mounted, swap, "
        "held by LVM, md or device-mapper, or unreadable) is never wiped.")
    nics: list[Nic] | None = Field(None, description="Data NICs and the switch port each is cabled to.")
    port_stride: int | None = Field(
        None, ge=1, description="Across a name range, how far each NIC's port advances per host "
        "(default: number of NICs cabled to that switch)."
    )
    vars: dict[VarName, Any] | None = Field(
        None, description="Extra Ansible host variables, e.g. a role's setting. Not Ansible's connection, become "
        "or shell variables (ansible_*), racfg's own (racfg_*) nor Ansible's reserved names (hostvars, groups, "
        "omit, environment ...): see 'Values racfg refuses' in the inventory guide.")


class HostDefaults(HostBase):
    """What every host of a role inherits unless it sets the key itself."""


class Host(HostBase):
    """A host, or a range of hosts (dgx[01:09]) whose addresses and ports increment."""

    name: str = Field(pattern=NAME_PATTERN, description="Host name, or a range such as dgx[01:09].")
    role: Literal["dgx", "storage"] = Field(description="dgx: a GPU server; storage: a WekaFS storage node.")
    mgmt: str = Field(description="Management IPv4 address. Increments across a range.")

    @field_validator("name")
    @classmethod
    def _range(cls, value: str) -> str:
        check_range(value)
        return value

    _mgmt = field_validator("mgmt")(_check_ipv4)


class Defaults(Strict):
    """Values every host of a role inherits unless it sets them itself."""

    all: HostDefaults = Field(default_factory=HostDefaults)
    dgx: HostDefaults = Field(default_factory=HostDefaults)
    storage: HostDefaults = Field(default_factory=HostDefaults)
