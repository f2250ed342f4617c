"""TCP load with iperf3: servers on the storage hosts, clients on the dgx hosts, all at once.

A load is a set of flows (one iperf3 client process each, on its own server port); a link is
filled by several processes because iperf3 before 3.16 is single-threaded. ``read`` runs the
clients with ``-R`` (the storage hosts send, as a client reads from storage), ``write`` without.
Each figure is what the receiving side counted over the measured seconds, warm-up omitted.

A link's figure is the sum of its processes' figures, each over its own seconds, so the processes
must run over the same seconds: the clients are started held and released together. Started one
SSH channel after another instead, on a loaded machine they spread over seconds (72 processes for
9 clients), the last ones ran partly alone, and the sums came out up to 22% above line rate, which
made every other link an "outlier" of the best one. Released together, they still begin some tens
of milliseconds apart on a busy machine (process start, connection set-up): a sum can run a few
percent over what the links carry, and the judge counts no more than that (``best_of_kind``,
``step_capacity`` in racfg.smoke.phases.link_saturation and .read_scaling). On a machine too busy to start them
within a second of each other the sum means nothing: a link and a scaling step are judged on what their
receiving NICs took in while every process ran (racfg.smoke.window), read by shells released with the
load, and a figure above what the links carry is a measurement error (racfg.smoke.link_ceiling).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping, Sequence

from racfg.hostfacts.iperf3 import parse_iperf3
from racfg.hostfacts.parse_error import ParseError
from racfg.smoke.measured import Flow, FlowResult, LoadResult
from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.remote import Fleet, RemoteProcess
from racfg.smoke.smoke_plan import Link, SmokePlan
from racfg.smoke.window import Readers, Window

BASE_PORT = 5301
LISTEN_TIMEOUT = 10.0
START_SLACK_S = 20  # on top of omit + duration: connection setup, the end exchange


def plan_flows(plan: SmokePlan, clients: Sequence[Link],
               sources: Mapping[str, Sequence[Link]] | None = None) -> list[Flow]:
    """Spread each client link's processes round-robin over its storage targets, one port each:
    ``sources`` (link key -> storage links: a batch's, racfg.smoke.batches) where it names the link,
    else every storage link it may use."""
    next_port: dict[str, int] = defaultdict(lambda: BASE_PORT)
    flows = []
    for offset, client in enumerate(clients):  # each client starts on the next storage host: the load spreads
        own = sources.get(client.key) if sources else None
        targets = list(own) if own else plan.targets_for(client)
        for i in range(plan.processes_for(client, own)):
            server = targets[(i + offset) % len(targets)]
            flows.append(Flow(client, server, next_port[server.host]))
            next_port[server.host] += 1
    return flows


def ends(flow: Flow, direction: str) -> tuple[Link, Link]:
    """(receiving link, sending link) of a flow: on a read (``-R``) the storage host sends."""
    return (flow.client, flow.server) if direction == "read" else (flow.server, flow.client)


def receivers(flows: Sequence[Flow], direction: str) -> list[Link]:
    """The links a load's flows send into, each once."""
    return list({ends(flow, direction)[0].key: ends(flow, direction)[0] for flow in flows}.values())


def fan_in(flows: Sequence[Flow], direction: str) -> dict[str, int]:
    """How many links send into each receiving link (link key): the storage links into a client link on a
    read (``-R``: the storage hosts send), the client links into a storage link on a write. One sender
    cannot overrun a port of its own rate; two or more can (an incast), and TCP then fills its queue."""
    senders: dict[str, set[str]] = defaultdict(set)
    for flow in flows:
        receiver, sender = ends(flow, direction)
        senders[receiver.key].add(sender.key)
    return {key: len(links) for key, links in senders.items()}


def _wait_listening(fleet: Fleet, ports: dict[str, set[int]]) -> None:
    deadline = time.monotonic() + LISTEN_TIMEOUT
    for host, wanted in ports.items():
        while True:
            out = fleet[host].run("ss -Hltn", timeout=10).stdout
            listening = {int(line.split()[3].rsplit(":", 1)[1]) for line in out.splitlines() if len(line.split()) > 3}
            if wanted <= listening:
                break
            if time.monotonic() > deadline:
                missing = ", ".join(str(p) for p in sorted(wanted - listening))
                raise MeasurementError(f"{host}: iperf3 servers did not listen on ports {missing}")
            time.sleep(0.05)


def run_load(fleet: Fleet, flows: Sequence[Flow], direction: str, duration_s: int, omit_s: int) -> LoadResult:
    """Run every flow at once; returns what each one measured, and what the receiving links took in while
    every flow ran (racfg.smoke.window). Remote processes end in any case."""
    bound = omit_s + duration_s + START_SLACK_S
    started = time.monotonic()
    servers: list[RemoteProcess] = []
    clients: list[tuple[Flow, RemoteProcess]] = []
    readers: Readers | None = None
    try:
        ports: dict[str, set[int]] = defaultdict(set)
        for flow in flows:
            servers.append(fleet.start(flow.server.host,
                                       ["iperf3", "-s", "-1", "-p", str(flow.port), "-B", flow.server.ip], bound))
            ports[flow.server.host].add(flow.port)
        for proc in servers:
            proc.started()
        _wait_listening(fleet, ports)
        for flow in flows:
            argv = ["iperf3", "-c", flow.server.ip, "-p", str(flow.port), "-B", flow.client.ip, "-t", str(duration_s),
                    "-O", str(omit_s), "-J", "--connect-timeout", "3000"]
            if direction == "read":
                argv.append("-R")
            clients.append((flow, fleet.start(flow.client.host, argv, bound, held=True)))
        window = Window.for_load(duration_s, omit_s)
        if window is not None:
            readers = Readers(fleet, receivers(flows, direction), window, bound)
        held = [proc for _, proc in clients] + (list(readers.processes.values()) if readers else [])
        for proc in held:
            proc.started()
        for proc in held:  # together: see the module docstring
            proc.release()
        results = []
        for flow, proc in clients:
            done = proc.wait()
            try:
                parsed = parse_iperf3(done.stdout)
                results.append(FlowResult(flow, parsed, parsed.error))
            except ParseError as exc:
                results.append(FlowResult(flow, None, done.failure(exc)))
        for proc in servers:
            proc.wait()
        return LoadResult(direction, results, time.monotonic() - started, readers.collect() if readers else None)
    finally:
        stop_unfinished([*servers, *(p for _, p in clients), *(readers.processes.values() if readers else [])])


def stop_unfinished(processes: Sequence[RemoteProcess]) -> None:
    """Kill, host by host in one command each, the processes that have not been collected."""
    by_host: dict[str, list[RemoteProcess]] = defaultdict(list)
    for proc in processes:
        if not proc.channel.closed:
            by_host[proc.host.name].append(proc)
    for procs in by_host.values():
        procs[0].host.kill([p.pid for p in procs if p.pid])
