"""Link verdicts: a client link's reading against its line rate and TCP ceiling, and against the best
link of its kind (outliers). A reading across the spines that falls short may be its leaf's uplinks,
not the link: those are named from the ISL counters, so the fix goes where the fault is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from racfg.results import Result, Status, expected_actual
from racfg.smoke.bottleneck import UPLINKS_FIX, Bottleneck, leaf_uplinks
from racfg.smoke.measured import LoadResult, StepProbe
from racfg.smoke.metrics import metric
from racfg.smoke.plan import Link, SmokePlan
from racfg.smoke.units import pct, rate_text

DIRECTION_TEXT = {"read": "read (storage -> client)", "write": "write (client -> storage)"}


@dataclass
class LinkMeasurement:
    link: Link
    direction: str
    load: LoadResult  # this link's flows only
    probe: StepProbe | None = None
    batched: bool = False  # read in a batch with other links (racfg.smoke.batches), not alone

    @property
    def bits(self) -> float:
        return self.load.per_client_link().get(self.link.key, 0.0)

    @property
    def share(self) -> float:
        return self.bits / (self.link.rate_mbit * 1e6)


def link_result(plan: SmokePlan, m: LinkMeasurement) -> Result:
    link = m.link
    line = link.rate_mbit * 1e6
    ceiling = link.tcp_ceiling
    share_ceiling = m.share / ceiling
    floor = plan.saturation_floor
    expected = f">= {pct(floor)} of {rate_text(line)} ({link.rate_source})"
    actual = (f"{rate_text(m.bits)} = {pct(m.share)} of line rate, {pct(share_ceiling)} of the TCP ceiling "
              f"({pct(ceiling)} at MTU {link.mtu})")
    errors = m.load.errors
    if errors and m.bits == 0:
        return Result(link.key, f"link/{m.direction}/{link.key}", "link saturation", Status.ERROR,
                      f"{DIRECTION_TEXT[m.direction]}: not measured: {errors[0]}", expected, None,
                      data={"direction": m.direction, "errors": errors})
    if share_ceiling >= 0.97:
        limit = "the link is full; TCP/IP headers take the rest"
    elif m.share >= floor:
        limit = f"{pct(1 - share_ceiling)} below what TCP carries at MTU {link.mtu}"
    else:
        limit = (f"{pct(1 - share_ceiling)} below what TCP carries at MTU {link.mtu}: not the protocol, "
                 "look at the link, the storage side and the client")
    status = Status.PASS if m.share >= floor else Status.FAIL
    uplinks = uplinks_short(plan, m) if status is Status.FAIL else None
    if uplinks is not None:
        limit = f"the load crossed the spines and the leaf's uplinks are the limit: {uplinks.text}"
    message = f"{DIRECTION_TEXT[m.direction]}: {rate_text(m.bits)}; {limit}"
    if errors:
        message += f" ({len(errors)} of {len(m.load.flows)} iperf3 processes failed: {errors[0]})"
    if status is Status.FAIL:
        message = f"{expected_actual(expected, rate_text(m.bits))}; {message}"
    fix = None if status is Status.PASS else UPLINKS_FIX if uplinks is not None else (
        "check the cable, port speed and NIC of this link (racfg validate), then the storage side")
    return Result(link.key, f"link/{m.direction}/{link.key}", "link saturation", status, message, expected, actual,
                  fix=fix, seconds=m.load.seconds,
                  data={"bottleneck": uplinks.as_dict() if uplinks is not None else None,
                        "direction": m.direction, "measured_bps": round(m.bits), "line_bps": round(line),
                        "rate_source": link.rate_source, "mtu": link.mtu, "tcp_ceiling": round(ceiling, 5),
                        "share_of_line": round(m.share, 5), "share_of_ceiling": round(share_ceiling, 5),
                        "processes": len([f for f in m.load.flows if f.flow.client.key == link.key]),
                        "flows": [{"server": f.flow.server.key, "port": f.flow.port,
                                   "iperf3": f.result.as_dict() if f.result else None, "error": f.error}
                                  for f in m.load.flows],
                        "metrics": [metric(f"link.{m.direction}.{link.key}", m.bits / 1e6, "Mbit/s")]})


def uplinks_short(plan: SmokePlan, m: LinkMeasurement) -> Bottleneck | None:
    """The leaf whose uplinks this reading filled, on a leaf-spine site (None: not the uplinks)."""
    return leaf_uplinks(plan, m.load, m.probe.port_growth() if m.probe else None)


def best_of_kind(best: LinkMeasurement) -> float:
    """What the links of a kind are held to: the best one's figure, but no more than its line rate
    carries at its MTU. A figure above that is not a faster link but a measurement that overshot
    (a shaper's burst, processes that did not run over quite the same seconds), and holding the
    others to it would name full links as slow."""
    return min(best.bits, best.link.rate_mbit * 1e6 * best.link.tcp_ceiling)


def link_kinds(measurements: Sequence[LinkMeasurement]) -> dict[tuple[str, float], list[LinkMeasurement]]:
    """The measured links of each kind (direction, declared speed) that has two or more, reads first."""
    kinds = sorted({(m.direction, m.link.declared_mbit) for m in measurements}, key=lambda k: (k[0] != "read", k[1]))
    groups = {kind: [m for m in measurements if (m.direction, m.link.declared_mbit) == kind and m.bits > 0]
              for kind in kinds}
    return {kind: group for kind, group in groups.items() if len(group) > 1}


def outlier_bound(plan: SmokePlan, m: LinkMeasurement, measurements: Sequence[LinkMeasurement]) -> float | None:
    """The figure below which ``m`` is an outlier among ``measurements`` (None: no other link of its kind)."""
    group = link_kinds(measurements).get((m.direction, m.link.declared_mbit))
    if group is None:
        return None
    return plan.outlier_fraction * best_of_kind(max(group, key=lambda x: x.bits))


def outlier_results(plan: SmokePlan, measurements: list[LinkMeasurement]) -> list[Result]:
    """A link below ``outlier_fraction`` of the best link of its kind (direction, declared speed) is
    named, even when it meets its own line rate: a link that came up at half speed is full, and slow."""
    out = []
    for (direction, _), group in link_kinds(measurements).items():
        best = max(group, key=lambda m: m.bits)
        reference = best_of_kind(best)
        held = (f"{best.link.key}, {rate_text(best.bits)}" if reference >= best.bits else
                f"{best.link.key}, {rate_text(best.bits)}, counted as {rate_text(reference)}: "
                f"the TCP ceiling of its line rate")
        bound = plan.outlier_fraction * reference
        slow = [m for m in group if m.bits < bound]
        for m in slow:
            out.append(Result(m.link.key, f"outlier/{direction}/{m.link.key}", "outliers", Status.FAIL,
                              f"{expected_actual(f'>= {rate_text(bound)}', rate_text(m.bits))}; "
                              f"{DIRECTION_TEXT[direction]}: {pct(m.bits / reference)} of the best link of its kind "
                              f"({held})",
                              f">= {pct(plan.outlier_fraction)} of the best link", pct(m.bits / reference),
                              fix="compare its cable, negotiated speed, port counters and NIC with the best link's",
                              data={"direction": direction, "best": best.link.key, "best_bps": round(best.bits),
                                    "reference_bps": round(reference),
                                    "share_of_best": round(m.bits / reference, 5)}))
        if not slow:
            out.append(Result("cluster", f"outlier/{direction}", "outliers", Status.PASS,
                              f"{DIRECTION_TEXT[direction]}: every link within {pct(plan.outlier_fraction)} of the "
                              f"best ({held})"))
    return out
