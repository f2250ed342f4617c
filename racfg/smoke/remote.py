"""smoke's hosts: the shared SSH layer (racfg.ssh.host_sessions), its failures reported as measurement errors.

smoke starts its tools with ``HostSession.start`` (bounded by ``timeout`` on the host, killable
by process group), the multi-node steps' through ``Fleet.start`` (as Slurm job steps where the run
has a job), and ``Fleet`` stops every one still running when the run ends.
"""

from __future__ import annotations

from collections.abc import Sequence

from racfg.smoke.launch import Launch
from racfg.smoke.measurement_error import MeasurementError
from racfg.ssh.host_sessions import Completed, HostConnections, HostSession, RemoteProcess


class Fleet(HostConnections):
    """The run's SSH sessions by host name; a host lost or a tool stuck is a MeasurementError.
    ``launch``: how the multi-node steps' tools start (racfg.smoke.launch); over SSH until set."""

    error = MeasurementError
    launch = Launch()

    def start(self, host: str, argv: Sequence[str], bound_s: float, *, held: bool = False) -> RemoteProcess:
        """A tool of a multi-node step on ``host``: a Slurm job step where the run has a job there."""
        return self[host].start(self.launch.argv(host, argv), bound_s, held=held)


__all__ = ["Completed", "Fleet", "HostSession", "RemoteProcess"]
