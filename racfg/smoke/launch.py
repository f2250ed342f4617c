"""How smoke starts the processes of its multi-node steps: as Slurm job steps, or over SSH.

Where the inventory declares a scheduler, the TCP loads' iperf3 and the storage phase's fio run as
job steps of one job per partition that holds the measured nodes to itself for the run (``salloc
--no-shell --exclusive``, job name ``racfg-smoke``): each process is ``srun --jobid=J --overlap
--nodelist=HOST`` started on its host through racfg's SSH session, so its output, time bound and
stop are smoke's as over SSH, while Slurm places and accounts for it and lets no other job land on
the node under a measurement. The job is cancelled when the run ends, whatever ends it.

A node Slurm cannot give (racfg.slurm.placement: drained, down, allocated, in no partition; or refused
by ``salloc``) is still measured, over SSH, and the run says why. A site with no scheduler, or a
controller that cannot be reached, is measured over SSH and says so.
NCCL keeps its own launcher (acceptance.nccl_tests.launcher: mpirun or srun).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.inventory import Cluster
from racfg.slurm.client import controller_slurm
from racfg.slurm.placement import allocations, hosts_by

JOB_NAME = "racfg-smoke"


@dataclass(frozen=True)
class Launch:
    """Per host, the job its processes run in as job steps, or why they go over SSH."""

    jobs: Mapping[str, str] = field(default_factory=dict)  # host -> Slurm job id
    ssh: Mapping[str, str] = field(default_factory=dict)  # host -> why it is reached over SSH

    def argv(self, host: str, argv: Sequence[str]) -> list[str]:
        job = self.jobs.get(host)
        if job is None:
            return list(argv)
        return ["srun", f"--jobid={job}", "--overlap", "--nodes=1", "--ntasks=1", f"--nodelist={host}", "--quiet",
                "--", *argv]

    def describe(self) -> str:
        """One line for the report: which launcher ran which hosts' steps, and why any went over SSH."""
        by_job = hosts_by(self.jobs)
        parts = ["Slurm job steps (srun) in " + "; ".join(f"job {job} ({', '.join(hosts)})"
                                                        for job, hosts in by_job.items())] if by_job else []
        parts += [f"SSH on {', '.join(hosts)}: {why}" for why, hosts in hosts_by(self.ssh).items()]
        return "launcher of the TCP and storage steps: " + ("; ".join(parts) or "none (no host measured)")

    def as_dict(self) -> dict:
        return {"launcher": "slurm" if self.jobs else "ssh", "jobs": dict(self.jobs), "ssh": dict(self.ssh)}


@contextmanager
def launched(cluster: Cluster, overrides: ConnectionOverrides, hosts: Sequence[str]) -> Iterator[Launch]:
    """The run's launch: its jobs allocated on entry and cancelled on exit (the steps end with them)."""
    if cluster.inventory.scheduler is None:
        yield Launch(ssh=dict.fromkeys(hosts, "the site declares no scheduler"))
        return
    try:
        slurm = controller_slurm(cluster, overrides)
    except CannotRunError as exc:
        yield Launch(ssh=dict.fromkeys(hosts, f"Slurm not reached ({exc.message})"))
        return
    with slurm:
        try:
            groups, ssh = allocations(hosts, slurm.nodes())
        except CannotRunError as exc:
            groups, ssh = {}, dict.fromkeys(hosts, f"Slurm not read ({exc.message})")
        jobs: dict[str, str] = {}
        for partition, members in groups.items():
            try:
                job = slurm.allocate(members, partition, JOB_NAME)
            except CannotRunError as exc:
                ssh.update(dict.fromkeys(members, f"not allocated ({exc.message})"))
                continue
            jobs.update(dict.fromkeys(members, job))
        try:
            yield Launch(jobs, ssh)
        finally:
            for job in sorted(set(jobs.values())):
                with contextlib.suppress(CannotRunError):
                    slurm.cancel(job)
