#!/usr/bin/env python3
"""How the HTML report scales: a synthetic 1,000-host leaf-spine site's validate-and-smoke report.

The site is bench/check_scale.py's routed leaf-spine (32 hosts per leaf, 16 spines), loaded as
racfg loads any inventory, its fabric outline from the intended site. Each host gets what a
validate and a smoke of it report (about 96 results: os, network, access, gpu or storage checks, a
skip per host where the lab has no GPUs, the link's two directions with their share of line rate),
with planted trouble: three hosts at MTU 1500 (one problem, its fix), one slow link, one host that
could not be reached. Prints the HTML's size, drawn on demand and (for comparison) with every row in
the DOM as before issue 54, and how long headless Chromium takes to load each and run its script
(``--dump-dom``), against an empty page's time (the browser's own start).

Target (issue 54): a 1,000-host report stays a few MB and opens in a browser in seconds.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from check_scale import site_leafspine

from racfg.intent import site_intent
from racfg.intent.fabric_outline import fabric_outline
from racfg.inventory import load_cluster
from racfg.results import (
    Report,
    Result,
    Status,
    expected_actual,
    row_store,
)
from racfg.results.html import render_html
from racfg.results.problems import Problem

_OS = ["kernel", "time-sync", "hugepages", "ssh-config", "limits", "cpu-governor", "irqbalance", "numa"] + [
    f"sysctl[{k}]" for k in ("net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
                             "net.core.netdev_max_backlog", "net.ipv4.tcp_timestamps", "vm.swappiness",
                             "net.ipv4.tcp_sack", "net.ipv4.tcp_mtu_probing", "kernel.numa_balancing")]
_NET = ["mtu[data0]", "address[data0]", "route[default]", "carrier[data0]", "speed[data0]", "lldp[data0]",
        "ring[data0]", "pfc[data0]", "ecn[data0]", "gateway[data0]", "dns", "ntp-peer"]
_PKGS = [f"package[{p}]" for p in ("ofed", "iperf3", "fio", "chrony", "lldpd", "nfs-common", "numactl",
                                   "ethtool", "rdma-core", "perftest", "infiniband-diags", "mstflint")]


def synthetic_report(hosts: int, directory: Path) -> Report:
    """A validate-and-smoke report of a ``hosts``-host leaf-spine site, with planted trouble."""
    path = directory / f"leafspine{hosts}.yaml"
    path.write_text(yaml.safe_dump(site_leafspine(hosts), sort_keys=False))
    cluster = load_cluster(path)
    results: list[Result] = []
    for number, host in enumerate(h.name for h in cluster.hosts):
        dgx = number % 4 != 3
        results += _host_results(host, dgx, number)
    mtu_hosts = [cluster.hosts[i].name for i in (5, 6, 7)]
    fix = "racfg deploy site.yaml --limit " + ",".join(mtu_hosts) + " --tags fabric"
    problem = Problem(f"host_mtu:{mtu_hosts[0]}", "host_mtu", mtu_hosts[0],
                      f"{', '.join(mtu_hosts)} data0 at MTU 1500, the fabric at 9000 (changed by hand)", fix,
                      f"{mtu_hosts[0]}/network/mtu[data0]", tuple(f"{h}/network/mtu[data0]" for h in mtu_hosts[1:]))
    results = [_planted(r, mtu_hosts, problem) for r in results]
    return Report("smoke", cluster.name, results, started="2026-11-28T12:00:00+0000", elapsed=812.4,
                  meta={"inventory": str(path), "fabric": fabric_outline(site_intent(cluster))}, problems=[problem])


def _host_results(host: str, dgx: bool, number: int) -> list[Result]:
    out = [Result(host, f"{host}/os/{c}", "os", Status.PASS) for c in _OS]
    out += [Result(host, f"{host}/network/{c}", "network", Status.PASS) for c in _NET]
    out += [Result(host, f"{host}/packages/{c}", "packages", Status.PASS) for c in _PKGS]
    out += [Result(host, f"{host}/access/{c}", "access", Status.PASS) for c in ("ssh", "sudo", "python", "keys")]
    if dgx:
        out += [Result(host, f"{host}/gpu/{c}", "gpu", Status.SKIP, "no GPUs in the lab: nvidia-smi cannot run")
                for c in ("driver", "persistence", "clocks", "ecc", "nvlink", "fabricmanager")]
        out += [Result(host, f"{host}/nccl/{c}", "nccl", Status.SKIP, "no GPUs: NCCL tests cannot run")
                for c in ("allreduce", "alltoall")]
    else:
        out += [Result(host, f"{host}/storage/{c}", "storage", Status.PASS) for c in
                ("weka-agent", "drives", "mount", "cores", "network", "nvme[0]", "nvme[1]", "nvme[2]")]
    link = f"{host}:data0"
    for direction in ("to-storage", "from-storage"):
        share = 0.962 + (number * 7 % 31) / 1000
        out.append(Result(link, f"link/{direction}/{link}", "link saturation", Status.PASS,
                          f"{direction}: {share * 96.2:.1f} Gbit/s", expected=">= 90% of 100 Gbit/s",
                          actual=f"{share * 100:.1f}%", data={"share_of_line": share}))
    out += [Result(link, f"rdma/{t}/{link}", "rdma", Status.PASS, f"{t}: 97.{number % 10} Gbit/s")
            for t in ("ib_write_bw", "ib_read_bw")]
    out += [Result(link, f"counters/{c}/{link}", "counters", Status.PASS) for c in ("errors", "discards", "pause")]
    while len(out) < 96:
        out.append(Result(host, f"{host}/config/file[{len(out)}]", "config", Status.PASS))
    return out


def _planted(result: Result, mtu_hosts: list[str], problem: Problem) -> Result:
    if result.check in problem.checks:
        return Result(result.target, result.check, result.category, Status.FAIL, expected_actual(9000, 1500),
                      "9000", "1500", fix=problem.fix, cause=problem.id)
    if result.check == "link/to-storage/node00041:data0":
        return Result(result.target, result.check, result.category, Status.FAIL,
                      "Expected: >= 90% of 100 Gbit/s Actual: 71.3%; to-storage: 68.6 Gbit/s",
                      result.expected, "71.3%", fix="check the cable, port speed and NIC of this link (racfg validate)",
                      data={"share_of_line": 0.713})
    if result.target == "node00300" and result.category == "access":
        return Result(result.target, result.check, result.category, Status.ERROR,
                      "ssh 198.18.1.54: connection refused, so this could not be checked")
    return result


def load_seconds(browser: str, page: Path, repeat: int) -> float:
    """Median wall time of ``browser --headless --dump-dom`` on ``page`` (the load and its script run)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=300)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the pages here (to look at them)")
    args = parser.parse_args()
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        report = synthetic_report(args.hosts, Path(tmp))
        start = time.perf_counter()
        lazy = render_html(report)
        render_s = time.perf_counter() - start
        bound, row_store.INLINE_ROWS = row_store.INLINE_ROWS, 10**9
        full = render_html(report)  # every row in the DOM, as the report was before issue 54
        row_store.INLINE_ROWS = bound
        (out / "report.html").write_text(lazy)
        (out / "report-all-rows.html").write_text(full)
        (out / "empty.html").write_text("<!DOCTYPE html><title>x</title>")
        print(f"{args.hosts} hosts, {len(report.results)} results; rendered in {render_s:.2f} s")
        print(f"report.html (rows on demand): {len(lazy.encode()) / 1e6:.2f} MB")
        print(f"every row in the DOM (before): {len(full.encode()) / 1e6:.2f} MB")
        if browser is None:
            print("no chromium: load times not measured")
            return
        empty = load_seconds(browser, out / "empty.html", args.repeat)
        print(f"{browser} --headless --dump-dom, median of {args.repeat}: empty page {empty:.2f} s, "
              f"report.html {load_seconds(browser, out / 'report.html', args.repeat):.2f} s, "
              f"every row in the DOM {load_seconds(browser, out / 'report-all-rows.html', args.repeat):.2f} s")
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                              (out / "report.html").as_uri()], capture_output=True, text=True, check=True).stdout
        lazy_text = (out / "report.html").read_text()  # its script's own text holds the markup it writes
        marks = [f'<{tag} class="{cls}' for tag, cls in (("tbody", "target"), ("tr", "r fail"), ("tr", "r error"))]
        drawn = [dom.count(mark) - lazy_text.count(mark) for mark in marks]
        print(f"after load, its script drew {drawn[0]} targets' rows ({drawn[1]} failed, {drawn[2]} errors)")
    print("target: a 1,000-host report a few MB, open in a browser in seconds (issue 54)")


if __name__ == "__main__":
    main()
