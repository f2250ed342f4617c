"""The storage phase (``storage``): fio, read-only, on one host, then on every host at once, each figure
against its reference.

Plan: two fio runs. Commands: with a shared filesystem mounted on the clients (Weka, an array's
export), fio reads ``acceptance.smoke.fio_path`` (an existing file: smoke writes nothing) on every
client, judged against the per-client and aggregate references. Without one (the lab), fio reads
each storage host's declared drives with ``--readonly``, and the figure is said plainly to be
drive-side. A figure that misses its reference (sequential GB/s, and random-read IOPS where
referenced) is measured again, that fio run alone (racfg.smoke.remeasure), and judged on its best
reading; a figure with no reference is reported, never judged. The step on all hosts at once is also
measured again while a host lies below its peers (racfg.smoke.peer_stragglers), each host's figure its
best reading, before the peers' comparison reads it. A host far below its share of fio on all at once
(acceptance.smoke.outlier_fraction) runs fio again beside a host that kept up
(racfg.smoke.pair_isolation), so the verdict names the client or storage node, or none.

Verdicts (``VERDICTS``, pure): whether fio has something to read (the shared filesystem mounted, a
file named, drives declared), and fio's figures against their references.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

from racfg.hostfacts.fio import parse_fio
from racfg.hostfacts.parse_error import ParseError
from racfg.inventory.model import Reference
from racfg.results import Result, Status
from racfg.smoke.machine_limit import cpu_limits, machine_limited
from racfg.smoke.measured import RAND_JOB, SEQ_JOB, FioRun, FioTarget, StepProbe
from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.metrics import metric, reference_margin, reference_result
from racfg.smoke.pair_isolation import Isolating, PairOutcome, isolate_suspects, isolation_results
from racfg.smoke.peer_stragglers import FLOOR, peer_floor, stragglers
from racfg.smoke.probes import controller_cpu_times, cpu_times
from racfg.smoke.remeasure import (
    Announce,
    Reading,
    deciding_reading,
    until_met,
    with_readings,
)
from racfg.smoke.remote import Fleet, RemoteProcess
from racfg.smoke.run_state import SmokeRun
from racfg.smoke.smoke_plan import SmokePlan
from racfg.smoke.tcp import stop_unfinished
from racfg.smoke.units import bytes_rate_text


def measure_storage(plan: SmokePlan, fleet: Fleet, targets: list[FioTarget], side: FioSide, limit: int,
                    tick: Announce, announce: Announce, floor: float = FLOOR) -> list[Result]:
    """fio on the first target, then on all at once (the first run again when there is one target).
    ``floor``: the peers' bound for storage figures (racfg.smoke.peer_stragglers.peer_floor)."""
    results: list[Result] = []
    for label, group in (("one", targets[:1]), ("all", targets)):
        tick(f"storage: fio on {group[0].host}" if label == "one" else
             f"storage: fio on {len(group)} {side.side} hosts at once")
        if label == "all" and len(targets) == 1:
            break
        refs = _refs(plan, side, len(group))
        cpu: list[FioCpu] = []  # per reading of several hosts at once: what their CPUs did
        take = (partial(run_fio, fleet, group, plan.fio_runtime_s) if len(group) < 2 else
                partial(probed_fio, fleet, group, plan.fio_runtime_s, cpu))
        what = f"storage: fio on {len(group)} host(s)"
        readings = until_met([take()], take, partial(_margin, refs), limit, announce, what)
        if label == "all":
            readings = until_peers_met(readings, take, cpu, floor, limit, announce, what)
        index = deciding_reading([_margin(refs, r) for r in readings])
        best = readings[index]
        listed = [Reading(seq_bytes(r) / 1e9, "GB/s", _margin(refs, r), f"{bytes_rate_text(seq_bytes(r))}, "
                          f"{sum(x.rand_iops for x in r):,.0f} IOPS") for r in readings]
        if refs.seq is None and refs.iops is None:  # measured again for its stragglers only: no mark to list
            listed = [listed[index]]
        bests = host_bests(readings) if label == "all" else None
        results += [with_readings(r, listed, limit)
                    for r in fio_results(side, label, best, refs, cpu[index] if cpu else None, bests)]
        if bests is not None:
            results += _isolate(plan, fleet, side, best, bests, limit, announce)
    return results


@dataclass(frozen=True)
class HostBests:
    """Each host's best figures over a step's readings (``host_bests``)."""

    seq: dict[str, float]  # bytes/s
    iops: dict[str, float]
    readings: int

    def stragglers(self, floor: float) -> list[str]:
        """The hosts below their peers (racfg.smoke.peer_stragglers) in sequential or random reads."""
        return sorted({*stragglers(self.seq, floor), *stragglers(self.iops, floor)})


def host_bests(readings: Sequence[Sequence[FioRun]]) -> HostBests:
    """Each host's best sequential and best random-read figure over the readings of one step (those in
    which fio ran on every host), and how many readings they are the best of."""
    whole = [r for r in readings if all(run.result is not None for run in r)]
    seq: dict[str, float] = {}
    iops: dict[str, float] = {}
    for reading in whole:
        for run in reading:
            seq[run.target.host] = max(seq.get(run.target.host, 0.0), run.seq_bytes_per_s)
            iops[run.target.host] = max(iops.get(run.target.host, 0.0), run.rand_iops)
    return HostBests(seq, iops, len(whole))


def until_peers_met(readings: list[list[FioRun]], take: Callable[[], list[FioRun]], cpu: Sequence[FioCpu],
                    floor: float, limit: int, announce: Announce, what: str) -> list[list[FioRun]]:
    """The step on all hosts at once measured again while a host stays below its peers, each host's figure
    its best over the readings (at most ``limit`` re-measurements, counted with those for the step's mark).

    Why: a straggler is named on one reading of a step that shares a path (the lab's hosts read loop
    devices through one block layer and two CPUs; a site's clients share its fabric and filesystem).
    Lab demos named healthy storage nodes at 79-90% of their peers' median in 2 of 10 runs, the next
    run finding them level: noise, which the step's next reading does not repeat, while a slow drive or
    NIC caps every reading (racfg.smoke.remeasure). Not where the measuring machines were at their limit
    (``cpu``): the peers' comparison is a skip there, whatever a re-measurement gives."""
    while len(readings) - 1 < limit and not (cpu and cpu[-1].limits):
        left = host_bests(readings).stragglers(floor)
        if not left:
            break
        announce(f"{what}: {', '.join(left)} below their peers, the step measured again "
                 f"({len(readings)} of {limit})")
        readings.append(take())
    return readings


@dataclass(frozen=True)
class FioCpu:
    """What the CPUs did during one fio run on several hosts at once: each host's busy share, and what
    says the measuring machines were at their limit (racfg.smoke.machine_limit.cpu_limits; []: nothing)."""

    busy: dict[str, float]
    limits: list[str]


def probed_fio(fleet: Fleet, targets: Sequence[FioTarget], runtime_s: int, seen: list[FioCpu]) -> list[FioRun]:
    """``run_fio`` with each host's CPUs and the controller's read around it, appended to ``seen``: where
    the hosts share CPUs (the lab), how those were shared decides each host's figure, and the peers'
    comparison must know it (racfg.smoke.peer_stragglers)."""
    hosts = [t.host for t in targets]
    probe = StepProbe(cpu_before=cpu_times(fleet, hosts), controller_before=controller_cpu_times())
    runs = run_fio(fleet, targets, runtime_s)
    probe.cpu_after, probe.controller_after = cpu_times(fleet, hosts), controller_cpu_times()
    seen.append(FioCpu(probe.cpu_busy(), cpu_limits(probe, set(hosts))))
    return runs


def _isolate(plan: SmokePlan, fleet: Fleet, side: FioSide, runs: list[FioRun], bests: HostBests, limit: int,
             announce: Announce) -> list[Result]:
    """The node, not the step: each host far below the others in fio on all at once (by its best reading,
    ``bests``), run again beside one that kept up (racfg.smoke.pair_isolation). Not where a run failed:
    that is its own error."""
    if any(r.result is None for r in runs):
        return []
    targets = {r.target.host: r.target for r in runs}
    limited: dict[str, list[list[str]]] = {}  # per suspect, what held each of its pair's readings back

    def pair(suspect: str, partner: str) -> dict[str, float]:
        seen: list[FioCpu] = []
        both = probed_fio(fleet, [targets[suspect], targets[partner]], plan.fio_runtime_s, seen)
        limited.setdefault(suspect, []).append(seen[-1].limits)
        return {r.target.host: r.seq_bytes_per_s for r in both}
    found = isolate_suspects(bests.seq, {}, plan.outlier_fraction, pair, limit, announce,
                             f"storage: fio on {len(runs)} {side.side} hosts")
    # the machine was the limit only when it was at every reading: one low reading on free CPUs names the node
    limits = {host: readings[-1] for host, readings in limited.items() if all(readings)}
    return fio_pair_results(side, bests.seq, plan.outlier_fraction, found, limits)


def fio_pair_results(side: FioSide, figures: Mapping[str, float], fraction: float, pairs: list[PairOutcome],
                     limits: Mapping[str, list[str]] | None = None) -> list[Result]:
    """fio's pairs: the host whose sequential read (``figures``: each host's in the step, bytes/s) stays low
    beside one that kept up, or none at fault.
    A host named while the measuring machines' CPUs were at their limit in every reading of its pair
    (``limits``, racfg.smoke.machine_limit) is an error naming the machine: loop devices and page cache
    read through CPUs, and a lab's two CPUs shared by every host make a healthy node read low."""
    node = "client" if side.side == "client" else "storage node"
    fix = ("racfg validate --limit {node} (its mount, data NIC and tuning)" if side.side == "client" else
           "racfg validate --limit {node}, then its drives (smartctl, the controller's queue settings)")
    how = Isolating(f"storage/{side.side}/isolate", "storage", node, f"fio on {len(figures)} hosts at once",
                    bytes_rate_text, fix)
    results = isolation_results(how, figures, {}, fraction, pairs)
    blamed = f": the {node} is at fault, not the step"  # what a limited reading cannot say
    return [machine_limited(replace(r, message=r.message.replace(blamed, "")), (limits or {})[r.target])
            if r.status is Status.FAIL and (limits or {}).get(r.target) else r for r in results]


def _refs(plan: SmokePlan, side: FioSide, n: int) -> FioRefs:
    seq = plan.references.get(side.key, {}).get(n)
    if seq is None and side.side == "client" and n == 1:
        seq = Reference(value=side.client_gbytes_per_s, unit="GB/s")
    iops = plan.references.get("fio_randread_iops", {}).get(n) if side.side == "client" else None
    return FioRefs(seq, iops)


def _margin(refs: FioRefs, runs: list[FioRun]) -> float:
    """The nearer miss of the referenced figures (< 0 misses); a failed fio run misses; unreferenced: 0."""
    if any(r.result is None for r in runs):
        return -1.0
    iops = sum(r.rand_iops for r in runs)
    margins = [reference_margin(value, ref) for value, ref in ((seq_bytes(runs) / 1e9, refs.seq), (iops, refs.iops))
               if ref is not None]
    return min(margins, default=0.0)


@dataclass(frozen=True)
class FioSide:
    """Where fio reads: ``client`` (the shared filesystem) or ``drive`` (the storage hosts' drives)."""

    side: str
    key: str  # the acceptance.references entry of its sequential figure
    what: str  # how the report says it
    client_gbytes_per_s: float  # acceptance.client_storage_gbytes_per_s: one client's reference by default


@dataclass(frozen=True)
class FioRefs:
    """The references of one fio run's figures (None: reported, not judged)."""

    seq: Reference | None
    iops: Reference | None


def nothing_to_read(array_mount: str | None, shared: str | None, mounted_on: int, fio_path: str | None,
                    drive_hosts: int) -> Result | None:
    """Why the storage phase cannot run fio (None: it can). ``shared`` is the filesystem the clients read
    through, ``mounted_on`` how many clients have it mounted, ``drive_hosts`` how many storage hosts
    declare drives. An external array's export mounted on no client is a fault; the rest are skips."""
    if array_mount and shared == array_mount and not mounted_on:
        return Result("cluster", "storage/fio", "storage", Status.FAIL,
                      f"the array's export is mounted at {array_mount} on no client", f"{array_mount} mounted",
                      "not mounted", fix="racfg deploy --tags nfs_client, then racfg validate")
    if mounted_on and not fio_path:
        return Result("cluster", "storage/fio", "storage", Status.SKIP,
                      f"{shared} is mounted on {mounted_on} clients, but acceptance.smoke.fio_path names no file "
                      "for fio to read (smoke writes nothing)")
    if not mounted_on and not drive_hosts:
        return Result("cluster", "storage/fio", "storage", Status.SKIP,
                      "no shared filesystem mounted and no storage host declares drives")
    return None


def seq_bytes(runs: list[FioRun]) -> float:
    return sum(r.seq_bytes_per_s for r in runs)


def fio_results(side: FioSide, label: str, runs: list[FioRun], refs: FioRefs,
                cpu: FioCpu | None = None, bests: HostBests | None = None) -> list[Result]:
    """One fio run over ``runs`` hosts at once: its sequential figure (and IOPS where referenced). ``cpu``
    (a run on several hosts): what the CPUs did, kept with the figures, and ``machine_busy`` where the
    measuring machines were at their limit, so the hosts' figures are not compared as the nodes'.
    ``bests``: each host's best over the step's readings (``until_peers_met``), its own figures where the
    step was measured more than once; else each host's figures are those of ``runs``."""
    n = len(runs)
    failed = [r for r in runs if r.result is None]
    if failed:
        return [Result(failed[0].target.host, f"storage/{label}", "storage", Status.ERROR,
                       f"fio failed on {failed[0].target.host}: {failed[0].error}")]
    seq = seq_bytes(runs)
    iops = sum(r.rand_iops for r in runs)
    bests = bests or host_bests([runs])
    message = (f"{side.what}, {n} host(s) at once: sequential 1 MiB reads {bytes_rate_text(seq)}, "
               f"4 KiB random reads {iops:,.0f} IOPS")
    if bests.readings > 1:
        message += f"; each host's own figures are its best of the step's {bests.readings} readings"
    data = {"side": side.side, "hosts": [r.target.host for r in runs], "seq_bytes_per_s": round(seq),
            "rand_iops": round(iops), "per_host": {r.target.host: {"seq_bytes_per_s": round(bests.seq[r.target.host]),
                                                                   "rand_iops": round(bests.iops[r.target.host])}
                                                   for r in runs},
            "per_host_readings": bests.readings,
            "fio_version": runs[0].result.version if runs[0].result else "",
            "metrics": [metric(f"storage.{side.side}.seq.n{n}", seq / 1e9, "GB/s"),
                        metric(f"storage.{side.side}.randiops.n{n}", iops, "IOPS"),
                        *_per_host_metrics(side.side, bests)]}
    if cpu is not None:
        data["cpu_busy"] = {h: round(v, 4) for h, v in sorted(cpu.busy.items())}
        if cpu.limits:
            data["machine_busy"] = cpu.limits
    target = f"{side.side}s" if n > 1 else runs[0].target.host
    reason = (f"no acceptance.references.{side.key} for {n} node(s)" if side.side == "client" else
              f"a drive-side figure (no shared filesystem mounted); give acceptance.references.{side.key} to judge it")
    out = [reference_result(target, f"storage/{side.side}/n{n}", "storage", seq / 1e9, "GB/s", refs.seq, message,
                            data, reason)]
    if refs.iops is not None:
        out.append(reference_result(target, f"storage/{side.side}/iops/n{n}", "storage", iops, "IOPS", refs.iops,
                                    message, {"rand_iops": round(iops)}, ""))
    return out


def _per_host_metrics(side: str, bests: HostBests) -> list[dict]:
    """Each host's own figures of a step on several at once (one storage node, one client): a node that
    slipped is seen by itself, not only in the sum. A run on one host is its host's figure already."""
    n = len(bests.seq)
    if n < 2:
        return []
    out = []
    for host in bests.seq:
        out += [metric(f"storage.{side}.seq.n{n}.{host}", bests.seq[host] / 1e9, "GB/s"),
                metric(f"storage.{side}.randiops.n{n}.{host}", bests.iops[host], "IOPS")]
    return out


def ramp_s(runtime_s: int) -> int:
    """Warm-up left out of each fio job (caches, queues filling): half the runtime, at most 5 s."""
    return max(1, min(5, runtime_s // 2))


def fio_argv(filenames: Sequence[str], runtime_s: int) -> list[str]:
    """Sequential 1 MiB reads (bandwidth), then 4 KiB random reads (IOPS); never a write."""
    return ["fio", "--readonly", "--output-format=json", "--direct=1", "--ioengine=libaio", "--time_based",
            f"--runtime={runtime_s}", f"--ramp_time={ramp_s(runtime_s)}", "--group_reporting",
            f"--filename={':'.join(filenames)}",
            f"--name={SEQ_JOB}", "--rw=read", "--bs=1M", "--iodepth=16",
            f"--name={RAND_JOB}", "--stonewall", "--rw=randread", "--bs=4k", "--iodepth=32"]


def run_fio(fleet: Fleet, targets: Sequence[FioTarget], runtime_s: int) -> list[FioRun]:
    """fio on every target at once; processes are bounded and stopped whatever happens."""
    bound = 2 * (runtime_s + ramp_s(runtime_s)) + 30
    procs: list[tuple[FioTarget, RemoteProcess]] = []
    try:
        for target in targets:
            procs.append((target, fleet.start(target.host, fio_argv(target.filenames, runtime_s), bound)))
        for _, proc in procs:
            proc.started()
        runs = []
        for target, proc in procs:
            done = proc.wait()
            try:
                runs.append(FioRun(target, parse_fio(done.stdout)))
            except ParseError as exc:
                runs.append(FioRun(target, None, done.failure(exc)))
        return runs
    finally:
        stop_unfinished([p for _, p in procs])


def mounted(fleet: Fleet, hosts: Sequence[str], mount_point: str) -> list[str]:
    """The hosts on which ``mount_point`` is a mounted filesystem."""
    out = []
    for host in hosts:
        try:
            if fleet[host].run(f"mountpoint -q {shlex.quote(mount_point)}", timeout=10).rc == 0:
                out.append(host)
        except MeasurementError:
            continue
    return out


def steps(plan: SmokePlan) -> int:
    """The progress steps the phase counts for ``plan``: fio on one host, then on all at once."""
    return 2


def measure(run: SmokeRun) -> None:
    """The phase: fio on the clients through the shared filesystem, else on the storage hosts' drives."""
    plan = run.plan
    shared = plan.weka_mount or plan.array_mount  # the filesystem the clients read through
    clients_mounted = mounted(run.fleet, plan.client_hosts, shared) if shared else []
    storage = [h for h in run.cluster.role("storage") if h.name in plan.storage_hosts and h.drives]
    cannot = nothing_to_read(plan.array_mount if not plan.weka_mount else None, shared, len(clients_mounted),
                             plan.fio_path, len(storage))
    if cannot is not None:
        run.done += 2
        run.results.append(cannot)
        return
    if clients_mounted:
        targets = [FioTarget(h, [plan.fio_path or ""]) for h in clients_mounted]
        side, key, what = "client", "fio_read_gbytes_per_s", f"fio reading {plan.fio_path} on the clients"
    else:
        targets = [FioTarget(h.name, [d.path for d in h.drives]) for h in storage]
        side, key, what = "drive", "fio_drive_read_gbytes_per_s", "drive-side: fio on the storage hosts' drives"
    client_ref = run.cluster.inventory.acceptance.client_storage_gbytes_per_s
    run.results += measure_storage(plan, run.fleet, targets, FioSide(side, key, what, client_ref),
                                   run.options.remeasure, run.tick, run.announce,
                                   peer_floor(run.cluster.inventory.acceptance.noise.by_kind(), "storage"))


# The phase's pure verdicts: plain data in (racfg.smoke.measured, the plan), results out.
VERDICTS = (nothing_to_read, fio_results, fio_pair_results)
