"""The rdma phase (``rdma``): RDMA bandwidth with perftest (``ib_write_bw`` / ``ib_read_bw
--report_gbits``) on every client link where hosts have RDMA.

Plan: both tools on each client link, against a storage link on its subnet with an RDMA device.
Commands: a link's RDMA device is the one under ``/sys/class/net/NIC/device/infiniband``; a host
without one (the lab, a plain Ethernet NIC) is skipped with that reason, never passed. A figure
below the saturation floor is measured again (racfg.smoke.remeasure) and judged on its best reading.

Verdicts (``VERDICTS``, pure): the figure against the link's line rate, or why it was not measured.
"""

from __future__ import annotations

import shlex
from functools import partial

from racfg.hostfacts.parse_error import ParseError
from racfg.hostfacts.perftest import PerftestResult, parse_perftest
from racfg.results import Result, Status
from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.metrics import metric
from racfg.smoke.remeasure import Reading, until_met, with_readings
from racfg.smoke.remote import Fleet
from racfg.smoke.run_state import SmokeRun
from racfg.smoke.smoke_plan import Link, SmokePlan
from racfg.smoke.tcp import stop_unfinished
from racfg.smoke.units import rate_text

PERFTEST_PORT = 18515


def rdma_device(fleet: Fleet, link: Link) -> str | None:
    try:
        devices = shlex.quote(f"/sys/class/net/{link.nic}/device/infiniband")
        out = fleet[link.host].run(f"ls {devices} 2>/dev/null", timeout=10).stdout
    except MeasurementError:
        return None
    names = out.split()
    return names[0] if names else None


def run_perftest(fleet: Fleet, tool: str, client: Link, client_dev: str, server: Link, server_dev: str,
                 duration_s: int) -> PerftestResult:
    """One ``tool`` run: server on the storage link, client on the dgx link, ``duration_s`` seconds."""
    bound = duration_s + 30
    common = ["--report_gbits", "-D", str(duration_s), "-p", str(PERFTEST_PORT), "-F"]
    server_proc = fleet[server.host].start([tool, "-d", server_dev, *common], bound)
    client_proc = None
    try:
        server_proc.started()
        # the server needs a moment to listen; perftest clients retry the connection for a while
        client_proc = fleet[client.host].start([tool, "-d", client_dev, *common, server.ip], bound)
        client_proc.started()
        done = client_proc.wait()
        server_proc.wait()
        try:
            return parse_perftest(done.stdout)
        except ParseError as exc:
            raise MeasurementError(f"{client.host}: {tool} to {server.host} failed: "
                                   f"{(done.stderr.strip() or str(exc)).splitlines()[-1]}") from None
    finally:
        stop_unfinished([p for p in (server_proc, client_proc) if p is not None])


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


def steps(plan: SmokePlan) -> int:
    """The progress steps the phase counts for ``plan``: perftest over every client link, counted as one."""
    return 1


def measure(run: SmokeRun) -> None:
    """The phase: both perftest tools on every client link against a storage link on its subnet."""
    plan = run.plan
    run.tick("rdma: perftest")
    storage_dev = {}
    for link in plan.storage:
        storage_dev[link.key] = rdma_device(run.fleet, link)
    for link in plan.clients:
        dev = rdma_device(run.fleet, link)
        target = next((s for s in plan.targets_for(link) if storage_dev.get(s.key)), None)
        if dev is None or target is None:
            run.results.append(rdma_unmeasured(link, dev is not None))
            continue
        for tool in ("ib_write_bw", "ib_read_bw"):
            run.results.append(_rdma_tool(run, tool, link, dev, target, storage_dev[target.key] or ""))


def _rdma_tool(run: SmokeRun, tool: str, link: Link, dev: str, target: Link, target_dev: str) -> Result:
    """One perftest tool on one link, measured again while below the saturation floor; its best reading decides."""
    floor = run.plan.saturation_floor
    take = partial(run_perftest, run.fleet, tool, link, dev, target, target_dev, run.plan.duration_s)
    readings = until_met([take()], take, lambda r: rdma_share(link, r) - floor, run.options.remeasure,
                         run.announce, f"rdma {tool} {link.key}")
    best = max(readings, key=partial(rdma_share, link))
    return with_readings(rdma_result(tool, link, dev, target.host, best, floor),
                         [Reading(r.average_gbits, "Gb/s", rdma_share(link, r) - floor, f"{r.average_gbits:.2f} Gb/s")
                          for r in readings], run.options.remeasure)


# The phase's pure verdicts: plain data in (racfg.smoke.measured, the plan), results out.
VERDICTS = (rdma_result, rdma_unmeasured)
