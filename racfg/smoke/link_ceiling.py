"""What a link can carry, and a reading above it: a measurement that overshot, never a figure.

TCP fills a link to its ceiling (payload over frame at its MTU: racfg.smoke.smoke_plan.tcp_ceiling)
and no further: a port sends at its line rate, a lab shaper at its rate. A reading above that is not
a fast link but a measurement error: iperf3 processes that did not run over quite the same seconds
(each figure is over its own, and one that ran while the others had not started got more than its
share), or NIC counters read a little apart. So such a reading is measured again, never passes and
is never kept as a baseline figure; an item whose every reading overshot is an error that says so.

``OVER_CEILING`` is how far above the ceiling a reading may run and still be one: the timing of the
measurement (the shaper's bucket, 5 ms of its rate, and the counters' reads are timed in
milliseconds against seconds of load). In the smokelab the receiving NICs' window read every link
at 99.4-99.7% of its ceiling, and the processes' own figures added up to as much as 2.1% over it
(the sum smoke falls back to where the counters cannot be read: measured again when over). More
than that, the figure says more about when the processes ran than about the link.
"""

from __future__ import annotations

from racfg.smoke.smoke_plan import Link
from racfg.smoke.units import pct, rate_text

OVER_CEILING = 0.02


def carried_bits(link: Link) -> float:
    """What ``link`` carries at most: TCP payload bits/s at its line rate and MTU."""
    return link.rate_mbit * 1e6 * link.tcp_ceiling


def above(bits: float, capacity: float) -> bool:
    """Whether ``bits`` is more than ``capacity`` (bits/s a link or links carry) can be, timing allowed."""
    return 0 < capacity < float("inf") and bits > capacity * (1 + OVER_CEILING)


def overshoot_text(bits: float, capacity: float, what: str) -> str:
    """``measurement error: 262 Mbit/s is above what a 250 Mbit/s link carries (248 Mbit/s, +5.6%)``."""
    return (f"measurement error: {rate_text(bits)} is above what {what} carries ({rate_text(capacity)} "
            f"at its TCP ceiling, +{pct(bits / capacity - 1)}): the measurement overshot (processes that did "
            "not run over the same seconds), it is no figure of the link")


OVERSHOOT_FIX = ("measure again with the machines to themselves (a quieter controller, fewer processes per link: "
                 "acceptance.smoke.processes_per_link); nothing on the fabric to fix")
