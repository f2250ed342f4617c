"""What smoke measured, as plain data: the figures its phases' verdicts judge.

Nothing here runs a command or opens a session: the measurement modules (racfg.smoke.tcp, .probes and
the phases' own runners) fill these in, and the verdicts read them, so a verdict can be tested on a table
and imports no measurement module (tests/structure/test_smoke_phases.py holds that).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from racfg.hostfacts.fio import FioResult
from racfg.hostfacts.iperf3 import Iperf3Result
from racfg.smoke.smoke_plan import Link
from racfg.switches.parsers.port_counters import PortCounters


@dataclass(frozen=True)
class Flow:
    client: Link
    server: Link
    port: int


@dataclass
class FlowResult:
    flow: Flow
    result: Iperf3Result | None
    error: str | None = None

    @property
    def bits_per_second(self) -> float:
        return self.result.bits_per_second if self.result else 0.0


@dataclass
class LoadResult:
    """What each flow measured, and what the receiving links took in while every flow ran (link key ->
    payload bits/s, racfg.smoke.window; None where the load had no window or its counters were not read)."""

    direction: str
    flows: list[FlowResult]
    seconds: float
    received: dict[str, float] | None = None

    def per_client_link(self) -> dict[str, float]:
        out: dict[str, float] = defaultdict(float)
        for fr in self.flows:
            out[fr.flow.client.key] += fr.bits_per_second
        return dict(out)

    def per_client_host(self) -> dict[str, float]:
        out: dict[str, float] = defaultdict(float)
        for fr in self.flows:
            out[fr.flow.client.host] += fr.bits_per_second
        return dict(out)

    def per_server_link(self) -> dict[str, float]:
        out: dict[str, float] = defaultdict(float)
        for fr in self.flows:
            out[fr.flow.server.key] += fr.bits_per_second
        return dict(out)

    @property
    def total(self) -> float:
        return sum(fr.bits_per_second for fr in self.flows)

    @property
    def errors(self) -> list[str]:
        return [f"{fr.flow.client.host} <- {fr.flow.server.host}:{fr.flow.port}: {fr.error}"
                for fr in self.flows if fr.error]

    def iperf3_cpu(self) -> dict[str, float]:
        """Highest iperf3 process CPU (percent of a core) per host of the load, both ends: each client's
        own figure and its server's as the client reports it (iperf3's ``remote_total``)."""
        out: dict[str, float] = {}
        for fr in self.flows:
            for host, cpu in ((fr.flow.client.host, fr.result.cpu_percent if fr.result else None),
                              (fr.flow.server.host, fr.result.remote_cpu_percent if fr.result else None)):
                if cpu is not None:
                    out[host] = max(out.get(host, 0.0), cpu)
        return out

    def process_cpu(self) -> dict[str, float]:
        """Highest iperf3 process CPU (percent of a core, local side) per client host."""
        out: dict[str, float] = {}
        for fr in self.flows:
            if fr.result and fr.result.cpu_percent is not None:
                host = fr.flow.client.host
                out[host] = max(out.get(host, 0.0), fr.result.cpu_percent)
        return out


Snapshot = dict[tuple[str, str], PortCounters]  # (switch, canonical port) -> counters


def by_switch(snapshot: Snapshot) -> dict[str, dict[str, PortCounters]]:
    """A snapshot as validate's fabric checks read counters: {switch: {port: counters}}."""
    out: dict[str, dict[str, PortCounters]] = {}
    for (switch, port), counters in snapshot.items():
        out.setdefault(switch, {})[port] = counters
    return out


@dataclass
class StepProbe:
    """Counters and CPU before and after one load; the growth is what the load did. ``fan_in``: how many
    links sent into each receiving link (link key) during it, which tells congestion from a fault when a
    port discards (racfg.smoke.counter_verdicts)."""

    counters_before: Snapshot = field(default_factory=dict)
    counters_after: Snapshot = field(default_factory=dict)
    cpu_before: dict[str, tuple[int, int]] = field(default_factory=dict)
    cpu_after: dict[str, tuple[int, int]] = field(default_factory=dict)
    fan_in: dict[str, int] = field(default_factory=dict)
    controller_before: tuple[int, int] | None = None  # the controller's own (busy, total) jiffies
    controller_after: tuple[int, int] | None = None

    def controller_busy(self) -> float | None:
        """Busy share of the controller's CPUs during the load (0..1; None: not read)."""
        if self.controller_before is None or self.controller_after is None:
            return None
        total = self.controller_after[1] - self.controller_before[1]
        return (self.controller_after[0] - self.controller_before[0]) / total if total > 0 else None

    def port_growth(self) -> Snapshot:
        return {key: after.minus(self.counters_before[key]) for key, after in self.counters_after.items()
                if key in self.counters_before}

    def cpu_busy(self) -> dict[str, float]:
        """Busy share of all CPUs per host during the load (0..1)."""
        out = {}
        for host, (busy, total) in self.cpu_after.items():
            if host in self.cpu_before and total > self.cpu_before[host][1]:
                out[host] = (busy - self.cpu_before[host][0]) / (total - self.cpu_before[host][1])
        return out


SEQ_JOB = "seqread-1m"


RAND_JOB = "randread-4k"


@dataclass(frozen=True)
class FioTarget:
    host: str
    filenames: list[str]  # drives, or the one file on the shared filesystem


@dataclass
class FioRun:
    target: FioTarget
    result: FioResult | None
    error: str | None = None

    @property
    def seq_bytes_per_s(self) -> float:
        return self.result.job(SEQ_JOB).read_bytes_per_s if self.result else 0.0

    @property
    def rand_iops(self) -> float:
        return self.result.job(RAND_JOB).read_iops if self.result else 0.0


@dataclass
class BenchmarkStep:
    n: int
    hosts: list[str]
    value: float | None
    per_node: dict[str, float]
    error: str | None = None
    seconds: float = 0.0
    shape: str | None = None  # "2x4" for a NODESxGPUS step; None for a whole-node step

    @property
    def label(self) -> str:
        return self.shape or f"n{self.n}"


@dataclass
class LinkMeasurement:
    link: Link
    direction: str
    load: LoadResult  # this link's flows only
    probe: StepProbe | None = None
    batched: bool = False  # read in a batch with other links (racfg.smoke.batches), not alone

    @property
    def bits(self) -> float:
        """What the link carried: what its receiving NICs took in while every process ran (racfg.smoke.window:
        the client's NIC on a read, the storage links its flows wrote to on a write, each its own in a batch),
        else the sum of its processes' figures. Each process's figure is over its own seconds, and on a busy
        machine their sum ran up to 7% above what a shaped link can carry; the NICs' common window does not."""
        received = self.received_keys()
        if received:
            return sum((self.load.received or {})[key] for key in received)
        return self.load.per_client_link().get(self.link.key, 0.0)

    def received_keys(self) -> list[str]:
        """The receiving links whose NIC figures are this link's reading ([]: none read; the processes' sum)."""
        keys = [self.link.key] if self.direction == "read" else sorted(
            {fr.flow.server.key for fr in self.load.flows if fr.flow.client.key == self.link.key})
        return keys if keys and self.load.received and set(keys) <= self.load.received.keys() else []

    @property
    def share(self) -> float:
        return self.bits / (self.link.rate_mbit * 1e6)
