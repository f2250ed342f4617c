"""Smoke's switch counter verdicts on tables (no lab): a fault named with its fix and the load it grew in,
egress discards under an incast told from a fault by how many links sent into the port, and judged by
their share of what the port sent."""

from __future__ import annotations

import pytest

from racfg.results import Status
from racfg.smoke.counter_verdicts import CONGESTION_SHARE, counter_results
from racfg.smoke.measured import Flow, StepProbe
from racfg.smoke.smoke_plan import SHAPER_FRAMING, Link
from racfg.smoke.tcp import fan_in
from racfg.switches.parsers.port_counters import PortCounters

CLIENT = Link("dgx08", "dgx", "enp5s0", "10.1.2.8/24", "leaf2", "1/2", 1000.0, "lab shaper", 9000, SHAPER_FRAMING)
STORAGE = [Link(f"weka{i:02}", "storage", "enp5s0", f"10.1.3.{i}/24", "leaf3", f"1/{i}", 1000.0, "lab shaper",
                9000, SHAPER_FRAMING) for i in range(1, 13)]
PORTS = {(CLIENT.switch, CLIENT.port): CLIENT, **{(s.switch, s.port): s for s in STORAGE}}
PACKET = 9000 + SHAPER_FRAMING
SENT = 300_000 * PACKET  # what the client port sent in the load: 300,000 jumbo frames


def probe(grown: PortCounters, senders: int) -> StepProbe:
    key = (CLIENT.switch, CLIENT.port)
    return StepProbe(counters_before={key: PortCounters()}, counters_after={key: grown},
                     fan_in={CLIENT.key: senders})


@pytest.mark.parametrize(("grown", "senders", "status", "words"), [
    # 0.08% of packets under a 12-to-1 read (the ra-leafspine demo's scaling step): congestion, noted
    (PortCounters(tx_bytes=SENT, tx_discards=237), 12, Status.PASS, "237 (0.08% of its packets) during scaling/16"),
    # one sender cannot overrun a port of its own rate: the port's speed or shaping
    (PortCounters(tx_bytes=SENT, tx_discards=237), 1, Status.FAIL, "speed and shaping"),
    # more than TCP's signal: a buffer smaller than the model's
    (PortCounters(tx_bytes=SENT, tx_discards=int(300_000 * 2 * CONGESTION_SHARE)), 12, Status.FAIL, "buffer settings"),
    (PortCounters(tx_bytes=SENT, rx_errors=3), 12, Status.FAIL, "cable and optics"),
    (PortCounters(tx_bytes=SENT, rx_pause=40), 12, Status.FAIL, "flow control off"),
    (PortCounters(tx_bytes=SENT, rx_discards=5), 12, Status.FAIL, "speed and shaping"),
    (PortCounters(tx_bytes=SENT), 12, Status.PASS, "no drops, errors or pause frames on 1 measured ports"),
])
def test_counter_verdicts(grown: PortCounters, senders: int, status: Status, words: str) -> None:
    [result] = counter_results([("scaling/16", probe(grown, senders))], None, PORTS)
    assert result.status is status, result.message
    assert words in f"{result.message} {result.fix}", (result.message, result.fix)
    if status is Status.FAIL:
        assert result.target == "leaf2:1/2" and "dgx08:enp5s0" in result.message


def test_a_fault_names_the_loads_it_grew_in_and_incast_discards_are_not_counted_as_one() -> None:
    quiet = probe(PortCounters(tx_bytes=SENT), 1)
    incast = probe(PortCounters(tx_bytes=SENT, tx_discards=100), 12)
    faulty = probe(PortCounters(tx_bytes=SENT, rx_errors=7), 1)
    [result] = counter_results([("links/read", quiet), ("scaling/16", incast), ("scaling/2", faulty)], None, PORTS)
    assert result.status is Status.FAIL
    assert result.actual == "rx errors 7" and "during scaling/2 " in result.message, result.message
    assert result.data["counters"]["tx_discards"] == 100  # kept in the data, not in the verdict


def test_incast_discards_add_up_over_loads_before_they_are_judged() -> None:
    """Each load below the share, their sum above it: judged on the sum (the port's whole run)."""
    each = int(300_000 * CONGESTION_SHARE * 0.8)
    probes = [(f"scaling/{n}", probe(PortCounters(tx_bytes=SENT // 2, tx_discards=each), 12)) for n in (8, 16)]
    [result] = counter_results(probes, None, PORTS)
    assert result.status is Status.FAIL and "scaling/8 (12 senders), scaling/16 (12 senders)" in result.message


def test_unread_counters_are_a_skip_with_the_reason() -> None:
    [result] = counter_results([("links", StepProbe())], "switch leaf2: login refused", PORTS)
    assert result.status is Status.SKIP and "login refused" in result.message


def test_fan_in_counts_sending_links_by_direction() -> None:
    flows = [Flow(CLIENT, server, 5301 + i) for i, server in enumerate([*STORAGE[:3], STORAGE[0]])]
    assert fan_in(flows, "read") == {CLIENT.key: 3}  # storage sends: three links into the client's
    assert fan_in(flows, "write") == {s.key: 1 for s in STORAGE[:3]}  # the client alone into each
