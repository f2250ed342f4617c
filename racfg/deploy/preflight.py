"""Checks that must pass before a deploy changes anything.

A deploy that fails halfway because a file is missing leaves a cluster half-configured; these
checks catch what can be known on the controller before the first task runs.
"""

from __future__ import annotations

import os
from pathlib import Path

from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.errors import UsageError
from racfg.inventory import Cluster

URL_PREFIXES = ("http://", "https://", "ftp://", "file://")


def ofed_source_problem(cluster: Cluster) -> str | None:
    """The mlnx flavor's local source must exist on the controller (a URL is the hosts' business)."""
    ofed = cluster.inventory.software.ofed
    if ofed is None or ofed.flavor != "mlnx" or not ofed.source or ofed.source.startswith(URL_PREFIXES):
        return None
    source = Path(os.path.expanduser(ofed.source))
    if not source.is_absolute():
        source = cluster.path.parent / source
    if not source.exists():
        return (f"{cluster.where(('software', 'ofed', 'source'))}: MLNX_OFED source {ofed.source} does not exist "
                "on this machine")
    return None


def run_preflight(cluster: Cluster, switch_names: list[str], overrides: ConnectionOverrides = NO_OVERRIDES) -> None:
    """Raise UsageError (exit 2) naming every problem found; nothing has changed yet."""
    problems = []
    # A provider that sets racfg_ofed (the lab: inbox for MLNX_OFED) replaces the pinned stack: its source is not read.
    ofed = None if "racfg_ofed" in overrides.host_vars else ofed_source_problem(cluster)
    if ofed:
        problems.append(ofed + " (hint: copy the MLNX_OFED directory or tarball there, or use a repository URL)")
    problems += switch_credential_problems(cluster, switch_names, overrides)
    if problems:
        raise UsageError("deploy refused before any change:\n  " + "\n  ".join(problems))


def switch_credential_problems(cluster: Cluster, switch_names: list[str],
                               overrides: ConnectionOverrides = NO_OVERRIDES) -> list[str]:
    """Every switch about to be configured must have a password racfg can find."""
    from racfg.switches import SwitchCredentialsError, resolve_password

    problems = []
    for name in switch_names:
        switch = cluster.switches[name]
        try:
            resolve_password(switch.spec.credentials.model_dump(), site=cluster.name, name=name, overrides=overrides)
        except SwitchCredentialsError as exc:
            problems.append(f"{cluster.where((*switch.src, 'credentials'))}: switch {name}: {exc}")
    return problems
