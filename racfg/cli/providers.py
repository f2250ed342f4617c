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
    return connection_overrides(cluster.name)
