"""The links phase (``links``): every client link loaded both ways, a link that misses its mark measured again.

Plan: two loads per client link (read, write); links that share no bottleneck are loaded together
(racfg.smoke.batches), each from storage links of its own. Commands: iperf3 through racfg.smoke.tcp
(``run.load``). A batched reading that meets the link's mark is its first reading; one that misses is
set aside and the link is loaded alone from every storage link it may use, so that every reading a
failing verdict stands on is the link's own.

A link is held to two marks: its share of line rate (acceptance.link_saturation) and the best link
of its kind (acceptance.smoke.outlier_fraction). One reading can miss either on noise, so the link
that missed, in that direction, is loaded again (racfg.smoke.remeasure) before it is judged; every
other link keeps its readings. Each verdict stands on the link's best reading and lists them all.

Verdicts (``VERDICTS``, pure): a client link's reading against its line rate and TCP ceiling, and
against the best link of its kind (outliers). A reading across the spines that falls short may be
its leaf's uplinks, not the link: those are named from the ISL counters, so the fix goes where the
fault is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial

from racfg.results import Result, Status, expected_actual
from racfg.smoke import plots
from racfg.smoke.batches import Assignment, link_batches
from racfg.smoke.bottleneck import UPLINKS_FIX, Bottleneck, leaf_uplinks
from racfg.smoke.link_ceiling import OVERSHOOT_FIX, above, carried_bits, overshoot_text
from racfg.smoke.machine_limit import machine_limited, machine_limits
from racfg.smoke.measured import LinkMeasurement, LoadResult
from racfg.smoke.metrics import metric
from racfg.smoke.remeasure import (
    OVERSHOT,
    Announce,
    Reading,
    deciding_reading,
    measure_again,
    until_met,
    with_readings,
)
from racfg.smoke.run_state import Measure, SmokeRun
from racfg.smoke.smoke_plan import Link, SmokePlan
from racfg.smoke.units import pct, rate_text

Series = dict[tuple[str, str], list[LinkMeasurement]]  # (link key, direction) -> its readings, in order


def measure_links(plan: SmokePlan, measure: Measure, limit: int, tick: Announce, announce: Announce
                  ) -> tuple[list[LinkMeasurement], list[Result]]:
    """Every client link, read then write; returns each one's deciding reading and the verdicts."""
    series: Series = {}
    screened: dict[tuple[str, str], tuple[LinkMeasurement, int]] = {}  # a batch's reading, and its size
    for number, batch in enumerate(link_batches(plan), start=1):
        for direction in ("read", "write"):
            together = _screen(measure, batch, direction, number) if len(batch) > 1 else {}
            for link in (a.client for a in batch):
                what = f"link {direction} {link.key}"
                tick(what)
                take = partial(_take, measure, link, direction)
                first = together.get(link.key)
                if first is not None:
                    screened[(link.key, direction)] = (first, len(batch))
                    if floor_margin(plan, first) < 0:  # set aside: the link is measured alone
                        announce(f"{what}: below the mark with {len(batch) - 1} other links, measured alone")
                        first = None
                series[(link.key, direction)] = until_met([first or take()], take, partial(floor_margin, plan),
                                                          limit, announce, what)
    _outliers_again(plan, series, measure, limit, announce)
    best = {key: best_reading(plan, readings) for key, readings in series.items()}
    results = [_with_batch(with_readings(link_result(plan, best[key]),
                                         [_reading(m, floor_margin(plan, m)) for m in readings], limit),
                           plan, screened.get(key)) for key, readings in series.items()]
    chosen = list(best.values())
    for result in outlier_results(plan, chosen):
        key = (result.target, result.data.get("direction", ""))
        if result.status is Status.FAIL and key in series:
            bound = outlier_bound(plan, best[key], chosen) or 0.0
            result = with_readings(result, [_reading(m, m.bits / bound - 1) for m in series[key]], limit)
        results.append(result)
    return chosen, results


def floor_margin(plan: SmokePlan, m: LinkMeasurement) -> float:
    """How far a reading is past the link's mark: its share of line rate less acceptance.link_saturation;
    ``OVERSHOT`` for a reading above what the link carries (measured again, never deciding over a real one)."""
    return OVERSHOT if overshot(m) else m.share - plan.saturation_floor


def overshot(m: LinkMeasurement) -> bool:
    """Whether a reading is above what its link carries (racfg.smoke.link_ceiling): a measurement error."""
    return above(m.bits, carried_bits(m.link))


def best_reading(plan: SmokePlan, readings: list[LinkMeasurement]) -> LinkMeasurement:
    return readings[deciding_reading([floor_margin(plan, m) for m in readings])]


def _screen(measure: Measure, batch: list[Assignment], direction: str, number: int) -> dict[str, LinkMeasurement]:
    """One load of a batch: each link's reading, with its own flows only."""
    clients = [a.client for a in batch]
    load, probe = measure(clients, direction, f"links/{direction}/batch{number}",
                          {a.client.key: a.sources for a in batch})
    return {link.key: LinkMeasurement(link, direction, LoadResult(direction, [
        f for f in load.flows if f.flow.client.key == link.key], load.seconds, load.received), probe, batched=True)
        for link in clients}


def _with_batch(result: Result, plan: SmokePlan, screened: tuple[LinkMeasurement, int] | None) -> Result:
    """The result with its batch's reading in its data (``batch``: the links loaded together, the reading,
    whether it met the mark and so counts as the link's first reading)."""
    if screened is None:
        return result
    m, size = screened
    return replace(result, data={**result.data, "batch": {
        "links": size, "value": round(m.bits / 1e6, 3), "unit": "Mbit/s", "meets": floor_margin(plan, m) >= 0,
        "storage_links": sorted({f.flow.server.key for f in m.load.flows})}})


def _take(measure: Measure, link: Link, direction: str) -> LinkMeasurement:
    load, probe = measure([link], direction, f"link/{direction}/{link.key}")
    return LinkMeasurement(link, direction, load, probe)


def _reading(m: LinkMeasurement, margin: float) -> Reading:
    over = overshot(m)
    return Reading(m.bits / 1e6, "Mbit/s", OVERSHOT if over else margin, rate_text(m.bits), over)


def _outliers_again(plan: SmokePlan, series: Series, measure: Measure, limit: int, announce: Announce) -> None:
    """Links below the best of their kind, measured again while within the limit. The best may itself be
    measured again only by its own floor, so the bound moves only when a re-measured link becomes the best.
    A link whose only reading is a batch's is measured alone first, whatever the limit: a batch's reading
    may pass a link, never fail it."""
    for _ in range(limit + 1):
        chosen = {key: best_reading(plan, readings) for key, readings in series.items()}
        slow = []
        for key, m in chosen.items():
            bound = outlier_bound(plan, m, list(chosen.values()))
            margins = [r.bits / bound - 1 for r in series[key]] if bound else []
            if margins and ((_batched_only(series[key]) and max(margins) < 0) or measure_again(margins, limit)):
                slow.append(key)
        if not slow:
            return
        for key in slow:
            m = chosen[key]
            again = "measured alone" if _batched_only(series[key]) else "measured again"
            announce(f"link {m.direction} {m.link.key}: below the best of its kind, {again} "
                     f"({len(series[key])} of {limit})")
            series[key].append(_take(measure, m.link, m.direction))


def _batched_only(readings: list[LinkMeasurement]) -> bool:
    """Every reading of the link was a batch's: none of them may fail it."""
    return all(r.batched for r in readings)


DIRECTION_TEXT = {"read": "read (storage -> client)", "write": "write (client -> storage)"}


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
    if overshot(m):
        return _overshot_result(m, expected, actual)
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
    result = Result(link.key, f"link/{m.direction}/{link.key}", "link saturation", status, message, expected, actual,
                    fix=fix, seconds=m.load.seconds,
                    data={"bottleneck": uplinks.as_dict() if uplinks is not None else None,
                          "direction": m.direction, "measured_bps": round(m.bits), "line_bps": round(line),
                          "measured_by": "receiving NICs" if m.received_keys() else "processes",
                          "rate_source": link.rate_source, "mtu": link.mtu, "tcp_ceiling": round(ceiling, 5),
                          "share_of_line": round(m.share, 5), "share_of_ceiling": round(share_ceiling, 5),
                          "processes": len([f for f in m.load.flows if f.flow.client.key == link.key]),
                          "flows": [{"server": f.flow.server.key, "port": f.flow.port,
                                     "iperf3": f.result.as_dict() if f.result else None, "error": f.error}
                                    for f in m.load.flows],
                          "metrics": [metric(f"link.{m.direction}.{link.key}", m.bits / 1e6, "Mbit/s")]})
    limits = machine_limits(m.load, m.probe) if status is Status.FAIL and uplinks is None else []
    return machine_limited(result, limits) if limits else result


def _overshot_result(m: LinkMeasurement, expected: str, actual: str) -> Result:
    """A link whose deciding reading is above what it carries: an error that says so, with no figure (no
    metric: a baseline never keeps it)."""
    link = m.link
    return Result(link.key, f"link/{m.direction}/{link.key}", "link saturation", Status.ERROR,
                  f"{DIRECTION_TEXT[m.direction]}: "
                  + overshoot_text(m.bits, carried_bits(link), f"a {rate_text(link.rate_mbit * 1e6)} link"),
                  expected, actual, fix=OVERSHOOT_FIX, seconds=m.load.seconds,
                  data={"direction": m.direction, "measured_bps": round(m.bits),
                        "line_bps": round(link.rate_mbit * 1e6), "tcp_ceiling": round(link.tcp_ceiling, 5),
                        "share_of_line": round(m.share, 5), "share_of_ceiling": round(m.share / link.tcp_ceiling, 5),
                        "overshot": True})


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
            limits = machine_limits(m.load, m.probe)  # short because of the measuring machine: not the link's
            if limits:
                out[-1] = machine_limited(out[-1], limits)
        if not slow:
            out.append(Result("cluster", f"outlier/{direction}", "outliers", Status.PASS,
                              f"{DIRECTION_TEXT[direction]}: every link within {pct(plan.outlier_fraction)} of the "
                              f"best ({held})"))
    return out


def unreached_link(link: Link) -> Result:
    """A client link with no storage link it can be loaded from."""
    return Result(link.key, f"link/{link.key}", "link saturation", Status.SKIP,
                  f"not measured: no storage link on its subnet {link.network}; smoke loads a dgx link from the "
                  "storage links on its own subnet (data subnets are not routed)")


def steps(plan: SmokePlan) -> int:
    """The progress steps the phase counts for ``plan``: every client link read, then written."""
    return 2 * len(plan.clients)


def measure(run: SmokeRun) -> None:
    """The phase: links no storage link reaches said so, every other link loaded both ways, and its plot."""
    run.results += [unreached_link(link) for link in run.plan.unreached]
    run.links, results = measure_links(run.plan, run.load, run.options.remeasure, run.tick,
                                       run.announce)
    run.results += results
    rows = [{"link": m.link.key, "direction": m.direction, "share": m.share, "ceiling": m.link.tcp_ceiling,
             "measured_text": rate_text(m.bits)} for m in run.links]
    outliers = {r.check.split("/", 1)[1].replace("/", ":", 1) for r in run.results
                if r.check.startswith("outlier/") and r.status is Status.FAIL}
    if rows:
        path = plots.plot_links(run.out_dir / "links.png", run.plan.site, rows, run.plan.saturation_floor, outliers)
        run.attachments.append(str(path))


# The phase's pure verdicts: plain data in (racfg.smoke.measured, the plan), results out.
VERDICTS = (link_result, outlier_results, unreached_link)
