"""Switch counter verdicts: drops, errors or pause frames on a measured port during the run."""

from __future__ import annotations

from racfg.results import Result, Status, expected_actual
from racfg.smoke.probes import StepProbe


def counter_results(probes: list[tuple[str, StepProbe]], problem: str | None, ports: dict[tuple[str, str], str]
                    ) -> list[Result]:
    """Drops, errors or pause frames on any measured switch port during the run are reported."""
    if not probes or not any(p.counters_before for _, p in probes):
        reason = problem or "no switch counters were read"
        return [Result("switches", "switch/counters", "switch counters", Status.SKIP,
                       f"switch port counters not read: {reason}")]
    grown: dict[tuple[str, str], dict[str, int]] = {}
    for _, probe in probes:
        for key, delta in probe.port_growth().items():
            if key not in ports:
                continue
            totals = grown.setdefault(key, {})
            for name, value in delta.as_dict().items():
                totals[name] = totals.get(name, 0) + value
    out = []
    for (switch, port), totals in sorted(grown.items()):
        bad = {k: v for k, v in totals.items() if v and not k.endswith("_bytes")}
        if bad:
            what = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(bad.items()))
            out.append(Result(f"{switch}:{port}", f"switch/{switch}/{port}/errors", "switch counters", Status.FAIL,
                              f"{expected_actual('no drops, errors or pause frames', what)} during the run "
                              f"(port of {ports[(switch, port)]})", "0", what,
                              fix="check the cable and optics of this port; drops under load also mean a "
                                  "buffer or a shaper was overrun",
                              data={"counters": totals}))
    if not out:
        out.append(Result("switches", "switch/counters", "switch counters", Status.PASS,
                          f"no drops, errors or pause frames on {len(grown)} measured ports during the run",
                          data={"ports": {f"{s}:{p}": t for (s, p), t in sorted(grown.items())}}))
    if problem:
        out.append(Result("switches", "switch/counters/read", "switch counters", Status.ERROR,
                          f"some switch counters could not be read: {problem}"))
    return out
