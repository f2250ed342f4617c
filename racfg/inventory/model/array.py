"""An external storage array the GPU servers mount instead of Weka hosts (seed 002)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from racfg.inventory.model.base import NAME_PATTERN, Strict
from racfg.inventory.model.text import AbsPath, HostOrAddress, MountOption, MountPoint, Text


class StorageArray(Strict):
    """External shared storage that is one appliance rather than Weka hosts (seed 002: GPU servers on an
    IntelliFlash N5800 NVMe all-flash array over NFS). racfg does not configure the array; it sizes it in
    the budget (mixed-I/O throughput x the share given to training), mounts its export on the GPU
    servers, checks the mount and measures through it."""

    name: str = Field(pattern=NAME_PATTERN, description="Name of the array (reports, BOM).")
    model: Text = Field(description="Array model, e.g. IntelliFlash N5800 (see racfg catalog).")
    count: int = Field(1, ge=1, le=64, description="Arrays of this model behind the export (the budget adds them).")
    mixed_gbytes_per_s: float | None = Field(
        None, gt=0, description="Mixed-I/O throughput of one array at read_percent reads (GB/s); "
        "default: the catalog's figure for the model (N5800: 23.5).")
    read_percent: int | None = Field(None, ge=0, le=100, description="Read share of that mix, e.g. 80 (80/20).")
    training_share: float = Field(
        0.3, gt=0, le=1, description="Share of the array's bandwidth given to training (the talk: 30%; "
        "the rest serves preparation, inference and other work).")
    protocol: Literal["nfs", "sshfs"] = Field(
        "nfs", description="nfs: kernel NFS client. sshfs: FUSE over SFTP (the lab's stand-in where the "
        "kernel has no NFS client).")
    server: HostOrAddress = Field(description="Data-fabric IPv4 address (or host name) the export is served on.")
    export: AbsPath = Field(description="Exported path on the server, e.g. /export/ai.")
    mount_point: MountPoint = Field("/mnt/array", description="Where the GPU servers mount it (an absolute path "
                                    "without blanks, not /).")
    mount_options: list[MountOption] = Field(
        default_factory=lambda: ["hard", "proto=tcp", "vers=3", "rsize=1048576", "wsize=1048576"],
        description="Mount options, one per item; validate checks those the kernel reports in /proc/mounts.")
    clients: Literal["dgx", "none"] = Field("dgx", description="Which hosts mount the export.")
