"""validate's hosts: testinfra's ``host`` API on the shared SSH layer (racfg.ssh.host_sessions).

testinfra's own paramiko backend trusts any host key (WarningPolicy), cannot be handed a
known_hosts file and opens its own connection. Validation reaches the hosts as smoke does, with
the same host-key checking as the deploy before it: this backend runs testinfra's commands
(encoding, sudo, results: testinfra's) over the run's one ``HostSession`` per host.
"""

from __future__ import annotations

from typing import Any

import testinfra.host
from testinfra.backend.base import BaseBackend, CommandResult

from racfg.ssh.host_sessions import HostSession

COMMAND_TIMEOUT = 300.0  # a probe script (every section and the jumbo pings) ends well within this


class SharedSessionBackend(BaseBackend):  # type: ignore[misc]
    """testinfra commands over a host's shared session; it connects on the first command."""

    NAME = "racfg"

    def __init__(self, session: HostSession, **kwargs: Any) -> None:
        super().__init__(session.name, **kwargs)
        self.session = session

    def run(self, command: str, *args: str, **kwargs: Any) -> CommandResult:
        command = self.get_command(command, *args)
        self.session.ensure_connected()
        done = self.session.run(command, timeout=COMMAND_TIMEOUT)
        return self.result(done.rc, self.encode(command), done.stdout, done.stderr)


def host_on(session: HostSession) -> testinfra.host.Host:
    """A testinfra Host whose commands go over ``session``."""
    return testinfra.host.Host(SharedSessionBackend(session))
