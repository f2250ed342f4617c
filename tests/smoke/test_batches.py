"""Which client links smoke's links phase loads at once, and from which storage links (racfg.smoke.batches),
on tables of small plans: the lab's single-switch smoke site and a small leaf-spine site."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from lslab import write_small_leafspine

from racfg.connection import ConnectionOverrides
from racfg.inventory import load_cluster
from racfg.smoke.batches import batch_limit, link_batches
from racfg.smoke.smoke_plan import SmokePlan, build_plan
from tests.smoke.test_verdicts import INVENTORY, LAB

SITE = "lsbatch"


@pytest.fixture(scope="module")
def single() -> SmokePlan:
    """3 client links at 250 Mbit/s, 2 storage links at 500, one switch."""
    return build_plan(load_cluster(INVENTORY), LAB)


@pytest.fixture(scope="module")
def leafspine(tmp_path_factory: pytest.TempPathFactory) -> SmokePlan:
    """2 leaves x 2 spines, a GPU server and a storage node per leaf, every link and uplink 1000 Mbit/s."""
    path = write_small_leafspine(tmp_path_factory.mktemp(SITE), SITE, "198.18.99.0/24", "198.19.98.0/23")
    rates = {(f"{SITE}-{h}", "data0"): 1000 for h in ("dgx1", "dgx2", "st1", "st2")}
    return build_plan(load_cluster(Path(path)), ConnectionOverrides(provider="lab", link_rates_mbit=rates))


def shown(batches) -> list[list[tuple[str, list[str]]]]:
    """Each batch as (client host, its storage hosts)."""
    return [[(a.client.host, [s.host for s in a.sources]) for a in batch] for batch in batches]


def test_links_share_no_storage_link_and_each_is_filled(single: SmokePlan) -> None:
    """One 500 Mbit/s storage link fills a 250 Mbit/s client link: two links go together, each with a
    storage link of its own; the third finds none left and is loaded alone, from both."""
    assert shown(link_batches(single)) == [[("smdgx01", ["smstor01"]), ("smdgx02", ["smstor02"])],
                                           [("smdgx03", ["smstor01", "smstor02"])]]


@pytest.mark.parametrize(("change", "expected"), [
    # storage links at the clients' rate: still one each
    ({"storage_mbit": 250}, [[("smdgx01", ["smstor01"]), ("smdgx02", ["smstor02"])],
                             [("smdgx03", ["smstor01", "smstor02"])]]),
    # storage links at half the clients' rate: a client needs both, so no two links go together
    ({"storage_mbit": 125}, [[("smdgx01", ["smstor01", "smstor02"])], [("smdgx02", ["smstor01", "smstor02"])],
                             [("smdgx03", ["smstor01", "smstor02"])]]),
    # scaling steps of one client: the site never loads two links at once, nor does this phase
    ({"steps": [1]}, [[("smdgx01", ["smstor01", "smstor02"])], [("smdgx02", ["smstor01", "smstor02"])],
                      [("smdgx03", ["smstor01", "smstor02"])]]),
])
def test_batches_follow_the_storage_rates_and_the_largest_scaling_step(single: SmokePlan, change: dict,
                                                                       expected: list) -> None:
    plan = single
    if "storage_mbit" in change:
        plan = replace(plan, storage=[replace(s, rate_mbit=change["storage_mbit"]) for s in plan.storage])
    if "steps" in change:
        plan = replace(plan, steps=change["steps"])
    assert shown(link_batches(plan)) == expected


def test_every_client_link_is_in_exactly_one_batch(single: SmokePlan, leafspine: SmokePlan) -> None:
    for plan in (single, leafspine):
        keys = [a.client.key for batch in link_batches(plan) for a in batch]
        assert sorted(keys) == sorted(link.key for link in plan.clients)
    assert batch_limit(single) == 3 and batch_limit(replace(single, steps=[1, 2])) == 2


def test_across_the_spines_each_link_is_loaded_from_the_other_leaf_within_the_uplinks(leafspine: SmokePlan) -> None:
    """Each leaf takes in one link's rate and sends out one: half of its two uplinks each way, the most a
    batch may use, so both links go together."""
    assert shown(link_batches(leafspine)) == [[(f"{SITE}-dgx1", [f"{SITE}-st2"]), (f"{SITE}-dgx2", [f"{SITE}-st1"])]]


def test_a_leaf_that_lost_an_uplink_takes_one_link_at_a_time(leafspine: SmokePlan) -> None:
    """leaf1 with one live uplink (1000 Mbit/s each way) may carry 500 in a batch: less than one link, so
    each link is loaded alone, from every storage link across the spines."""
    down = frozenset({(f"{SITE}-leaf1", leafspine.uplinks[0].port)})
    plan = replace(leafspine, uplinks_down=down)
    assert shown(link_batches(plan)) == [[(f"{SITE}-dgx1", [f"{SITE}-st2"])], [(f"{SITE}-dgx2", [f"{SITE}-st1"])]]


def test_a_pod_is_loaded_in_batches_of_at_most_eight_within_each_leafs_uplinks() -> None:
    """The 128-host pod (96 client links, 8 leaves of 12 GPU servers and 4 storage nodes, 16 uplinks each):
    batches of at most MAX_BATCH, no storage link twice in a batch, each from another leaf, and no leaf
    taking in or sending out more than half its uplinks' capacity."""
    from racfg.connection import NO_OVERRIDES
    from racfg.smoke.batches import MAX_BATCH, UPLINK_HEADROOM, crossing, uplink_capacity

    plan = build_plan(load_cluster(Path(__file__).parents[2] / "bench" / "pod128.yaml"), NO_OVERRIDES)
    batches = link_batches(plan)
    assert sorted(a.client.key for b in batches for a in b) == sorted(c.key for c in plan.clients)
    assert len(batches) == 12 and all(len(b) <= MAX_BATCH for b in batches)
    capacity = uplink_capacity(plan)
    for batch in batches:
        sources = [s.key for a in batch for s in a.sources]
        assert len(sources) == len(set(sources))
        assert all(s.switch != a.client.switch for a in batch for s in a.sources)
        used: dict[tuple[str, str], float] = {}
        for a in batch:
            for way, mbit in crossing(plan, a).items():
                used[way] = used.get(way, 0.0) + mbit
        assert all(mbit <= UPLINK_HEADROOM * capacity[way[0]] for way, mbit in used.items())
