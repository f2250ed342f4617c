"""A run's connection options: what a provider (the lab) says about reaching the hosts, and the
host keys deploy's OpenSSH checks them against.

Kept apart from the rendered inventory on purpose: ``racfg render`` is a pure function of the
inventory (same bytes whether a lab is up or not), while the SSH key and host keys a provider
hands over belong to one run. deploy and drift pass them to ansible-playbook as options
(``--private-key``, ``--ssh-common-args``), which ansible-runner records with the run's command
line (no secrets: a key *path* and ssh options).

Ansible ranks a host's own inventory variables above command-line options, so a host whose
inventory names its own key (``ansible_ssh_private_key_file``, rendered from ``ssh_key``) keeps
it: the provider's key reaches only the hosts whose inventory gives none.

Why options and not a second inventory source of per-host variables, as racfg once wrote: they
are what an operator types for a plain ``ansible-playbook`` run (the tests' plain runs take them
from here), and Ansible's own precedence does what racfg had to work out per host. The speed-up
they were expected to bring did not show on racfg's runs (README, benchmarks).

Host keys: every run, with or without a provider, gets ``StrictHostKeyChecking=yes`` on the files
racfg.ssh.known_hosts names (the site's ``site.known_hosts`` or the user's, the system's, and the
provider's), given as absolute paths: racfg's own SSH connections (paramiko, netmiko) read exactly
these, so a key is trusted or refused the same way whichever of them connects.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from racfg.connection import ConnectionOverrides
from racfg.ssh.known_hosts import KnownHosts


def connection_options(overrides: ConnectionOverrides, site_known_hosts: Path | None = None) -> list[str]:
    """ansible-playbook options: a provider's key, and strict host key checking on the site's (or
    the user's) known_hosts and the provider's (``Cluster.known_hosts_file`` is the site's)."""
    options = ["--private-key", str(overrides.ssh_key)] if overrides.ssh_key else []
    ssh_args = ["-o", "IdentitiesOnly=yes"] if overrides.active else []
    ssh_args += KnownHosts(site_known_hosts, overrides.known_hosts).openssh_options()
    return [*options, "--ssh-common-args", shlex.join(ssh_args)]
