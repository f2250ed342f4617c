"""RDMA bandwidth with perftest (``ib_write_bw`` / ``ib_read_bw --report_gbits``) where hosts have RDMA.

A link's RDMA device is the one under ``/sys/class/net/NIC/device/infiniband``; a host without
one (the lab, a plain Ethernet NIC) is skipped with that reason, never passed.
"""

from __future__ import annotations

import shlex

from racfg.hostfacts.errors import ParseError
from racfg.hostfacts.perftest import PerftestResult, parse_perftest
from racfg.smoke.errors import MeasurementError
from racfg.smoke.plan import Link
from racfg.smoke.remote import Fleet
from racfg.smoke.tcp import stop_unfinished

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
