"""Verdicts on single figures: a figure against a ReFrame-style reference (storage, the user's benchmark),
an RDMA bandwidth against its link's line rate."""

from __future__ import annotations

from typing import Any

from racfg.hostfacts.perftest import PerftestResult
from racfg.inventory.model import Reference
from racfg.results import Result, Status, expected_actual
from racfg.smoke.metrics import metric, reference_text, within
from racfg.smoke.plan import Link
from racfg.smoke.units import rate_text


def reference_result(target: str, check: str, category: str, value: float, unit: str, ref: Reference | None,
                     message: str, data: dict[str, Any], unjudged_reason: str) -> Result:
    """A figure against a ReFrame-style reference; without one it is reported and not judged."""
    actual = f"{value:.4g} {unit}"
    if ref is None:
        return Result(target, check, category, Status.SKIP, f"{message}; not judged: {unjudged_reason}",
                      None, actual, data=data)
    ok = within(value, ref)
    expected = reference_text(ref)
    return Result(target, check, category, Status.PASS if ok else Status.FAIL,
                  message if ok else f"{expected_actual(expected, actual)}; {message}", expected, actual,
                  data=data)


def rdma_unmeasured(link: Link, has_device: bool) -> Result:
    """A client link perftest cannot run on: it has no RDMA device, or no storage link on its subnet has one."""
    side = "no storage link with an RDMA device" if has_device else f"{link.key} has no RDMA device"
    return Result(link.key, f"rdma/{link.key}", "rdma", Status.SKIP,
                  f"RDMA bandwidth not measured: {side} (/sys/class/net/{link.nic}/device/infiniband)")


def rdma_share(link: Link, result: PerftestResult) -> float:
    """A perftest figure as a share of the link's line rate."""
    return result.average_gbits * 1000 / link.rate_mbit


def rdma_result(tool: str, link: Link, device: str, server: str, result: PerftestResult, floor: float) -> Result:
    """One perftest tool's figure on one link against the saturation floor (acceptance.link_saturation)."""
    share = rdma_share(link, result)
    ok = share >= floor
    return Result(link.key, f"rdma/{tool}/{link.key}", "rdma", Status.PASS if ok else Status.FAIL,
                  f"{tool} {device} <- {server}: {result.average_gbits:.2f} Gb/s = {share:.1%} of line rate",
                  f">= {floor:.0%} of {rate_text(link.rate_mbit * 1e6)}", f"{result.average_gbits:.2f} Gb/s",
                  fix=None if ok else "check the link's RDMA device, its firmware and port counters (racfg validate)",
                  data={**result.as_dict(), "metrics": [metric(f"rdma.{tool}.{link.key}", result.average_gbits,
                                                               "Gb/s")]})
