"""Storage verdicts: whether fio has something to read (the shared filesystem mounted, a file named,
drives declared), and fio's figures, one host then all at once, against their references."""

from __future__ import annotations

from dataclasses import dataclass

from racfg.inventory.model import Reference
from racfg.results import Result, Status
from racfg.smoke.judge.figures import reference_result
from racfg.smoke.measured import FioRun
from racfg.smoke.metrics import metric
from racfg.smoke.units import bytes_rate_text


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


def fio_results(side: FioSide, label: str, runs: list[FioRun], refs: FioRefs) -> list[Result]:
    """One fio run over ``runs`` hosts at once: its sequential figure (and IOPS where referenced)."""
    n = len(runs)
    failed = [r for r in runs if r.result is None]
    if failed:
        return [Result(failed[0].target.host, f"storage/{label}", "storage", Status.ERROR,
                       f"fio failed on {failed[0].target.host}: {failed[0].error}")]
    seq = seq_bytes(runs)
    iops = sum(r.rand_iops for r in runs)
    message = (f"{side.what}, {n} host(s) at once: sequential 1 MiB reads {bytes_rate_text(seq)}, "
               f"4 KiB random reads {iops:,.0f} IOPS")
    data = {"side": side.side, "hosts": [r.target.host for r in runs], "seq_bytes_per_s": round(seq),
            "rand_iops": round(iops), "per_host": {r.target.host: {"seq_bytes_per_s": round(r.seq_bytes_per_s),
                                                                   "rand_iops": round(r.rand_iops)} for r in runs},
            "metrics": [metric(f"storage.{side.side}.seq.n{n}", seq / 1e9, "GB/s"),
                        metric(f"storage.{side.side}.randiops.n{n}", iops, "IOPS")]}
    target = f"{side.side}s" if n > 1 else runs[0].target.host
    reason = (f"no acceptance.references.{side.key} for {n} node(s)" if side.side == "client" else
              f"a drive-side figure (no shared filesystem mounted); give acceptance.references.{side.key} to judge it")
    out = [reference_result(target, f"storage/{side.side}/n{n}", "storage", seq / 1e9, "GB/s", refs.seq, message,
                            data, reason)]
    if refs.iops is not None:
        out.append(reference_result(target, f"storage/{side.side}/iops/n{n}", "storage", iops, "IOPS", refs.iops,
                                    message, {"rand_iops": round(iops)}, ""))
    return out
