"""Storage reads with fio, read-only: one node, then all nodes at once.

With a shared filesystem mounted on the clients (Weka), fio reads ``acceptance.smoke.fio_path``
(an existing file: smoke writes nothing) on every client, judged against the per-client and
aggregate references. Without one (the lab), fio reads each storage host's declared drives
with ``--readonly``, and the figure is said plainly to be drive-side.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from racfg.hostfacts.errors import ParseError
from racfg.hostfacts.fio import parse_fio
from racfg.smoke.errors import MeasurementError
from racfg.smoke.measured import RAND_JOB, SEQ_JOB, FioRun, FioTarget
from racfg.smoke.remote import Fleet, RemoteProcess
from racfg.smoke.tcp import stop_unfinished


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
            procs.append((target, fleet[target.host].start(fio_argv(target.filenames, runtime_s), bound)))
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
