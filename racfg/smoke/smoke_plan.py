"""What a smoke run measures, derived from the inventory and the provider's line rates.

Every dgx data link is measured against its line rate: the rate the provider shapes it to (the
lab), else what the host's NIC reports (``/sys/class/net/NIC/speed``, filled in by the run),
else the inventory's speed. Durations left unset in the inventory take real-cluster defaults,
shorter on a lab, where links are slow and the CPU is shared.

On a routed leaf-spine site each client link is loaded from the storage links on other leaves
(the topology says which leaf each link is cabled to), so every load crosses the spines; its
processes are enough flows for ECMP to spread them over every spine (``ECMP_FLOWS``).
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from racfg.connection import ConnectionOverrides
from racfg.errors import UsageError
from racfg.inventory import model as m
from racfg.inventory.cluster import Cluster, ClusterHost, ClusterNic
from racfg.policy.budget import SpineTier, bandwidth_budget
from racfg.switches.ports import canonical_port
from racfg.validate.fabric_routing import FabricIntent, intent_from_cluster

# Seconds per TCP measurement / warm-up left out / fio job: (real cluster, lab).
DURATION_S = (10, 3)
OMIT_S = (2, 1)
FIO_RUNTIME_S = (10, 2)
GBPS_PER_IPERF3 = 25.0  # what one single-threaded iperf3 (< 3.16) carries with room to spare
MAX_PROCESSES = 16
# Bytes each frame costs besides the IP packet: Ethernet header, FCS, preamble and gap on a real
# wire; the lab's tc shaper counts the Ethernet header only.
WIRE_FRAMING = 38
SHAPER_FRAMING = 14
TCP_IP_HEADERS = 52  # IPv4 20 + TCP 20 + timestamps 12
# Flows per cross-leaf link at least: ECMP hashes flows, not bytes, so a link loaded by one flow uses one
# spine. Saturated paths split the bytes evenly whatever the flow count, as long as each path has a flow:
# with 8, all on one of 2 spines happens 1 time in 128 (and a re-measurement hashes new ports).
ECMP_FLOWS = 8
# Processes a lab starts within the window's late-start allowance (racfg.smoke.window): every lab host starts
# its own on the machine's shared CPUs. The 40-host demo's 8-client step (96 processes) summed within 8% of
# what the NICs took in; its 16-client step (192) summed 1.3 to 2.6 times it, read E(16) = 0.88-0.98 and
# failed 2 runs of 8, and with 3 s of warm-up and 6 s measured read 0.99-1.0 (bench/RESULTS.md).
LAB_PROCESSES_TOGETHER = 96


@dataclass(frozen=True)
class Uplink:
    """One leaf's uplink (an ISL seen from the leaf): its canonical port, the spine, and its line rate
    (the inventory's, scaled as the site's links are shaped: the lab shapes every link per 100G alike)."""

    leaf: str
    port: str
    spine: str
    rate_mbit: float


@dataclass(frozen=True)
class Link:
    """One data link (host NIC to its switch port) and the rate it is judged against."""

    host: str
    role: str
    nic: str
    address: str
    switch: str
    port: str | None
    rate_mbit: float
    rate_source: str  # "lab shaper" | "NIC" | "inventory"
    mtu: int
    framing: int = WIRE_FRAMING
    declared_mbit: float = 0.0  # the inventory's speed: links of one kind share it (outliers compare within)

    @property
    def key(self) -> str:
        return f"{self.host}:{self.nic}"

    @property
    def network(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Interface(self.address).network

    @property
    def ip(self) -> str:
        return str(ipaddress.IPv4Interface(self.address).ip)

    @property
    def tcp_ceiling(self) -> float:
        """Share of line rate TCP payload can fill at this MTU (about 0.99 at 9000, 0.94 at 1500)."""
        return tcp_ceiling(self.mtu, self.framing)


def tcp_ceiling(mtu: int, framing: int = WIRE_FRAMING) -> float:
    return (mtu - TCP_IP_HEADERS) / (mtu + framing)


@dataclass(frozen=True)
class Benchmark:
    spec: m.UserBenchmark
    steps: list[int | str]  # node counts (every GPU of a node) and shapes NODESxGPUS
    gpus_per_node: int = 0  # what an int step's {gpus} is: the smallest dgx GPU count


def shape_of(step: int | str, gpus_per_node: int) -> tuple[int, int]:
    """(nodes, GPUs per node) of a benchmark step: ``4`` is 4 whole nodes, ``"2x4"`` 2 nodes x 4 GPUs."""
    if isinstance(step, int):
        return step, gpus_per_node
    nodes, gpus = step.split("x")
    return int(nodes), int(gpus)


@dataclass
class SmokePlan:
    site: str
    lab: bool
    clients: list[Link]
    storage: list[Link]
    duration_s: int
    omit_s: int
    fio_runtime_s: int
    processes_per_link: int | None  # None: derived per link
    steps: list[int]
    saturation_floor: float
    scaling_floor: float
    outlier_fraction: float
    references: dict[str, dict[int, m.Reference]]
    budget: m.Budget
    fio_path: str | None
    weka_mount: str | None
    benchmark: Benchmark | None = None
    notes: list[str] = field(default_factory=list)
    array_mount: str | None = None  # the external array's mount point on the clients, when declared
    unreached: list[Link] = field(default_factory=list)  # client links with no storage link on their subnet
    uplinks: list[Uplink] = field(default_factory=list)  # routed leaf-spine: every leaf's ISLs
    fabric: FabricIntent | None = None  # routed leaf-spine: what validate's fabric checks judge against
    spine: SpineTier | None = None  # the bandwidth budget's spine tier (leaf-spine)
    uplinks_down: frozenset[tuple[str, str]] = frozenset()  # (leaf, port) the switch says is down, read by the run
    scale: float = 1.0  # measured rate per declared rate: the lab's shaping (1 on a real site)

    @property
    def routed(self) -> bool:
        return self.fabric is not None

    @property
    def client_hosts(self) -> list[str]:
        return list(dict.fromkeys(link.host for link in self.clients))

    @property
    def storage_hosts(self) -> list[str]:
        return list(dict.fromkeys(link.host for link in self.storage))

    def links_of(self, host: str) -> list[Link]:
        return [link for link in self.clients if link.host == host]

    def targets_for(self, client: Link) -> list[Link]:
        """Storage links a client link talks to: those on its subnet (a rail). The inventory routes no
        data subnet, so a storage address on another subnet is reached, if at all, through another
        NIC, and the load would not be on this link. On a routed leaf-spine site: the storage links on
        the other leaves, so the load crosses the spines."""
        if self.routed:
            return [s for s in self.storage if s.switch != client.switch]
        return [s for s in self.storage if s.network == client.network]

    def processes_for(self, client: Link, targets: Sequence[Link] | None = None) -> int:
        """iperf3 processes on a link: enough to fill it, and at least one per storage link it reads
        from (``targets``: those a batch gave it, else every one it may use)."""
        if self.processes_per_link is not None:
            return self.processes_per_link
        wanted = math.ceil(client.rate_mbit / 1000 / GBPS_PER_IPERF3)
        if self.routed:
            wanted = max(wanted, ECMP_FLOWS)
        count = len(targets) if targets is not None else len(self.targets_for(client))
        return max(1, min(MAX_PROCESSES, max(wanted, count)))

    def load_timing(self, processes: int) -> tuple[int, int]:
        """(warm-up, measured seconds) of one load of ``processes`` iperf3 processes: the plan's, except on a
        lab loading more than LAB_PROCESSES_TOGETHER at once, where each further share of them adds 2 s of
        warm-up and the plan's measured seconds again, so the last to start still run through the window.
        A site's hosts start their own processes on their own CPUs: its loads keep the plan's timing."""
        if not self.lab or processes <= LAB_PROCESSES_TOGETHER:
            return self.omit_s, self.duration_s
        extra = math.ceil(processes / LAB_PROCESSES_TOGETHER) - 1
        return self.omit_s + 2 * extra, self.duration_s * (1 + extra)

    def with_rates(self, rates: dict[str, tuple[float, str]]) -> SmokePlan:
        """A copy whose links with an entry in ``rates`` (link key -> (Mbit/s, source)) use it."""
        def update(link: Link) -> Link:
            if link.key not in rates:
                return link
            rate, source = rates[link.key]
            return replace(link, rate_mbit=rate, rate_source=source)
        return replace(self, clients=[update(x) for x in self.clients], storage=[update(x) for x in self.storage])


def default_steps(clients: int) -> list[int]:
    """1, 2, 4 ... and N itself."""
    steps, n = [], 1
    while n < clients:
        steps.append(n)
        n *= 2
    return [*steps, clients] if clients else []


def _link(host: ClusterHost, nic: ClusterNic, overrides: ConnectionOverrides) -> Link:
    shaped = overrides.link_rates_mbit.get((host.name, nic.name))
    if shaped is not None:
        return Link(host.name, host.role, nic.name, str(nic.address), nic.switch, nic.port, float(shaped),
                    "lab shaper", nic.mtu, SHAPER_FRAMING, nic.speed_gbps * 1000)
    return Link(host.name, host.role, nic.name, str(nic.address), nic.switch, nic.port, nic.speed_gbps * 1000,
                "inventory", nic.mtu, WIRE_FRAMING, nic.speed_gbps * 1000)


def build_plan(cluster: Cluster, overrides: ConnectionOverrides, *, hosts: list[str] | None = None) -> SmokePlan:
    """The plan for a site. ``hosts`` limits the dgx hosts measured (all by default)."""
    acceptance = cluster.inventory.acceptance
    settings = acceptance.smoke
    lab = overrides.active
    dgx = cluster.role("dgx")
    if hosts:
        unknown = sorted(set(hosts) - {h.name for h in dgx})
        if unknown:
            raise UsageError(f"--hosts: {', '.join(unknown)} is not a dgx host of site {cluster.name}",
                             hint="dgx hosts: " + ", ".join(h.name for h in dgx))
        dgx = [h for h in dgx if h.name in hosts]
    clients = [_link(h, n, overrides) for h in dgx for n in h.nics]
    storage = [_link(h, n, overrides) for h in cluster.role("storage") for n in h.nics]
    if not clients:
        raise UsageError(f"site {cluster.name} has no dgx data link to measure")
    array = cluster.inventory.array
    array_mount = array.mount_point if array is not None and array.clients == "dgx" else None
    if not storage and array_mount is None:
        raise UsageError(f"site {cluster.name} has no storage data link to measure against",
                         hint="smoke loads the dgx links from the storage hosts")
    notes = []
    unreached = []
    fabric = intent_from_cluster(cluster)
    if storage:
        unreached = [c for c in clients if not any(s.switch != c.switch if fabric else s.network == c.network
                                                   for s in storage)]
        clients = [c for c in clients if c not in unreached]
        if unreached:
            notes.append(f"{len(unreached)} dgx data link(s) not measured: no storage link on their subnet ("
                         + ", ".join(sorted({str(c.network) for c in unreached})) + ")")
        if not clients:
            raise UsageError(f"site {cluster.name}: no dgx data link shares a subnet with a storage link",
                             hint="smoke loads each dgx link from the storage links on its own subnet")
    n_clients = len(dict.fromkeys(c.host for c in clients))
    steps = sorted(set(settings.scaling_steps or default_steps(n_clients)))
    if any(s > n_clients for s in steps):
        notes.append(f"scaling steps above {n_clients} clients left out: "
                     + ", ".join(str(s) for s in steps if s > n_clients))
        steps = [s for s in steps if s <= n_clients]
    if 1 not in steps:
        steps = [1, *steps]  # E(n) needs T(1)
    pick = 1 if lab else 0
    benchmark = None
    if settings.benchmark is not None:
        gpus = min((h.gpus for h in dgx), default=0)
        wanted = [*(settings.benchmark.steps or steps), *(s for g in settings.benchmark.equivalent for s in g.shapes)]
        too_big = [str(s) for s in dict.fromkeys(wanted) if shape_of(s, gpus)[0] > n_clients]
        if too_big:
            notes.append(f"benchmark steps above {n_clients} clients left out: {', '.join(too_big)}")
        bench_steps = sorted({s for s in wanted if shape_of(s, gpus)[0] <= n_clients},
                             key=lambda s: (*shape_of(s, gpus), isinstance(s, str)))
        benchmark = Benchmark(settings.benchmark, bench_steps, gpus)
    weka = cluster.inventory.software.weka
    return SmokePlan(
        site=cluster.name, lab=lab, clients=clients, storage=storage,
        duration_s=math.ceil(settings.duration_s or DURATION_S[pick]),
        omit_s=math.ceil(settings.omit_s if settings.omit_s is not None else OMIT_S[pick]),
        fio_runtime_s=math.ceil(settings.fio_runtime_s or FIO_RUNTIME_S[pick]),
        processes_per_link=settings.processes_per_link, steps=steps,
        saturation_floor=acceptance.link_saturation, scaling_floor=acceptance.scaling_efficiency,
        outlier_fraction=settings.outlier_fraction, references=dict(acceptance.references),
        budget=acceptance.budget, fio_path=settings.fio_path,
        weka_mount=weka.mount_point if weka is not None and weka.clients == "dgx" else None,
        benchmark=benchmark, notes=notes, array_mount=array_mount, unreached=unreached,
        **_leaf_spine(cluster, fabric, [*clients, *storage]),
    )


def brief_plan(plan: SmokePlan) -> SmokePlan:
    """The plan of ``racfg drift --performance --quick``: every per-item figure, briefly. Loads of half
    the plan's length with at most 1 s of warm-up, but never under 2 s measured (a link's figure is
    what its NICs took in over the load's window, and a window of 1 s is off by the counters' timing:
    on the lab a link written alone for 1 s read 2.4% above what it carries, every time), fio jobs of
    half theirs (at least 2 s), and scaling at 1 and N clients only (E(N) needs T(1); the steps
    between are a campaign's own question)."""
    omit = min(plan.omit_s, 1)
    return replace(plan, duration_s=max(omit + 2, math.ceil(plan.duration_s / 2)), omit_s=omit,
                   fio_runtime_s=max(2, math.ceil(plan.fio_runtime_s / 2)), steps=sorted({1, max(plan.steps)}))


def _leaf_spine(cluster: Cluster, fabric: FabricIntent | None, links: list[Link]) -> dict:
    """The plan's leaf-spine fields: the fabric intent, the leaves' uplinks at the links' scale, the budget's
    spine tier. The scale is the most common measured-over-declared rate of the host links (the lab's
    per-100G shaping; 1 on a real site)."""
    ratios = [round(link.rate_mbit / link.declared_mbit, 6) for link in links if link.declared_mbit]
    scale = max(set(ratios), key=ratios.count) if ratios else 1.0
    if fabric is None:
        return {"scale": scale}
    uplinks = []
    for isl in cluster.topology.isls:
        platform = cluster.switches[isl.leaf].platform
        uplinks.append(Uplink(isl.leaf, canonical_port(platform, isl.leaf_port) or isl.leaf_port, isl.spine,
                              isl.speed_gbps * 1000 * scale))
    return {"fabric": fabric, "uplinks": uplinks, "spine": bandwidth_budget(cluster).spine, "scale": scale}
