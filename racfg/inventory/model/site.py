"""The site and its data fabric: name, time sources, fabric type, speed, MTUs, design and pools."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import Field, field_validator

from racfg.catalog import parse_speed
from racfg.inventory.model.base import Speed, Strict, _check_pool, _check_speed
from racfg.inventory.model.text import DnsName, HostOrAddress, LocalPath, Text


class Site(Strict):
    """The site: its name, and what every host shares (time sources, DNS domain)."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-]*$", description="Short site name, used in file names.")
    description: Text = Field("", description="Free text, shown in reports (one line, at most 256 characters).")
    time_sources: list[HostOrAddress] = Field(
        default_factory=list, description="NTP servers for chrony, each a host name or an IP address; empty: hosts "
        "keep their current sources."
    )
    dns_domain: DnsName | None = Field(None, description="Domain appended to host names in /etc/hosts: a DNS name "
                                       "(labels of letters, digits and '-' joined by '.').")
    known_hosts: LocalPath | None = Field(
        None, description="The site's known_hosts file (OpenSSH format): the host keys of its hosts and switches. "
        "Every SSH connection racfg makes (to hosts and switches, and deploy's OpenSSH) reads it instead of the "
        "user's ~/.ssh/known_hosts, besides /etc/ssh/ssh_known_hosts; a key it does not list is refused. "
        "Relative to the inventory file; `racfg hostkey accept` records new keys in it. Default: the user's.")
    lock_host: str | None = Field(
        None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$",
        description="The host that holds the site lock (deploy, drift and smoke take it there, in root's "
                    "/run/lock/racfg/): the name of one host of this inventory. Default: the first host. "
                    "Every controller of the site must use the same one.",
    )


class Fabric(Strict):
    """The data fabric. Defaults follow the RA: MTU 9000 Ethernet, IB 4096, no RoCE, no PFC."""

    type: Literal["ethernet", "infiniband"] = Field(description="Ethernet (Onyx, EOS) or InfiniBand (MLNX-OS).")
    speed: Speed = Field("100G", description="Per-port line rate of the data links.")
    host_mtu: int | None = Field(
        None, ge=576, le=65520,
        description="Host data NIC MTU. Default: 9000 on Ethernet; IPoIB 4092 (datagram) or 65520 (connected).",
    )
    ib_mtu: Literal[256, 512, 1024, 2048, 4096] | None = Field(
        None, description="InfiniBand link MTU (IB only). Default and RA value: 4096."
    )
    ipoib_mode: Literal["datagram", "connected"] | None = Field(
        None, description="IPoIB mode (IB only). Default: datagram."
    )
    switch_mtu: int | None = Field(
        None, ge=576, le=65535, description="Switch port MTU. Default: 9000 on Ethernet, 4096 on InfiniBand."
    )
    roce: bool = Field(False, description="RoCE on the fabric. The RA runs without it; true is a policy error.")
    pfc: bool = Field(False, description="Priority flow control on switches. The RA runs without it.")
    data_subnets: list[str] = Field(default_factory=list, description="CIDRs the data NIC addresses must lie in.")
    mgmt_subnet: str | None = Field(None, description="CIDR the management addresses must lie in (optional).")
    design: Literal["single", "leaf-spine"] = Field(
        "single", description="single: hosts hang off switches that are not linked; leaf-spine: a routed two-tier "
        "Clos (switches take role leaf or spine, links lists the inter-switch cabling).")
    max_oversubscription: float = Field(
        1.0, gt=0, description="leaf-spine: largest host-facing over uplink bandwidth of a leaf (1.0: non-blocking).")
    isl_mtu: int | None = Field(
        None, ge=576, le=65535, description="leaf-spine: MTU of the inter-switch links (default 9216 on Ethernet).")
    p2p_pool: str = Field(
        "10.255.0.0/16", description="leaf-spine Ethernet: pool the inter-switch links' /31 addresses are taken "
        "from, in order (spine side even, leaf side odd), unless a links entry gives its own pool.")
    spine_asn: int = Field(65100, ge=1, le=4294967294, description="leaf-spine Ethernet: the BGP ASN all spines share.")
    leaf_asn_first: int = Field(
        65101, ge=1, le=4294967294,
        description="leaf-spine Ethernet: ASN of the first leaf; the next leaves (in file order) count up, "
        "unless a leaf gives its asn.")

    _speed = field_validator("speed")(_check_speed)

    _pool = field_validator("p2p_pool")(_check_pool)

    @field_validator("data_subnets")
    @classmethod
    def _subnets(cls, value: list[str]) -> list[str]:
        for item in value:
            ipaddress.ip_network(item, strict=True)
        return value

    @field_validator("mgmt_subnet")
    @classmethod
    def _mgmt(cls, value: str | None) -> str | None:
        if value is not None:
            ipaddress.ip_network(value, strict=True)
        return value

    @property
    def effective_host_mtu(self) -> int:
        if self.host_mtu is not None:
            return self.host_mtu
        if self.type == "ethernet":
            return 9000
        return 65520 if self.effective_ipoib_mode == "connected" else 4092

    @property
    def effective_ipoib_mode(self) -> str:
        return self.ipoib_mode or "datagram"

    @property
    def effective_ib_mtu(self) -> int:
        return self.ib_mtu or 4096

    @property
    def effective_switch_mtu(self) -> int:
        if self.switch_mtu is not None:
            return self.switch_mtu
        return 9000 if self.type == "ethernet" else self.effective_ib_mtu

    @property
    def speed_gbps(self) -> float:
        return parse_speed(self.speed)

    @property
    def effective_isl_mtu(self) -> int:
        if self.isl_mtu is not None:
            return self.isl_mtu
        return 9216 if self.type == "ethernet" else self.effective_switch_mtu
