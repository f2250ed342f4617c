"""Talking to the site's Slurm: ``scontrol`` on the controller over racfg's SSH, or where racfg runs.

Why ``scontrol`` and not slurmrestd: every Slurm site has it, it needs no token, and the controller
is a host racfg already reaches like the cluster's (``scheduler.controller``: its address and user,
the inventory's SSH key or the provider's, host keys checked against the site's known_hosts and the
provider's, through racfg.ssh.host_sessions). ``scheduler.commands: local`` runs it where racfg
runs instead (a login node with the Slurm client and the MUNGE key).

Every command is an argv list; over SSH it is joined with ``shlex`` (values quoted, so a reason
reaches scontrol as one argument whatever it holds). A controller that cannot be reached, or a
slurmctld that does not answer, is "could not run" (exit 3) naming the controller.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Self

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError, UsageError
from racfg.hostfacts.scontrol import SlurmNode, parse_scontrol_nodes
from racfg.inventory import Cluster
from racfg.ssh.channels import ChannelError, Completed
from racfg.ssh.host_sessions import HostSession, SshEndpoint
from racfg.ssh.known_hosts import KnownHosts

COMMAND_TIMEOUT = 30.0
KEEPALIVE_S = 15
ALLOCATE_WAIT_S = 10  # salloc --immediate: nodes Slurm cannot give now are refused, never queued for
GRANTED = re.compile(r"Granted job allocation (\d+)")
STEP_JOB = "racfg-read"
# argv, what its input is (None: nothing), how long it may take
Runner = Callable[[Sequence[str], bytes | None, float], Completed]


class SlurmError(CannotRunError):
    """Slurm could not be asked or did not do what it was asked."""


def local_runner(argv: Sequence[str], data: bytes | None, timeout: float) -> Completed:
    try:
        done = subprocess.run(list(argv), input=data, capture_output=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise SlurmError(f"{argv[0]} is not installed where racfg runs (scheduler.commands: local)",
                         hint="install the Slurm client and its MUNGE key here, or use scheduler.commands: ssh",
                         ) from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{shlex.join(argv)} did not end in {timeout:.0f} s") from None
    return Completed(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"))


class Slurm:
    """One run's Slurm: the nodes as slurmctld sees them, a drain, a resume."""

    def __init__(self, where: str, runner: Runner, close: Callable[[], None] = lambda: None) -> None:
        self.where = where  # "slurmctld on slurmctl (198.18.0.5)", for every message
        self._run = runner
        self._close = close

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._close()

    def _checked(self, argv: Sequence[str], hint: str) -> Completed:
        """``argv`` run where Slurm is asked; its failure a SlurmError with the last line it said."""
        done = self._run(argv, None, COMMAND_TIMEOUT)
        if done.rc != 0:
            said = [line for line in (done.stderr if done.stderr.strip() else done.stdout).splitlines() if line.strip()]
            why = said[-1] if said else f"exit status {done.rc}"
            raise SlurmError(f"{self.where}: {shlex.join(argv)} failed: {why}", hint=hint)
        return done

    def _scontrol(self, *args: str) -> str:
        return self._checked(["scontrol", *args], hint="is slurmctld running and reachable from there? "
                                                       "(systemctl status slurmctld)").stdout

    def nodes(self) -> dict[str, SlurmNode]:
        return {n.name: n for n in parse_scontrol_nodes(self._scontrol("show", "node", "-o"))}

    def drain(self, node: str, reason: str) -> None:
        self._scontrol("update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}")

    def resume(self, node: str) -> None:
        self._scontrol("update", f"NodeName={node}", "State=RESUME")

    def allocate(self, nodes: Sequence[str], partition: str, name: str) -> str:
        """A job holding ``nodes`` of ``partition`` to itself and running nothing (``salloc --no-shell
        --exclusive``): its steps are started from the nodes (``srun --jobid``), and no other job lands
        on them meanwhile. Refused, not queued, when Slurm cannot give them now. Returns the job id."""
        argv = ["salloc", "--no-shell", "--exclusive", f"--immediate={ALLOCATE_WAIT_S}", f"--partition={partition}",
                f"--nodes={len(nodes)}", f"--nodelist={','.join(nodes)}", f"--job-name={name}"]
        done = self._checked(argv, hint="is the partition up and are the nodes idle? (sinfo --Node)")
        granted = GRANTED.search(done.stderr + done.stdout)
        if granted is None:
            raise SlurmError(f"{self.where}: {shlex.join(argv)} did not say which job it granted")
        return granted.group(1)

    def step(self, nodes: Sequence[str], partition: str, command: Sequence[str], data: bytes,
             timeout: float) -> Completed:
        """``command`` once on each of ``nodes`` as one job step of a job of its own (``srun`` without a
        job: it allocates, runs and releases), ``data`` its input on every node (``--input=all``), each
        line it prints prefixed by its task number (``--label``; racfg.slurm.node_step reads them).
        Not exclusive, and refused, not queued, when Slurm cannot start it now. Returned whatever its
        exit status: a step where some tasks failed still carries the others' output."""
        argv = ["srun", f"--partition={partition}", f"--nodes={len(nodes)}", f"--ntasks={len(nodes)}",
                "--ntasks-per-node=1", f"--nodelist={','.join(nodes)}", f"--immediate={ALLOCATE_WAIT_S}",
                f"--job-name={STEP_JOB}", "--input=all", "--label", "--quiet", "--", *command]
        return self._run(argv, data, timeout)

    def cancel(self, job: str) -> None:
        """End job ``job`` and every step still running in it."""
        self._checked(["scancel", job], hint=f"end it by hand: scancel {job}")

def controller_slurm(cluster: Cluster, overrides: ConnectionOverrides) -> Slurm:
    """The site's Slurm as ``scheduler.commands`` says; over SSH the controller is connected now (a
    controller that cannot be reached is exit 3 here, before anything was read)."""
    scheduler = cluster.inventory.scheduler
    if scheduler is None:
        raise UsageError(f"{cluster.display}: no scheduler section: Slurm is not declared",
                         hint="declare scheduler: {type: slurm, controller, partitions} (docs/gate.md)")
    controller = scheduler.controller
    where = f"slurmctld on {controller.name} ({controller.address})"
    if scheduler.commands == "local":
        return Slurm(f"slurmctld of {controller.name} (scontrol where racfg runs)", local_runner)
    endpoint = SshEndpoint(controller.name, controller.address, controller.ssh_user, 22,
                           overrides.ssh_key_for(cluster.inventory.defaults.all.ssh_key),
                           KnownHosts(cluster.known_hosts_file, overrides.known_hosts))
    session = HostSession(endpoint, SlurmError)
    try:
        session.connect()
    except CannotRunError as exc:
        raise SlurmError(f"{where}: cannot be reached: {exc.message}", hint=exc.hint) from None

    def over_ssh(argv: Sequence[str], data: bytes | None, timeout: float) -> Completed:
        if data is None:
            return session.run(shlex.join(argv), timeout=timeout)
        try:
            stream = session.stream(shlex.join(argv), timeout, KEEPALIVE_S)
            stream.send(data)
            stream.end_input(0)
            return stream.rest()
        except ChannelError as exc:
            raise SlurmError(f"{where}: {argv[0]} over SSH failed: {exc}") from None

    return Slurm(where, over_ssh, session.close)
