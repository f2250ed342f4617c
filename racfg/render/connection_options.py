"""A run's connection options: what a provider (the lab) says about reaching the hosts.

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
"""

from __future__ import annotations

import shlex

from racfg.connection import ConnectionOverrides


def connection_options(overrides: ConnectionOverrides) -> list[str]:
    """ansible-playbook options for a provider's hosts: its key, and strict checking on its known_hosts."""
    if not overrides.active:
        return []
    options = ["--private-key", str(overrides.ssh_key)] if overrides.ssh_key else []
    ssh_args = ["-o", "IdentitiesOnly=yes"]
    if overrides.known_hosts is not None:
        ssh_args += ["-o", f"UserKnownHostsFile={overrides.known_hosts}", "-o", "StrictHostKeyChecking=yes"]
    return [*options, "--ssh-common-args", shlex.join(ssh_args)]
