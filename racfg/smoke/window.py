"""What the receiving NICs counted while every process of a load ran: a step's aggregate as the links
carried it.

A load's processes are released together, but on a busy machine they begin up to seconds apart
(process start, connection set-up; the data plane of the first ones takes the CPUs the last ones
need to start). Each iperf3 figure is over its own seconds, so their sum is over no common seconds:
in the lab, the 192 processes of a 16-client step added up to 21.5 Gbit/s on links that carry
15.9, while the clients' NICs took in 7.7 (the lab's CPUs were the limit).

So a step's aggregate is read where the bytes are: each receiving host's NIC byte counters, read
twice inside the load's measured seconds (after the warm-up and a late start, before the first
processes end), each host's rate over its own clock. A reader is a shell started held with the
load's processes and released with them, so no SSH round trip or login falls inside the window.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.remote import Fleet, RemoteProcess
from racfg.smoke.smoke_plan import Link, tcp_ceiling

HEADER_BYTES = 14  # what a NIC's rx_bytes counts of a frame besides the IP packet: the Ethernet header
LATE_START_S = 1.0  # how much later than the first the last process may start and still be in the window
END_MARGIN_S = 0.2  # the window closes this long before the first processes end


@dataclass(frozen=True)
class Window:
    """Seconds after the release at which the window opens and closes."""

    opens: float
    closes: float

    @classmethod
    def for_load(cls, duration_s: int, omit_s: int) -> Window | None:
        """Inside every process's measured seconds, or None when the load is too short to have one."""
        opens = omit_s + LATE_START_S
        closes = omit_s + duration_s - END_MARGIN_S
        return cls(opens, closes) if closes - opens >= 1.0 else None


def reader_argv(nics: Sequence[str], window: Window) -> list[str]:
    """A shell that reads the NICs' received bytes as the window opens and closes, each read between two
    reads of the host's clock (/proc/uptime) and all of it shell builtins: on a busy host a process
    started between the clock and the counters (``date``, ``cat``) came up to a tenth of a second late,
    8% of a lab window."""
    counters = "; ".join(f"read c{i} < {shlex.quote(f'/sys/class/net/{nic}/statistics/rx_bytes')}"
                         for i, nic in enumerate(nics))
    values = " ".join(f"$c{i}" for i in range(len(nics)))
    read = f"read ta x < /proc/uptime; {counters}; read tb x < /proc/uptime; echo $ta $tb {values}"
    return ["sh", "-c", f"sleep {window.opens:.2f}; {read}; sleep {window.closes - window.opens:.2f}; {read}"]


def parse_reads(text: str, links: Sequence[Link]) -> dict[str, float]:
    """TCP payload bits/s each link took in between the reader's two reads (frames less their headers at
    the link's MTU; each read timed at the middle of its two clock reads). Raises MeasurementError on
    output that is not two reads of these NICs."""
    try:
        reads = [[float(v) for v in line.split()] for line in text.strip().splitlines()]
    except ValueError:
        reads = []
    if len(reads) != 2 or any(len(r) != len(links) + 2 for r in reads):
        raise MeasurementError(f"NIC counters not read: {text.strip()[:80]!r}")
    seconds = (reads[1][0] + reads[1][1] - reads[0][0] - reads[0][1]) / 2
    if seconds <= 0:
        raise MeasurementError(f"NIC counters read out of order: {text.strip()[:80]!r}")
    out = {}
    for i, link in enumerate(links, start=2):
        out[link.key] = (reads[1][i] - reads[0][i]) * 8 * tcp_ceiling(link.mtu, HEADER_BYTES) / seconds
    return out


class Readers:
    """One held reader per receiving host of a load; ``collect`` after the load, None if any failed."""

    def __init__(self, fleet: Fleet, links: Sequence[Link], window: Window, bound_s: float) -> None:
        self.by_host: dict[str, list[Link]] = {}
        for link in links:
            self.by_host.setdefault(link.host, []).append(link)
        self.processes: dict[str, RemoteProcess] = {
            host: fleet[host].start(reader_argv([link.nic for link in own], window), bound_s, held=True)
            for host, own in self.by_host.items()}

    def collect(self) -> dict[str, float] | None:
        out: dict[str, float] = {}
        for host, proc in self.processes.items():
            try:
                done = proc.wait()
                out.update(parse_reads(done.stdout, self.by_host[host]))
            except MeasurementError:
                return None
        return out
