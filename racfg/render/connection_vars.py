"""A run's connection variables: what a provider (the lab) says about reaching the hosts.

Kept apart from the rendered inventory on purpose: ``racfg render`` is a pure function of the
inventory (same bytes whether a lab is up or not), while the SSH key and host keys a provider
hands over belong to one run. deploy writes them as a second Ansible inventory source inside
its run record (no secrets in it: a key *path* and ssh options), next to the rendered one.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import yaml

from racfg.connection import ConnectionOverrides
from racfg.inventory.cluster import Cluster

HEADER = "# Connection overrides of one racfg run ({provider}); not part of the rendered inventory.\n"


def connection_vars(cluster: Cluster, overrides: ConnectionOverrides) -> dict[str, dict[str, Any]]:
    """{host: vars} for the cluster hosts: the provider's key where the inventory gives none, its host keys."""
    out: dict[str, dict[str, Any]] = {}
    if not overrides.active:
        return out
    ssh_args = ["-o", "IdentitiesOnly=yes"]
    if overrides.known_hosts is not None:
        ssh_args += ["-o", f"UserKnownHostsFile={overrides.known_hosts}", "-o", "StrictHostKeyChecking=yes"]
    for host in cluster.hosts:
        host_vars: dict[str, Any] = {"ansible_ssh_common_args": shlex.join(ssh_args)}
        key = overrides.ssh_key_for(host.ssh_key)
        if key and not host.ssh_key:
            host_vars["ansible_ssh_private_key_file"] = key
        out[host.name] = host_vars
    return out


def write_connection_vars(cluster: Cluster, overrides: ConnectionOverrides, out: Path) -> Path | None:
    """Write ``out/hosts.yml`` (an inventory source of host vars only); None when nothing overrides."""
    hosts = connection_vars(cluster, overrides)
    if not hosts:
        return None
    out.mkdir(parents=True, exist_ok=True)
    path = out / "hosts.yml"
    body = yaml.safe_dump({"all": {"hosts": hosts}}, sort_keys=True, default_flow_style=False)
    path.write_text(HEADER.format(provider=overrides.provider) + "---\n" + body, encoding="utf-8")
    return path
