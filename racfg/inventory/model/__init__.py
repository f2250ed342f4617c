"""The inventory file's schema: one site, as a user writes it.

Strict on purpose (``extra="forbid"``): a typo such as ``mtu: 9000`` under the wrong key must
fail loudly rather than deploy a default. Compact forms (name ranges like ``dgx[01:09]``,
per-role ``defaults``) are part of the schema; racfg.inventory.cluster expands them.

One module per part of the file (site and fabric, switches, hosts, software, acceptance, array);
this package holds the whole file, ``Inventory``, and re-exports every section.
"""

from __future__ import annotations

from pydantic import Field

from racfg.inventory.model.acceptance import (
    SHAPE_PATTERN,
    Acceptance,
    Budget,
    Equivalence,
    NcclTests,
    Reference,
    Shape,
    Smoke,
    StepKey,
    UserBenchmark,
)
from racfg.inventory.model.array import StorageArray
from racfg.inventory.model.base import NAME_PATTERN, Speed, Strict
from racfg.inventory.model.hosts import Defaults, Drive, Host, HostBase, HostDefaults, Nic
from racfg.inventory.model.scheduler import Partition, Scheduler, SlurmController
from racfg.inventory.model.site import Fabric, Site
from racfg.inventory.model.software import Ofed, OsPin, Software, Tuning, Weka
from racfg.inventory.model.switches import Credentials, Links, Switch


class Inventory(Strict):
    """One reference-architecture site."""

    site: Site
    fabric: Fabric
    switches: list[Switch] = Field(min_length=1)
    links: list[Links] = Field(default_factory=list, description="leaf-spine: the inter-switch cabling.")
    defaults: Defaults = Field(default_factory=Defaults)
    hosts: list[Host] = Field(min_length=1)
    software: Software = Field(default_factory=Software)
    array: StorageArray | None = Field(None, description="External storage array the GPU servers mount (seed 002).")
    acceptance: Acceptance = Field(default_factory=Acceptance)
    scheduler: Scheduler | None = Field(
        None, description="The workload manager the site runs its jobs through (Slurm): racfg gate drains and "
        "resumes its nodes, the node check runs as its HealthCheckProgram, smoke launches steps through it.")


__all__ = [
    "NAME_PATTERN", "SHAPE_PATTERN", "Acceptance", "Budget", "Credentials", "Defaults", "Drive",
    "Equivalence", "Fabric", "Host", "HostBase", "HostDefaults", "Inventory", "Links", "NcclTests", "Nic",
    "Ofed", "OsPin", "Partition", "Reference", "Scheduler", "Shape", "Site",
    "SlurmController", "Smoke", "Software", "Speed", "StepKey", "StorageArray",
    "Strict", "Switch", "Tuning", "UserBenchmark", "Weka",
]
