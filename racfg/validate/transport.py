"""One SSH connection per host, through testinfra's paramiko backend.

testinfra's own paramiko backend trusts any host key (WarningPolicy) and cannot be handed a
known_hosts file. A validation run must be as strict as the deploy that preceded it, so this
subclass loads the user's known hosts (and the provider's, e.g. the lab's) and rejects an unknown
key when a known_hosts file was given. Everything else (command encoding, sudo, results) is
testinfra's, so validators use the ordinary ``host`` API.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
import testinfra.host
from testinfra.backend.paramiko import ParamikoBackend


@dataclass(frozen=True)
class SshEndpoint:
    """Where and as whom to reach one host (from the rendered host_vars plus the overrides)."""

    name: str
    address: str
    user: str = "root"
    port: int = 22
    key_file: str | None = None
    known_hosts: str | None = None
    timeout: int = 10
    extra: dict[str, str] = field(default_factory=dict)


class StrictParamikoBackend(ParamikoBackend):
    """testinfra's paramiko backend with host-key checking against known_hosts files."""

    def __init__(self, endpoint: SshEndpoint) -> None:
        spec = f"{endpoint.user}@{endpoint.address}:{endpoint.port}"
        super().__init__(spec, ssh_identity_file=endpoint.key_file, timeout=endpoint.timeout)
        self.endpoint = endpoint

    @functools.cached_property
    def client(self) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        client.load_system_host_keys()
        if self.endpoint.known_hosts:
            client.load_host_keys(str(Path(self.endpoint.known_hosts).expanduser()))
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        else:
            client.set_missing_host_key_policy(paramiko.WarningPolicy())
        client.connect(
            hostname=self.endpoint.address, port=self.endpoint.port, username=self.endpoint.user,
            key_filename=str(Path(self.endpoint.key_file).expanduser()) if self.endpoint.key_file else None,
            timeout=self.endpoint.timeout, banner_timeout=self.endpoint.timeout,
            auth_timeout=self.endpoint.timeout, allow_agent=not self.endpoint.key_file,
            look_for_keys=not self.endpoint.key_file,
        )
        return client

    def close(self) -> None:
        if "client" in self.__dict__:
            self.__dict__.pop("client").close()


def connect(endpoint: SshEndpoint) -> testinfra.host.Host:
    """A testinfra Host on its own connection (opened on first command)."""
    return testinfra.host.Host(StrictParamikoBackend(endpoint))
