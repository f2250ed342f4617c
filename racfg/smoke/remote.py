"""smoke's hosts: the shared SSH layer (racfg.ssh.host_sessions), its failures reported as measurement errors.

smoke starts its tools with ``HostSession.start`` (bounded by ``timeout`` on the host, killable
by process group) and ``Fleet`` stops every one still running when the run ends.
"""

from __future__ import annotations

from racfg.smoke.measurement_error import MeasurementError
from racfg.ssh.host_sessions import Completed, HostConnections, HostSession, RemoteProcess


class Fleet(HostConnections):
    """The run's SSH sessions by host name; a host lost or a tool stuck is a MeasurementError."""

    error = MeasurementError


__all__ = ["Completed", "Fleet", "HostSession", "RemoteProcess"]
