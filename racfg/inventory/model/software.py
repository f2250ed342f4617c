"""The software pins the roles install and validate checks: OS, OFED, Weka, NVIDIA driver, tuning."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from racfg.inventory.model.base import Strict
from racfg.inventory.model.installer import check_key_file, check_ofed_source, check_sha256, check_weka_dist
from racfg.inventory.model.text import (
    FsName,
    LocalPath,
    MountPoint,
    Source,
    SysctlKey,
    SysctlValue,
    Text,
    Version,
    Word,
)

ALLOW_HTTP = ("Accept an http:// {what} (no TLS) for this source. Off: only https:// URLs and files on the "
              "controller. The {check} still checks what is read; the opt-in makes a site that fetches "
              "installers without TLS say so.")
SHA256 = ("sha256 of the {what} (64 hexadecimal digits, as sha256sum prints them; compare them with the "
          "vendor's). Required with {which}: each host checks the file it will unpack against it, before "
          "anything is unpacked or run, and a mismatch is refused naming both digests.")


class Ofed(Strict):
    """The RDMA stack: the distribution's inbox one, or MLNX_OFED pinned to a release."""

    flavor: Literal["mlnx", "inbox"] = Field(
        description="mlnx: MLNX_OFED from source/repo; inbox: distribution rdma-core."
    )
    version: Version | None = Field(None, description="mlnx: version pinned, e.g. 4.5-1.0.1.0 (ofed_info -s).")
    allow_http: bool = Field(False, description=ALLOW_HTTP.format(what="source", check="sha256 or signing key"))
    sha256: str | None = Field(None, description=SHA256.format(
        what="MLNX_OFED .tgz", which="a tarball source (a path or a URL); not used for a repository"))
    signed_by: LocalPath | None = Field(None, description=(
        "Apt repository source: the repository's OpenPGP public key, a .asc (armored) or .gpg (binary) file "
        "on the controller (relative to this file), checked into the site's configuration, not a URL. "
        "Required for a repository: the role puts it on each host and adds the repository as "
        "[signed-by=<that file>], so apt refuses an index it did not sign; racfg never adds a repository as "
        "trusted=yes."))
    source: Source | None = Field(None, description=(
        "mlnx: where MLNX_OFED comes from: the vendor's MLNX_OFED_LINUX-<release>-<os>-<arch>.tgz on the "
        "controller (a path, relative to this file) or at an https:// URL, with its sha256; or an apt "
        "repository URL (any other URL), with its signing key (signed_by). A directory is refused: it cannot be "
        "checked against the digest NVIDIA publishes. http:// needs allow_http: true."))
    install_flags: list[Word] = Field(
        default_factory=lambda: ["--without-fw-update", "--force"],
        description="Extra flags for mlnxofedinstall, one word per item.",
    )

    _sha256 = field_validator("sha256")(check_sha256)
    _signed_by = field_validator("signed_by")(check_key_file)

    @field_validator("source")
    @classmethod
    def _verifiable(cls, source: str | None, info: ValidationInfo) -> str | None:
        return check_ofed_source(source, info.data)


class Weka(Strict):
    version: Version | None = Field(None, description="Weka version the backends must run, e.g. 3.3.3.")
    allow_http: bool = Field(False, description=ALLOW_HTTP.format(what="dist", check="sha256"))
    sha256: str | None = Field(None, description=SHA256.format(what="Weka tarball", which="dist"))
    dist: Source | None = Field(None, description=(
        "The Weka distribution tarball (weka-<version>.tar): a path on the controller (relative to this file) "
        "or an https:// URL the hosts download, with its sha256; http:// needs allow_http: true. "
        "Absent: the weka role is skipped."))
    mount_point: MountPoint = Field("/mnt/weka", description="Where clients mount the Weka filesystem (an "
                                    "absolute path without blanks, not /).")
    filesystem: FsName = Field("default", description="Weka filesystem the clients mount (letters, digits, '_', "
                               "'.', '-').")
    clients: Literal["dgx", "none"] = Field("dgx", description="Which hosts mount the filesystem as clients.")

    _sha256 = field_validator("sha256")(check_sha256)

    @field_validator("dist")
    @classmethod
    def _verifiable(cls, dist: str | None, info: ValidationInfo) -> str | None:
        return check_weka_dist(dist, info.data)


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
