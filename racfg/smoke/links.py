"""The links phase: every client link loaded both ways, a link that misses its mark measured again.

Links that share no bottleneck are loaded together (racfg.smoke.batches), each from storage links
of its own. A batched reading that meets the link's mark is its first reading; one that misses is
set aside and the link is loaded alone from every storage link it may use, so that every reading a
failing verdict stands on is the link's own.

A link is held to two marks: its share of line rate (acceptance.link_saturation) and the best link
of its kind (acceptance.smoke.outlier_fraction). One reading can miss either on noise, so the link
that missed, in that direction, is loaded again (racfg.smoke.remeasure) before it is judged; every
other link keeps its readings. Each verdict stands on the link's best reading and lists them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Protocol

from racfg.results import Result, Status
from racfg.smoke.batches import Assignment, link_batches
from racfg.smoke.judge.links import LinkMeasurement, link_result, outlier_bound, outlier_results
from racfg.smoke.judge.readings import Reading, deciding_reading, measure_again, with_readings
from racfg.smoke.measured import LoadResult, StepProbe
from racfg.smoke.plan import Link, SmokePlan
from racfg.smoke.remeasure import Announce, until_met
from racfg.smoke.units import rate_text


class Measure(Protocol):
    """One load of ``clients`` in ``direction`` (``sources``: a batch's storage links per client link)."""

    def __call__(self, clients: list[Link], direction: str, label: str,
                 sources: Mapping[str, Sequence[Link]] | None = None) -> tuple[LoadResult, StepProbe]: ...


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
    """How far a reading is past the link's mark: its share of line rate less acceptance.link_saturation."""
    return m.share - plan.saturation_floor


def best_reading(plan: SmokePlan, readings: list[LinkMeasurement]) -> LinkMeasurement:
    return readings[deciding_reading([floor_margin(plan, m) for m in readings])]


def _screen(measure: Measure, batch: list[Assignment], direction: str, number: int) -> dict[str, LinkMeasurement]:
    """One load of a batch: each link's reading, with its own flows only."""
    clients = [a.client for a in batch]
    load, probe = measure(clients, direction, f"links/{direction}/batch{number}",
                          {a.client.key: a.sources for a in batch})
    return {link.key: LinkMeasurement(link, direction, LoadResult(direction, [
        f for f in load.flows if f.flow.client.key == link.key], load.seconds), probe, batched=True)
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
    return Reading(m.bits / 1e6, "Mbit/s", margin, rate_text(m.bits))


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
