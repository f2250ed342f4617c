"""Where commands learn how to reach a site beyond its inventory: connection providers.

The virtual lab is the one provider today. This is the only module outside ``racfg.lab`` that
imports it: deploy, validate, drift and smoke receive the answer as ``ConnectionOverrides`` and
never ask the lab themselves, so the product runs the same with or without a lab installed.
"""

from __future__ import annotations

from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.inventory import Cluster


def overrides_for(cluster: Cluster) -> ConnectionOverrides:
    """The lab's overrides when a lab of this cluster's site is up; NO_OVERRIDES otherwise."""
    try:
        from racfg.lab.api import connection_overrides
    except ImportError:  # a packaging without the lab: nothing overrides the inventory
        return NO_OVERRIDES
    return connection_overrides(cluster.name, cluster)


def announce_substitutions(overrides: ConnectionOverrides, to_stderr: bool = False) -> None:
    """Say once, before anything runs, what the provider replaces (the lab's inbox OFED for MLNX_OFED ...),
    so a user never mistakes a lab run for a run of the inventory as written. ``to_stderr`` keeps a
    machine-readable stdout (``--format json``) clean."""
    import sys

    from racfg.console import say

    for line in overrides.substitutions:
        if to_stderr:
            print(f"{overrides.provider}: {line}", file=sys.stderr)
        else:
            say(f"{overrides.provider}: {line}")
