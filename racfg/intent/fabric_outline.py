"""The fabric as plain data for a picture: switches by tier, the ISLs between them, each host NIC's port.

The HTML report draws the fabric (racfg.results.fabric_drawing) but has no Cluster at hand: it reads
only a Report, which may come back from a run record's results.json years later. So the command that
makes the report puts this outline in ``Report.meta["fabric"]``: JSON-ready, small (one short row per
cabled port, one per leaf-spine pair), and the same for validate, drift and smoke.
"""

from __future__ import annotations

from typing import Any

from racfg.intent.site_model import SiteIntent


def fabric_outline(intent: SiteIntent) -> dict[str, Any]:
    """``{"switches": [[name, tier]], "isls": [[leaf, spine, links, gbps]], "ports": [[switch, port, "host:nic",
    gbps]]}``; a switch's tier is its leaf-spine role, else ``switch`` (one tier)."""
    pairs: dict[tuple[str, str], list[float]] = {}
    for isl in intent.topology.isls:
        pairs.setdefault((isl.leaf, isl.spine), []).append(isl.speed_gbps)
    return {
        "switches": [[name, sw.role or "switch"] for name, sw in intent.switches.items()],
        "isls": [[leaf, spine, len(speeds), sum(speeds)] for (leaf, spine), speeds in pairs.items()],
        "ports": [[name, port.port, port.description, port.speed_gbps]
                  for name, sw in intent.switches.items() for port in sw.ports],
    }
