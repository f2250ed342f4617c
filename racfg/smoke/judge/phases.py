"""Verdicts on a phase or an item smoke could not measure: each says why, never a silent pass."""

from __future__ import annotations

from racfg.results import Result, Status
from racfg.smoke.plan import Link


def without_storage(phase: str) -> Result:
    """A phase that loads links from storage hosts, on a site whose storage is an external array."""
    return Result("cluster", f"{phase}/run", phase, Status.SKIP,
                  f"{phase}: no storage host to load the links from (the external array is not a host smoke "
                  "can run iperf3 or perftest on)")


def not_measured(phase: str, reason: str) -> Result:
    """A phase that started and could not finish measuring (a lost host, a tool that failed)."""
    return Result("cluster", f"{phase}/run", phase, Status.ERROR, f"{phase}: could not measure: {reason}")


def unreached_link(link: Link) -> Result:
    """A client link with no storage link it can be loaded from."""
    return Result(link.key, f"link/{link.key}", "link saturation", Status.SKIP,
                  f"not measured: no storage link on its subnet {link.network}; smoke loads a dgx link from the "
                  "storage links on its own subnet (data subnets are not routed)")
