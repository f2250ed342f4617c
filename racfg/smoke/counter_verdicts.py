"""Switch counter verdicts: drops, errors or pause frames on a measured port during the run.

Errors and pause frames are faults (a cable or optic, flow control the RA does not use), and so are
discards on a port that only one link sent into: one sender cannot overrun a port of its own rate.
Egress discards on a port that several links sent into at once (an incast: a client reading from
several storage links) are TCP's congestion signal: every sender's window grows until the port's queue
overflows, on a real switch as in the lab, whatever the buffer. They are reported beside the pass, with
the load that caused them, as long as they stay a small share of what the port sent
(``CONGESTION_SHARE``); more than that is a buffer that does not hold what the switch model should.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from racfg.results import Result, Status, expected_actual
from racfg.smoke.measured import StepProbe
from racfg.smoke.smoke_plan import Link

# Discarded packets per packet sent, at an incast port, that TCP's congestion control explains: a few per
# window halving of a dozen flows. A link that loses more would also miss its rate (judged on its own).
CONGESTION_SHARE = 0.01


@dataclass
class PortTally:
    """What one measured port counted over the run: faults, and egress discards under incast apart."""

    totals: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    incast_discards: int = 0
    incast_bytes: int = 0
    incast_steps: dict[str, int] = field(default_factory=dict)  # load label -> senders, where it discarded
    fault_steps: list[str] = field(default_factory=list)  # load labels where it counted a fault

    def faults(self) -> dict[str, int]:
        """Counters that are faults: every nonzero one but bytes, less the discards an incast explains."""
        out = {k: v for k, v in self.totals.items() if v and not k.endswith("_bytes")}
        left = out.get("tx_discards", 0) - self.incast_discards
        if left:
            out["tx_discards"] = left
        else:
            out.pop("tx_discards", None)
        return out

    def incast_share(self, link: Link) -> float:
        packets = self.incast_bytes / (link.mtu + link.framing) + self.incast_discards
        return self.incast_discards / packets if packets else 1.0


def tally_ports(probes: list[tuple[str, StepProbe]], ports: Mapping[tuple[str, str], Link]
                ) -> dict[tuple[str, str], PortTally]:
    """Each measured port's counters over every load, its discards under an incast told apart."""
    tallies: dict[tuple[str, str], PortTally] = {}
    for label, probe in probes:
        for key, delta in probe.port_growth().items():
            if key not in ports:
                continue
            tally = tallies.setdefault(key, PortTally())
            grown = delta.as_dict()
            for name, value in grown.items():
                tally.totals[name] += value
            senders = probe.fan_in.get(ports[key].key, 0)
            if senders > 1 and delta.tx_discards:
                tally.incast_discards += delta.tx_discards
                tally.incast_bytes += delta.tx_bytes
                tally.incast_steps[label] = senders
            incast = {"tx_discards"} if senders > 1 else set()
            if any(v for k, v in grown.items() if not k.endswith("_bytes") and k not in incast):
                tally.fault_steps.append(label)
    return tallies


def counter_results(probes: list[tuple[str, StepProbe]], problem: str | None, ports: Mapping[tuple[str, str], Link]
                    ) -> list[Result]:
    """Drops, errors or pause frames on any measured port during the run are reported; egress discards under
    an incast, within ``CONGESTION_SHARE``, are congestion and noted beside the pass."""
    if not probes or not any(p.counters_before for _, p in probes):
        reason = problem or "no switch counters were read"
        return [Result("switches", "switch/counters", "switch counters", Status.SKIP,
                       f"switch port counters not read: {reason}")]
    tallies = tally_ports(probes, ports)
    out, congested = [], []
    for (switch, port), tally in sorted(tallies.items()):
        link = ports[(switch, port)]
        faults = tally.faults()
        if faults:
            out.append(_fault(switch, port, link, tally, faults))
        elif tally.incast_discards and tally.incast_share(link) > CONGESTION_SHARE:
            out.append(_overrun(switch, port, link, tally))
        elif tally.incast_discards:
            congested.append(f"{switch}:{port} {_incast_text(tally, link)}")
    if not out:
        note = (f"; egress discards under incast, TCP's congestion signal, not a fault: {'; '.join(congested)}"
                if congested else "")
        out.append(Result("switches", "switch/counters", "switch counters", Status.PASS,
                          f"no drops, errors or pause frames on {len(tallies)} measured ports during the run{note}",
                          data={"ports": {f"{s}:{p}": dict(t.totals) for (s, p), t in sorted(tallies.items())},
                                "congestion_share": CONGESTION_SHARE}))
    if problem:
        out.append(Result("switches", "switch/counters/read", "switch counters", Status.ERROR,
                          f"some switch counters could not be read: {problem}"))
    return out


def _incast_text(tally: PortTally, link: Link) -> str:
    steps = ", ".join(f"{label} ({n} senders)" for label, n in tally.incast_steps.items())
    return f"{tally.incast_discards} ({tally.incast_share(link):.2%} of its packets) during {steps}"


def _fault(switch: str, port: str, link: Link, tally: PortTally, faults: dict[str, int]) -> Result:
    what = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(faults.items()))
    during = ", ".join(tally.fault_steps)
    if "rx_pause" in faults or "tx_pause" in faults:
        fix = "turn flow control off on this port and its host NIC: the RA's fabric runs without pause frames"
    elif "rx_errors" in faults or "tx_errors" in faults:
        fix = "check the cable and optics of this port"
    else:
        fix = ("check this port's speed and shaping against its host NIC's: with one sender at a time, "
               "a port of the link's rate does not discard")
    return Result(f"{switch}:{port}", f"switch/{switch}/{port}/errors", "switch counters", Status.FAIL,
                  f"{expected_actual('no drops, errors or pause frames', what)} during {during} "
                  f"(port of {link.key})", "0", what, fix=fix, data={"counters": dict(tally.totals)})


def _overrun(switch: str, port: str, link: Link, tally: PortTally) -> Result:
    what = f"tx discards {_incast_text(tally, link)}"
    return Result(f"{switch}:{port}", f"switch/{switch}/{port}/errors", "switch counters", Status.FAIL,
                  f"{expected_actual(f'egress discards under incast at most {CONGESTION_SHARE:.0%} of packets', what)} "
                  f"(port of {link.key}): more than TCP's congestion signal",
                  f"<= {CONGESTION_SHARE:.0%}", what,
                  fix="check the switch's buffer settings for this port (its shared-buffer pool and egress queue "
                      "limit): it holds less of an incast than the switch model's buffer",
                  data={"counters": dict(tally.totals)})
