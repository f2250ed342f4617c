"""The site's scheduler: the Slurm that already runs its work, which racfg drains and resumes.

racfg does not install or configure the scheduler (the site runs it); the section says where its
controller is and how its nodes are grouped, so that ``racfg gate`` can keep jobs off a node
whose problem racfg named, the node check can drain its own node, and smoke can launch its
multi-node steps as job steps. Nodes are the inventory's hosts, under the same names.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from racfg.inventory.model.base import NAME_PATTERN, Strict, _check_ipv4
from racfg.inventory.ranges import check_range


def _host_names(entry: str) -> str:
    if not re.match(NAME_PATTERN, entry):
        raise ValueError("expected a host name or a name range such as dgx[01:08]")
    check_range(entry)
    return entry


HostNames = Annotated[str, AfterValidator(_host_names)]  # a host name or a name range, checked per entry
SLURM_NAME = r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,31}$"


class SlurmController(Strict):
    """The host slurmctld runs on. racfg runs ``scontrol``/``sinfo`` there over SSH (as root, with
    the hosts' key and known_hosts) unless ``scheduler.commands`` is ``local``."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9\-]{0,62}$",
                      description="The controller's host name (slurm.conf SlurmctldHost).")
    address: str = Field(description="The controller's management IPv4 address: slurmctld listens there and racfg "
                         "reaches it over SSH.")
    ssh_user: str = Field("root", pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$",
                          description="The user racfg logs in as on the controller (it needs scontrol update rights).")

    _address = field_validator("address")(_check_ipv4)


class Partition(Strict):
    """A Slurm partition: the inventory hosts it holds, by name, name range or role."""

    name: str = Field(pattern=SLURM_NAME, description="Partition name (letters, digits, '_' and '-', <= 32).")
    hosts: list[HostNames] = Field(
        default_factory=list,
        description="Hosts of this inventory in the partition: names or name ranges (dgx[01:08]).")
    roles: list[Literal["dgx", "storage", "client", "storage_client"]] = Field(
        default_factory=list, description="Every host of these roles is in the partition, besides `hosts`.")


class Scheduler(Strict):
    """The workload manager the site runs (Slurm), its controller and partitions."""

    type: Literal["slurm"] = Field(description="The scheduler: slurm.")
    controller: SlurmController
    partitions: list[Partition] = Field(min_length=1, description="The partitions; a host may be in several.")
    default_partition: str | None = Field(
        None, pattern=SLURM_NAME, description="The partition jobs land in by default: one of `partitions`. "
                                              "Default: the first.")
    commands: Literal["ssh", "local"] = Field(
        "ssh", description="Where racfg runs scontrol and sinfo: `ssh` on the controller, `local` where racfg runs "
        "(a login node with the Slurm client and its MUNGE key).")
    max_drain: float = Field(
        0.10, gt=0, le=1, description="`racfg gate`'s circuit breaker: the largest share of a partition it drains "
        "(never fewer than one node); `--max-drain` overrides it.")
    health_check_interval: int = Field(
        60, ge=10, le=86400, description="Seconds between runs of the node check deploy installs as Slurm's "
        "HealthCheckProgram (slurm.conf HealthCheckInterval).")
