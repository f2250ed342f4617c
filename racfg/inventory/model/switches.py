"""The switches, their credentials, and the links between them (leaf-spine sites)."""

from __future__ import annotations

import ipaddress
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from racfg.inventory.model.base import NAME_PATTERN, Speed, Strict, _check_ipv4, _check_pool, _check_speed
from racfg.inventory.model.text import EnvName, LocalPath, Port, Text, UserName, Version
from racfg.inventory.ranges import check_range


class Credentials(Strict):
    """Where a switch's password is found. The secret itself never sits in the inventory."""

    username: UserName = Field("admin", description="Login name on the switch.")
    password_env: EnvName | None = Field(None, description="Environment variable holding the password.")
    password_file: LocalPath | None = Field(None, description="File (mode 0600) holding the password.")
    password_vault: LocalPath | None = Field(None, description="ansible-vault encrypted file holding the password.")
    lab: bool = Field(False, description="Lab switch: racfg finds the password the lab generated.")
    password: Any = Field(None, description="Refused: passwords are never written in the inventory.", exclude=True)

    @model_validator(mode="after")
    def _one_source(self) -> Credentials:
        if self.password is not None:
            raise ValueError(
                "a password in clear text is not allowed in the inventory; "
                "use password_env, password_file (0600) or password_vault"
            )
        sources = [s for s in (self.password_env, self.password_file, self.password_vault) if s]
        if len(sources) + int(self.lab) != 1:
            raise ValueError("give exactly one of password_env, password_file, password_vault or lab: true")
        return self


class Switch(Strict):
    """One data switch: its platform and model, how racfg logs in, and what it pins."""

    name: str = Field(pattern=NAME_PATTERN, description="Switch name, as host NICs refer to it.")
    platform: Literal["onyx", "eos", "mlnxos-ib"] = Field(
        description="CLI platform: onyx (Mellanox Ethernet), eos (Arista), mlnxos-ib (Mellanox InfiniBand).")
    model: Text = Field(description="Switch model, e.g. SN2700, SB7800, 7368X (see racfg catalog).")
    ports: int | None = Field(None, ge=1, le=1024, description="Port count; required for models racfg does not know.")
    ports_per_slot: int | None = Field(None, ge=1, description="Modular chassis: ports per line card.")
    mgmt: str = Field(description="Management IPv4 address (SSH).")
    ssh_port: int = Field(22, ge=1, le=65535, description="SSH port of the switch CLI.")
    credentials: Credentials
    os_version: Version | None = Field(None, description="Expected OS version; validate/drift report a mismatch.")
    shutdown_unused: bool = Field(False, description="Administratively shut ports with no cable in the inventory.")
    role: Literal["leaf", "spine"] | None = Field(
        None, description="leaf-spine: leaf (carries hosts, routes their subnets) or spine (carries only leaves).")
    asn: int | None = Field(None, ge=1, le=4294967294,
                            description="leaf-spine leaf: its own BGP ASN (default: from fabric.leaf_asn_first).")
    gateways: list[str] = Field(
        default_factory=list, description="leaf-spine leaf: gateway addresses with prefix, e.g. 198.19.1.254/24, "
        "one per host subnet that should not use the default (the subnet's first host address).")

    @field_validator("gateways")
    @classmethod
    def _gateways(cls, value: list[str]) -> list[str]:
        for item in value:
            if "/" not in item:
                raise ValueError(f"{item}: expected an address with prefix length, e.g. 198.19.1.254/24")
            ipaddress.IPv4Interface(item)
        return value

    @model_validator(mode="after")
    def _leaf_only(self) -> Switch:
        if self.role != "leaf" and (self.asn is not None or self.gateways):
            raise ValueError("asn and gateways belong to a leaf (spines share fabric.spine_asn)")
        return self

    _mgmt = field_validator("mgmt")(_check_ipv4)


class Links(Strict):
    """Inter-switch links of a leaf-spine fabric, as a block: every leaf of ``leaves`` to every spine of
    ``spines`` with ``count`` cables each. On a leaf, the uplinks run from ``leaf_port`` up, spine by spine;
    on a spine, from ``spine_port`` up, leaf by leaf (8 leaves x 2 spines x 2 links is one entry)."""

    leaves: str = Field(pattern=NAME_PATTERN, description="Leaf switch name, or a range such as leaf[1:8].")
    spines: str = Field(pattern=NAME_PATTERN, description="Spine switch name, or a range such as spine[1:2].")
    count: int = Field(1, ge=1, le=64, description="Links between each leaf and each spine.")
    leaf_port: Port | int = Field(description="First uplink port on each leaf; increments per link.")
    spine_port: Port | int = Field(description="First port on each spine; increments per link.")
    speed: Speed | None = Field(None, description="Line rate of these links; default: the fabric speed.")
    pool: str | None = Field(
        None, description="Ethernet: /31 pool for these links (default: the next /31s of fabric.p2p_pool).")
    pfc: bool = Field(False, description="Priority flow control on these links. The RA runs without it.")

    _speed = field_validator("speed")(_check_speed)

    @field_validator("leaves", "spines")
    @classmethod
    def _range(cls, value: str) -> str:
        check_range(value)
        return value

    _pool = field_validator("pool")(_check_pool)
