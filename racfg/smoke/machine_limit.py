"""When the measuring machines were the limit of a load: a reading that says nothing about the fabric.

smoke measures the fabric with processes on hosts, driven from a controller. A reading that falls
short while those machines were at their own limit is short because of them: an iperf3 process at a
whole core cannot send faster (before 3.16 it is single-threaded), a host whose CPUs were all busy
ran its processes late, and a controller whose CPUs were all busy released them late (in the lab
the hosts and the controller share one machine's CPUs, so all three read alike there). Such a
reading is measured again like any short one; if it still falls short with a machine at its limit,
its verdict is an error that names the machine, not a fail that blames a link, a storage node or a
leaf. A reading that meets its mark passes whatever the CPUs did: the fabric delivered.

Signals, each cheap and already read: iperf3's own JSON (``cpu_utilization_percent``: host_total
for the client, remote_total for its server), each host's /proc/stat around the load (racfg.smoke.
probes), and the controller's own /proc/stat around it. The load average was left out: it lags a
minute behind and counts processes waiting on I/O.
"""

from __future__ import annotations

from dataclasses import replace

from racfg.results import Result, Status
from racfg.smoke.measured import LoadResult, StepProbe
from racfg.smoke.units import pct

PROCESS_AT_LIMIT = 90.0  # an iperf3 process at this share of one core (percent) cannot go faster
HOST_AT_LIMIT = 0.90  # a host (or the controller) whose CPUs were busy this share of the load
LIMIT_FIX = ("measure again with the machines to themselves: no other load on the hosts or the controller, "
             "fewer processes per link (acceptance.smoke.processes_per_link); in the lab, a slower shaping "
             "(lab rate scale) or fewer hosts")


def machine_limits(load: LoadResult, probe: StepProbe | None) -> list[str]:
    """What says the measuring machines were the limit of ``load`` ([]: nothing does)."""
    hosts = {fr.flow.client.host for fr in load.flows} | {fr.flow.server.host for fr in load.flows}
    out = [f"iperf3 on {host} at {cpu:.0f}% of a core" for host, cpu in sorted(load.iperf3_cpu().items())
           if cpu >= PROCESS_AT_LIMIT]
    return out + (cpu_limits(probe, hosts) if probe is not None else [])


def cpu_limits(probe: StepProbe, hosts: set[str]) -> list[str]:
    """The CPUs of ``hosts`` or of the controller busy at their limit during the probed load ([]: none was).
    Also what a fio load reads: fio's own figures say nothing of its CPU, the machines' /proc/stat does."""
    out = []
    busy = {h: v for h, v in probe.cpu_busy().items() if h in hosts and v >= HOST_AT_LIMIT}
    if busy:
        named = ", ".join(f"{h} {pct(v)}" for h, v in sorted(busy.items())[:4])
        more = f" and {len(busy) - 4} more" if len(busy) > 4 else ""
        out.append(f"CPUs busy on {named}{more}")
    controller = probe.controller_busy()
    if controller is not None and controller >= HOST_AT_LIMIT:
        out.append(f"the controller's CPUs {pct(controller)} busy")
    return out


def limited_text(limits: list[str]) -> str:
    return f"the measuring machine was the limit ({'; '.join(limits)}): not judged against the fabric"


def machine_limited(result: Result, limits: list[str]) -> Result:
    """``result`` (a short reading's fail) as the error it is when the measuring machines were the limit:
    the same check, target and figures, with what the machines did said first and the fabric not blamed."""
    return replace(result, status=Status.ERROR, message=f"{limited_text(limits)}; {result.message}", fix=LIMIT_FIX,
                   data={**result.data, "machine_limit": limits})
