"""The software pins the roles install and validate checks: OS, OFED, Weka, NVIDIA driver, tuning."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from racfg.inventory.model.base import Strict
from racfg.inventory.model.text import FsName, MountPoint, Source, SysctlKey, SysctlValue, Text, Version, Word


class Ofed(Strict):
    """The RDMA stack: the distribution's inbox one, or MLNX_OFED pinned to a release."""

    flavor: Literal["mlnx", "inbox"] = Field(
        description="mlnx: MLNX_OFED from source/repo; inbox: distribution rdma-core."
    )
    version: Version | None = Field(None, description="mlnx: version pinned, e.g. 4.5-1.0.1.0 (ofed_info -s).")
    source: Source | None = Field(None, description="mlnx: local path to the MLNX_OFED tarball/ISO dir, or an "
                                  "http(s) URL.")
    install_flags: list[Word] = Field(
        default_factory=lambda: ["--without-fw-update", "--force"],
        description="Extra flags for mlnxofedinstall, one word per item.",
    )


class Weka(Strict):
    version: Version | None = Field(None, description="Weka version the backends must run, e.g. 3.3.3.")
    dist: Source | None = Field(None, description="Path or http(s) URL of the Weka distribution; absent: role "
                                "skipped.")
    mount_point: MountPoint = Field("/mnt/weka", description="Where clients mount the Weka filesystem (an "
                                    "absolute path without blanks, not /).")
    filesystem: FsName = Field("default", description="Weka filesystem the clients mount (letters, digits, '_', "
                               "'.', '-').")
    clients: Literal["dgx", "none"] = Field("dgx", description="Which hosts mount the filesystem as clients.")


class Tuning(Strict):
    """Host tuning the common role applies: the sysctl profile and the CPU governor."""

    profile: Literal["throughput-100g", "none"] = Field(
        "throughput-100g", description="Sysctl profile of the common role (none: leave sysctls alone).")
    sysctl: dict[SysctlKey, SysctlValue] = Field(
        default_factory=dict, description="Overrides of the profile's sysctls: key a.b.c (no '/', no '..') to an "
        "integer or one line of printable ASCII.")
    cpu_governor: Literal["performance", "none"] = Field(
        "performance", description="CPU frequency governor set on every host (none: leave it).")


class OsPin(Strict):
    """The OS the hosts must run; validate and drift report a host that differs."""

    release: Text | None = Field(None, description="OS release, e.g. '12' or 'Debian GNU/Linux 12 (bookworm)'.")
    kernel: Version | None = Field(None, description="Kernel release prefix, e.g. 6.1.0 (uname -r starts with it).")


class Software(Strict):
    """The software pins the roles install and validate checks."""

    os: OsPin | None = Field(None, description="Pinned OS release and kernel (checked by validate).")
    ofed: Ofed | None = Field(None, description="Where the RDMA stack comes from: the inbox one or MLNX_OFED.")
    weka: Weka | None = Field(None, description="The WekaFS cluster on the storage hosts and its clients.")
    nvidia_driver: Version | None = Field(None, description="Expected NVIDIA driver branch, e.g. 418 or 535.")
    tuning: Tuning = Field(default_factory=Tuning)
