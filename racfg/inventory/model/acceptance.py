"""The references validate and smoke judge against: saturation, scaling, the budget, benchmarks, NCCL."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from racfg.inventory.model.base import Strict
from racfg.inventory.model.text import AbsPath, Args, FigureName, Image, LocalPath, Text

SHAPE_PATTERN = r"^[1-9][0-9]*x[1-9][0-9]*$"
Shape = Annotated[str, Field(pattern=SHAPE_PATTERN, description="NODESxGPUS_PER_NODE, e.g. 2x4.")]
StepKey = Annotated[int, Field(ge=1)] | Shape


class Reference(Strict):
    """A performance reference in ReFrame's shape: value, relative lower/upper bounds, unit."""

    value: float = Field(description="The expected figure, e.g. 10.8.")
    lower: float | None = Field(-0.1, le=0, description="Relative lower bound, e.g. -0.1 = 10% below value.")
    upper: float | None = Field(None, ge=0, description="Relative upper bound, e.g. 0.2 = 20% above value.")
    unit: Text = Field(description="Unit of the figure, e.g. GB/s or images/s.")


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
    command: Text = Field(description="Command template: {host} {hosts} {nodes} {storage} {address} {duration}. "
                          "The one inventory value racfg runs as a shell command: on the GPU servers, as the SSH "
                          "user, by racfg smoke only; the placeholders' values are quoted.")
    launcher: Literal["ssh", "mpirun", "horovodrun", "torchrun", "srun"] = Field(
        "ssh", description="ssh: run on every node of the step and add the figures; else launched once.")
    regex: Text = Field(description="Regular expression whose first group is the figure.")
    unit: Text = Field("", description="Unit of the figure, e.g. images/s.")
    steps: list[StepKey] | None = Field(
        None, description="Node counts (every GPU of a node), or shapes NODESxGPUS such as 2x4 ({gpus} in the "
        "command is then the GPUs per node); default: the smoke steps.")
    timeout_s: float = Field(600, gt=0, description="Upper bound of one step; its processes are stopped after it.")
    gpus: bool = Field(True, description="Whether it runs on the GPU servers' GPUs (a training run). Where the "
                       "clients list no GPU it does not run: a skip with the reason on a site that does not "
                       "require GPUs (the lab), a failure where they are required. false: a benchmark of the "
                       "hosts without their GPUs (a storage or network read), run wherever.")
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

    command: LocalPath = Field("all_reduce_perf", description="all_reduce_perf on the GPU servers: its path, e.g. "
                               "/opt/nccl-tests/build/all_reduce_perf (inside the image when one is given).")
    image: Image | None = Field(None, description="Container image holding nccl-tests, e.g. "
                                "nvcr.io/nvidia/pytorch:24.05-py3 (srun launcher only: --container-image, pyxis).")
    launcher: Literal["mpirun", "srun"] = Field("mpirun", description="Starts the ranks of a step over several nodes.")
    args: Args = Field("-b 1G -e 8G -f 2",
                       description="all_reduce_perf arguments (sizes, iterations), words of letters, digits and "
                       ". _ = , : / + @ % - separated by blanks; the largest size's bus bandwidth is judged.")
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
    fio_path: AbsPath | None = Field(None, description="A file on the shared filesystem fio reads (read-only) on "
                                     "clients: an absolute path without blanks.")
    benchmark: UserBenchmark | None = Field(None, description="Your own benchmark, run on each node-count step.")
    nccl: NcclTests | None = Field(None, description="NCCL all-reduce bus bandwidth per step, judged against the "
                                   "GPU model's NVLink and the data NICs (the nccl phase; absent: skipped).")


class FigureNoise(Strict):
    """What counts as noise for a kind of figure, as a share of it: ``racfg drift --performance`` names a
    drop past it from the baseline's figure (where the figure's own readings spread less; most baseline
    figures are one reading), and smoke names a straggler only further than it (and never closer than
    7%) from its peers' median."""

    link: float = Field(0.03, gt=0, lt=1, description="A link's TCP figure (each direction).")
    scaling: float = Field(0.04, gt=0, lt=1, description="A scaling step's aggregate and efficiency, the spine "
                           "crossing.")
    storage: float = Field(0.08, gt=0, lt=1, description="fio figures of drives and clients.")
    rdma: float = Field(0.03, gt=0, lt=1, description="perftest bandwidth per port.")
    nccl: float = Field(0.05, gt=0, lt=1, description="NCCL all-reduce bus bandwidth.")
    benchmark: float = Field(0.05, gt=0, lt=1, description="Your own benchmark's figure.")

    def by_kind(self) -> dict[str, float]:
        """{kind: share} by the first word of a figure's metric key (``link.read.dgx01:data0``: link);
        the spine crossing is a scaling figure."""
        return {**self.model_dump(), "spine": self.scaling}


class Acceptance(Strict):
    """References validate and smoke judge against (RA defaults)."""

    link_saturation: float = Field(0.9, gt=0, le=1, description="Smoke: fraction of line rate a link must reach.")
    scaling_efficiency: float = Field(0.9, gt=0, le=1, description="Smoke: throughput(N)/(N*throughput(1)) floor.")
    client_storage_gbytes_per_s: float = Field(
        10.8, gt=0, description="Per-client storage read bandwidth (RA: 10.8 GB/s on one 100G link)."
    )
    references: dict[FigureName, dict[StepKey, Reference]] = Field(
        default_factory=dict, description="Benchmark name -> node count (or shape NODESxGPUS, e.g. 2x4) -> reference."
    )
    budget: Budget = Field(default_factory=Budget)
    smoke: Smoke = Field(default_factory=Smoke)
    noise: FigureNoise = Field(default_factory=FigureNoise)
