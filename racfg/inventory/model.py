"""The inventory file's schema: one site, as a user writes it.

Strict on purpose (``extra="forbid"``): a typo such as ``mtu: 9000`` under the wrong key must
fail loudly rather than deploy a default. Compact forms (name ranges like ``dgx[01:09]``,
per-role ``defaults``) are part of the schema; racfg.inventory.site expands them.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from racfg.catalog import parse_speed
from racfg.inventory.ranges import expand_range

NAME_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9._\-\[\]:]*[A-Za-z0-9\]])?$"


class Strict(BaseModel):
    """Base for every inventory section: unknown keys are errors, values are not coerced loosely."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


Speed = Annotated[str | int, Field(description="Link speed: 100G, 25G, EDR (=100G), HDR (=200G) ...")]


def _check_speed(value: str | int | None) -> str | int | None:
    if value is not None:
        parse_speed(value)
    return value


def _check_pool(value: str | None) -> str | None:
    """An address pool: an IPv4 network written with its prefix and no host bits."""
    if value is not None:
        ipaddress.IPv4Network(value, strict=True)
    return value


class Site(Strict):
    """The site: its name, and what every host shares (time sources, DNS domain)."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-]*$", description="Short site name, used in file names.")
    description: str = Field("", description="Free text, shown in reports.")
    time_sources: list[str] = Field(
        default_factory=list, description="NTP servers for chrony; empty: hosts keep their current sources."
    )
    dns_domain: str | None = Field(None, description="Domain appended to host names in /etc/hosts.")


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


class Credentials(Strict):
    """Where a switch's password is found. The secret itself never sits in the inventory."""

    username: str = Field("admin", description="Login name on the switch.")
    password_env: str | None = Field(None, description="Environment variable holding the password.")
    password_file: str | None = Field(None, description="File (mode 0600) holding the password.")
    password_vault: str | None = Field(None, description="ansible-vault encrypted file holding the password.")
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
    model: str = Field(description="Switch model, e.g. SN2700, SB7800, 7368X (see racfg catalog).")
    ports: int | None = Field(None, ge=1, le=1024, description="Port count; required for models racfg does not know.")
    ports_per_slot: int | None = Field(None, ge=1, description="Modular chassis: ports per line card.")
    mgmt: str = Field(description="Management IPv4 address (SSH).")
    ssh_port: int = Field(22, ge=1, le=65535, description="SSH port of the switch CLI.")
    credentials: Credentials
    os_version: str | None = Field(None, description="Expected OS version; validate/drift report a mismatch.")
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

    @field_validator("mgmt")
    @classmethod
    def _mgmt(cls, value: str) -> str:
        ipaddress.IPv4Address(value)
        return value


class Nic(Strict):
    """A data NIC of a host and the switch port its cable goes to."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]{1,15}$", description="Interface name on the host (<= 15 chars).")
    address: str = Field(description="IPv4 address with prefix, e.g. 198.19.0.11/24. Increments across a range.")
    switch: str = Field(description="Name of the switch this NIC is cabled to.")
    port: str | int = Field(description="Switch port (1/1, Eth1/1, Ethernet1, Et1). Increments across a range.")
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


class Links(Strict):
    """Inter-switch links of a leaf-spine fabric, as a block: every leaf of ``leaves`` to every spine of
    ``spines`` with ``count`` cables each. On a leaf, the uplinks run from ``leaf_port`` up, spine by spine;
    on a spine, from ``spine_port`` up, leaf by leaf (8 leaves x 2 spines x 2 links is one entry)."""

    leaves: str = Field(pattern=NAME_PATTERN, description="Leaf switch name, or a range such as leaf[1:8].")
    spines: str = Field(pattern=NAME_PATTERN, description="Spine switch name, or a range such as spine[1:2].")
    count: int = Field(1, ge=1, le=64, description="Links between each leaf and each spine.")
    leaf_port: str | int = Field(description="First uplink port on each leaf; increments per link.")
    spine_port: str | int = Field(description="First port on each spine; increments per link.")
    speed: Speed | None = Field(None, description="Line rate of these links; default: the fabric speed.")
    pool: str | None = Field(
        None, description="Ethernet: /31 pool for these links (default: the next /31s of fabric.p2p_pool).")
    pfc: bool = Field(False, description="Priority flow control on these links. The RA runs without it.")

    _speed = field_validator("speed")(_check_speed)

    @field_validator("leaves", "spines")
    @classmethod
    def _range(cls, value: str) -> str:
        expand_range(value)
        return value

    _pool = field_validator("pool")(_check_pool)


class Drive(Strict):
    """An NVMe drive (or a range of them) a storage host must have."""

    path: str = Field(
        pattern=r"^/dev/[A-Za-z0-9_/\-\[\]:]+$",
        description="Block device path; a range such as /dev/nvme[0:5]n1 names several drives.",
    )
    model: str | None = Field(None, description="Expected drive model, as nvme list reports it.")
    size: str | None = Field(None, description="Expected size, e.g. 3.2T (validated when given).")

    @field_validator("path")
    @classmethod
    def _range(cls, value: str) -> str:
        expand_range(value)
        return value


class HostBase(Strict):
    """Fields a host entry and a ``defaults`` entry share."""

    ssh_user: str | None = Field(None, description="SSH login on the host (default root).")
    ssh_key: str | None = Field(None, description="Private key file for SSH (path, ~ expanded).")
    ssh_port: int | None = Field(None, ge=1, le=65535, description="SSH port of the host (default 22).")
    model: str | None = Field(None, description="Server model, e.g. DGX-1; known models give GPU and drive counts.")
    gpus: int | None = Field(None, ge=0, le=64, description="dgx hosts: expected GPU count (default: from model).")
    gpu_model: str | None = Field(None, description="dgx hosts: GPU model for the bill of materials, e.g. "
                                  "Tesla V100 SXM2 16GB (default: from model).")
    drives: list[Drive] | None = Field(None, description="storage hosts: NVMe drives for Weka.")
    wipe_drives: bool | None = Field(None, description="storage hosts: allow wiping drives that carry data.")
    nics: list[Nic] | None = Field(None, description="Data NICs and the switch port each is cabled to.")
    port_stride: int | None = Field(
        None, ge=1, description="Across a name range, how far each NIC's port advances per host "
        "(default: number of NICs cabled to that switch)."
    )
    vars: dict[str, Any] | None = Field(None, description="Extra Ansible host variables (overrides).")


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
        expand_range(value)
        return value

    @field_validator("mgmt")
    @classmethod
    def _mgmt(cls, value: str) -> str:
        ipaddress.IPv4Address(value)
        return value


class Defaults(Strict):
    """Values every host of a role inherits unless it sets them itself."""

    all: HostDefaults = Field(default_factory=HostDefaults)
    dgx: HostDefaults = Field(default_factory=HostDefaults)
    storage: HostDefaults = Field(default_factory=HostDefaults)


class Ofed(Strict):
    """The RDMA stack: the distribution's inbox one, or MLNX_OFED pinned to a release."""

    flavor: Literal["mlnx", "inbox"] = Field(
        description="mlnx: MLNX_OFED from source/repo; inbox: distribution rdma-core."
    )
    version: str | None = Field(None, description="mlnx: version pinned, e.g. 4.5-1.0.1.0 (ofed_info -s).")
    source: str | None = Field(None, description="mlnx: local path to the MLNX_OFED tarball/ISO dir, or repo URL.")
    install_flags: list[str] = Field(
        default_factory=lambda: ["--without-fw-update", "--force"],
        description="Extra flags for mlnxofedinstall.",
    )


class Weka(Strict):
    version: str | None = Field(None, description="Weka version the backends must run, e.g. 3.3.3.")
    dist: str | None = Field(None, description="Path or URL of the Weka distribution; absent: role skipped.")
    mount_point: str = Field("/mnt/weka", description="Where clients mount the Weka filesystem.")
    filesystem: str = Field("default", description="Weka filesystem the clients mount.")
    clients: Literal["dgx", "none"] = Field("dgx", description="Which hosts mount the filesystem as clients.")


class Tuning(Strict):
    """Host tuning the common role applies: the sysctl profile and the CPU governor."""

    profile: Literal["throughput-100g", "none"] = Field(
        "throughput-100g", description="Sysctl profile of the common role (none: leave sysctls alone).")
    sysctl: dict[str, str | int] = Field(default_factory=dict, description="Overrides of the profile's sysctls.")
    cpu_governor: Literal["performance", "none"] = Field(
        "performance", description="CPU frequency governor set on every host (none: leave it).")


class OsPin(Strict):
    """The OS the hosts must run; validate and drift report a host that differs."""

    release: str | None = Field(None, description="OS release, e.g. '12' or 'Debian GNU/Linux 12 (bookworm)'.")
    kernel: str | None = Field(None, description="Kernel release prefix, e.g. 6.1.0 (uname -r starts with it).")


class Software(Strict):
    """The software pins the roles install and validate checks."""

    os: OsPin | None = Field(None, description="Pinned OS release and kernel (checked by validate).")
    ofed: Ofed | None = Field(None, description="Where the RDMA stack comes from: the inbox one or MLNX_OFED.")
    weka: Weka | None = Field(None, description="The WekaFS cluster on the storage hosts and its clients.")
    nvidia_driver: str | None = Field(None, description="Expected NVIDIA driver branch, e.g. 418 or 535.")
    tuning: Tuning = Field(default_factory=Tuning)


SHAPE_PATTERN = r"^[1-9][0-9]*x[1-9][0-9]*$"
Shape = Annotated[str, Field(pattern=SHAPE_PATTERN, description="NODESxGPUS_PER_NODE, e.g. 2x4.")]
StepKey = Annotated[int, Field(ge=1)] | Shape


class Reference(Strict):
    """A performance reference in ReFrame's shape: value, relative lower/upper bounds, unit."""

    value: float = Field(description="The expected figure, e.g. 10.8.")
    lower: float | None = Field(-0.1, le=0, description="Relative lower bound, e.g. -0.1 = 10% below value.")
    upper: float | None = Field(None, ge=0, description="Relative upper bound, e.g. 0.2 = 20% above value.")
    unit: str = Field(description="Unit of the figure, e.g. GB/s or images/s.")


class Budget(Strict):
    """The storage bandwidth budget racfg check prints: what the GPU servers read against what storage delivers."""

    workload: Literal["resnet50", "lenet", "custom"] = Field(
        "resnet50", description="What a GPU server reads: resnet50 (0.8 GB/s), lenet (2.5), custom.")
    client_gbytes_per_s: float | None = Field(
        None, gt=0, description="custom workload: storage read rate one GPU server needs (GB/s)."
    )
    storage_node_gbytes_per_s: float = Field(
        5.625, gt=0, description="Throughput one storage node delivers (RA: +22.5 GB/s per 4-node BigTwin)."
    )
    storage_node_iops: float = Field(
        250_000, gt=0, description="4 KiB random-read IOPS one storage node delivers (RA: +1M IOPS per 4-node BigTwin)."
    )
    nic_efficiency: float = Field(0.86, gt=0, le=1, description="Usable share of line rate (RA: 86% on FIO).")

    @model_validator(mode="after")
    def _custom(self) -> Budget:
        if self.workload == "custom" and self.client_gbytes_per_s is None:
            raise ValueError("workload 'custom' needs client_gbytes_per_s")
        return self


class Equivalence(Strict):
    """Shapes that must perform alike (seed 004: one server x 8 GPUs = 2 x 4 = 4 x 2). The first shape
    is the baseline; every other one must lie within +-band of it."""

    shapes: list[Shape] = Field(min_length=2, description="Shapes NODESxGPUS, the first is the baseline.")
    band: float = Field(0.05, gt=0, lt=1, description="Largest relative difference from the baseline, e.g. 0.05.")

    @field_validator("shapes")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a shape is listed twice")
        return value


class UserBenchmark(Strict):
    """A user's own benchmark run by ``racfg smoke`` on each node-count step (tf_cnn_benchmarks, a
    PyTorch script ...): its figure is cut out of the output by ``regex`` and judged against
    ``acceptance.references[name]`` per node count, and its scaling as smoke judges the fabric's."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$", description="Figure name; the key in acceptance.references.")
    command: str = Field(description="Command template: {host} {hosts} {nodes} {storage} {address} {duration}.")
    launcher: Literal["ssh", "mpirun", "horovodrun", "torchrun", "srun"] = Field(
        "ssh", description="ssh: run on every node of the step and add the figures; else launched once.")
    regex: str = Field(description="Regular expression whose first group is the figure.")
    unit: str = Field("", description="Unit of the figure, e.g. images/s.")
    steps: list[StepKey] | None = Field(
        None, description="Node counts (every GPU of a node), or shapes NODESxGPUS such as 2x4 ({gpus} in the "
        "command is then the GPUs per node); default: the smoke steps.")
    timeout_s: float = Field(600, gt=0, description="Upper bound of one step; its processes are stopped after it.")
    equivalent: list[Equivalence] = Field(
        default_factory=list, description="Groups of shapes that must give the same figure within a band: "
        "scale-out equals scale-up (1x8 = 2x4 = 4x2). Their shapes run even when steps omit them.")

    @field_validator("regex")
    @classmethod
    def _regex(cls, value: str) -> str:
        import re

        if re.compile(value).groups < 1:
            raise ValueError("the regex needs a group around the figure, e.g. 'rate: ([0-9.]+)'")
        return value


class NcclTests(Strict):
    """NCCL all-reduce as the site runs it: racfg launches the site's nccl-tests, it does not build them.
    One node runs one process over all its GPUs; more nodes start one rank per GPU through the launcher
    (nccl-tests takes its ranks from MPI, so mpirun, or srun with PMIx)."""

    command: str = Field("all_reduce_perf", description="all_reduce_perf on the GPU servers: its path, e.g. "
                         "/opt/nccl-tests/build/all_reduce_perf (inside the image when one is given).")
    image: str | None = Field(None, description="Container image holding nccl-tests, e.g. "
                              "nvcr.io/nvidia/pytorch:24.05-py3 (srun launcher only: --container-image, pyxis).")
    launcher: Literal["mpirun", "srun"] = Field("mpirun", description="Starts the ranks of a step over several nodes.")
    args: str = Field("-b 1G -e 8G -f 2", description="all_reduce_perf arguments (sizes, iterations); the largest "
                      "size's bus bandwidth is judged.")
    timeout_s: float = Field(900, gt=0, description="Upper bound of one run; its processes are stopped after it.")

    @model_validator(mode="after")
    def _image_needs_srun(self) -> NcclTests:
        if self.image and self.launcher != "srun":
            raise ValueError("an image runs through srun --container-image (launcher: srun); with mpirun, "
                             "give the path of all_reduce_perf on the hosts as command")
        return self


class Smoke(Strict):
    """How ``racfg smoke`` measures. Unset durations take real-cluster defaults, shorter in the lab."""

    duration_s: float | None = Field(None, gt=0, le=3600, description="Seconds per TCP measurement (default 10).")
    omit_s: float | None = Field(None, ge=0, le=60, description="Warm-up seconds left out of each (default 2).")
    processes_per_link: int | None = Field(
        None, ge=1, le=64, description="iperf3 processes per link (default: one per 25 Gb/s, at least one per "
        "storage host).")
    scaling_steps: list[Annotated[int, Field(ge=1)]] | None = Field(
        None, description="Client counts of the scaling run (default 1, 2, 4 ... N).")
    outlier_fraction: float = Field(0.93, gt=0, le=1, description="A link below this share of the best is named.")
    fio_runtime_s: float | None = Field(None, gt=0, le=3600, description="Seconds per fio job (default 10).")
    fio_path: str | None = Field(None, description="A file on the shared filesystem fio reads (read-only) on clients.")
    benchmark: UserBenchmark | None = Field(None, description="Your own benchmark, run on each node-count step.")
    nccl: NcclTests | None = Field(None, description="NCCL all-reduce bus bandwidth per step, judged against the "
                                   "GPU model's NVLink and the data NICs (the nccl phase; absent: skipped).")


class Acceptance(Strict):
    """References validate and smoke judge against (RA defaults)."""

    link_saturation: float = Field(0.9, gt=0, le=1, description="Smoke: fraction of line rate a link must reach.")
    scaling_efficiency: float = Field(0.9, gt=0, le=1, description="Smoke: throughput(N)/(N*throughput(1)) floor.")
    client_storage_gbytes_per_s: float = Field(
        10.8, gt=0, description="Per-client storage read bandwidth (RA: 10.8 GB/s on one 100G link)."
    )
    references: dict[str, dict[StepKey, Reference]] = Field(
        default_factory=dict, description="Benchmark name -> node count (or shape NODESxGPUS, e.g. 2x4) -> reference."
    )
    budget: Budget = Field(default_factory=Budget)
    smoke: Smoke = Field(default_factory=Smoke)


class StorageArray(Strict):
    """External shared storage that is one appliance rather than Weka hosts (seed 002: GPU servers on an
    IntelliFlash N5800 NVMe all-flash array over NFS). racfg does not configure the array; it sizes it in
    the budget (mixed-I/O throughput x the share given to training), mounts its export on the GPU
    servers, checks the mount and measures through it."""

    name: str = Field(pattern=NAME_PATTERN, description="Name of the array (reports, BOM).")
    model: str = Field(description="Array model, e.g. IntelliFlash N5800 (see racfg catalog).")
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
    server: str = Field(description="Data-fabric IPv4 address (or name) the export is served on.")
    export: str = Field(pattern=r"^/", description="Exported path on the server, e.g. /export/ai.")
    mount_point: str = Field("/mnt/array", pattern=r"^/.", description="Where the GPU servers mount it.")
    mount_options: list[Annotated[str, Field(pattern=r"^[^\s,]+$")]] = Field(
        default_factory=lambda: ["hard", "proto=tcp", "vers=3", "rsize=1048576", "wsize=1048576"],
        description="Mount options, one per item; validate checks those the kernel reports in /proc/mounts.")
    clients: Literal["dgx", "none"] = Field("dgx", description="Which hosts mount the export.")


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
