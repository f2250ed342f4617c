"""Benchmark: one switch login through netmiko (SSH, session preparation, enable), per platform:
Onyx beside EOS and MLNX-OS InfiniBand. Target: an Onyx login < 1.5 s.

    .venv/bin/python bench/switch_login.py [--logins 10] [--shipped-logins 3]
    .venv/bin/python bench/switch_login.py --lab      # as root: the switches of two generated labs

Each row is racfg's login (SwitchSession.open, as every switch read does) split into its phases:
the SSH connection (TCP, key exchange, password, shell), netmiko's session preparation (first
prompt, base prompt, paging off) and enable. Beside it, the same login through netmiko's platform
driver as shipped (same options, netmiko's own session start), which shows what racfg's MLNX-OS
session start saves: netmiko's generic start sleeps and then waits for a quiet channel.

Default: starts one switch CLI per platform on 127.0.0.1 (free ports, temporary state) and stops them
after. --lab: brings up two small labs of its own (site swlogin: an Onyx SN2700 and an EOS 7368X,
198.18.43.0/24; site swloginib: an SB7800, 198.18.44.0/24; one host each), logs in to each switch on
its management address inside the lab, and takes the labs down after (a lab already up is used and
left up).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from switch_facts import lab_targets, start, wait  # noqa: E402

from racfg.switches import SwitchDriver, SwitchTarget, get_driver  # noqa: E402
from racfg.switches.session import SwitchSession  # noqa: E402

TARGET_SECONDS = 1.5
PLATFORMS = ("onyx", "eos", "mlnxos-ib")
LAB_ETHERNET = """site: {name: swlogin}
fabric: {type: ethernet, speed: 100G, data_subnets: [198.19.43.0/24], mgmt_subnet: 198.18.43.0/24}
switches:
  - {name: lgonyx, platform: onyx, model: SN2700, mgmt: 198.18.43.2, credentials: {lab: true}}
  - {name: lgeos, platform: eos, model: 7368X, mgmt: 198.18.43.3, credentials: {lab: true}}
hosts:
  - name: lghost01
    role: dgx
    mgmt: 198.18.43.11
    nics:
      - {name: data0, address: 198.19.43.11/24, switch: lgonyx, port: 1/1}
      - {name: data1, address: 198.19.43.12/24, switch: lgeos, port: Ethernet1/1}
"""
LAB_IB = """site: {name: swloginib}
fabric: {type: infiniband, speed: EDR, data_subnets: [198.19.44.0/24], mgmt_subnet: 198.18.44.0/24}
switches:
  - {name: lgib, platform: mlnxos-ib, model: SB7800, mgmt: 198.18.44.2, credentials: {lab: true}}
hosts:
  - name: lghost01
    role: dgx
    mgmt: 198.18.44.11
    nics:
      - {name: ib0, address: 198.19.44.11/24, switch: lgib, port: 1/1}
"""


@contextmanager
def phase_clock(into: dict[str, float]) -> Iterator[None]:
    """Time netmiko's SSH connection and its session preparation (bench-only instrumentation)."""
    from netmiko.base_connection import BaseConnection

    def timed(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def run(self: BaseConnection, *args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return method(self, *args, **kwargs)
            finally:
                into[name] = time.perf_counter() - t0
        return run

    originals = {name: getattr(BaseConnection, name) for name in ("establish_connection", "_try_session_preparation")}
    for name, method in originals.items():
        setattr(BaseConnection, name, timed(name, method))
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(BaseConnection, name, method)


def as_shipped(platform: str) -> SwitchDriver:
    """racfg's driver of ``platform`` logging in through netmiko's platform driver unchanged."""
    class Shipped(type(get_driver(platform))):  # type: ignore[misc]
        def open_connection(self, **params: Any) -> Any:
            return SwitchDriver.open_connection(self, **params)
    return Shipped()


def login(target: SwitchTarget, driver: SwitchDriver | None = None) -> dict[str, float]:
    """One login (connection, preparation, enable), closed after; its phases in seconds."""
    phases: dict[str, float] = {}
    session = SwitchSession(target, driver)
    with phase_clock(phases):
        t0 = time.perf_counter()
        session.open()
        phases["login"] = time.perf_counter() - t0
    session.close()
    phases["enable"] = phases["login"] - phases["establish_connection"] - phases["_try_session_preparation"]
    return phases


def measure(target: SwitchTarget, logins: int, shipped_logins: int) -> dict[str, Any]:
    ours = [login(target) for _ in range(logins)]
    shipped = [login(target, as_shipped(target.platform))["login"] for _ in range(shipped_logins)]

    def med(key: str) -> float:
        return statistics.median(p[key] for p in ours)
    times = [p["login"] for p in ours]
    return {"name": target.name, "platform": target.platform, "login": med("login"), "min": min(times),
            "max": max(times), "ssh": med("establish_connection"), "prep": med("_try_session_preparation"),
            "enable": med("enable"), "shipped": statistics.median(shipped) if shipped else None}


def report(rows: list[dict[str, Any]], where: str, logins: int) -> int:
    print(f"switch logins through netmiko, {where}: median of {logins} (min-max); phases are medians")
    print(f"{'switch':10s} {'platform':10s} {'login':>7s} {'min-max':>13s} {'ssh':>6s} {'prep':>6s} {'enable':>7s}"
          f" {'netmiko driver as shipped':>26s}")
    for r in rows:
        shipped = f"{r['shipped']:.3f} s" if r["shipped"] is not None else "-"
        print(f"{r['name']:10s} {r['platform']:10s} {r['login']:6.3f}s {r['min']:5.3f}-{r['max']:5.3f} s"
              f" {r['ssh']:5.3f}s {r['prep']:5.3f}s {r['enable']:6.3f}s {shipped:>26s}")
    onyx = [r["login"] for r in rows if r["platform"] == "onyx"]
    others = ", ".join(f"{r['platform']} {r['login']:.3f} s" for r in rows if r["platform"] != "onyx")
    verdict = "PASS" if onyx and max(onyx) < TARGET_SECONDS else "FAIL"
    print(f"{verdict}: Onyx login {max(onyx, default=float('nan')):.3f} s (target < {TARGET_SECONDS:g} s); {others}")
    return 0 if verdict == "PASS" else 1


def run_local(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="racfg-bench-") as tmp_text:
        procs, targets = [], []
        try:
            for i, platform in enumerate(PLATFORMS):
                sub = Path(tmp_text) / platform
                sub.mkdir()
                proc, target = start(sub, i, platform, 32)
                procs.append(proc)
                targets.append(target)
            for target in targets:
                wait(target)
            rows = [measure(t, args.logins, args.shipped_logins) for t in targets]
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=10)
    return report(rows, "switch CLIs on 127.0.0.1", args.logins)


def run_lab(args: argparse.Namespace) -> int:
    from racfg.inventory import load_cluster
    from racfg_lab import api, lifecycle

    rows = []
    with tempfile.TemporaryDirectory(prefix="racfg-bench-") as tmp_text:
        for name, text in (("swlogin.yaml", LAB_ETHERNET), ("swloginib.yaml", LAB_IB)):
            inventory = Path(tmp_text) / name
            inventory.write_text(text)
            was_up = api.is_lab_up(load_cluster(inventory).name)
            try:
                lifecycle.up(inventory)
                targets, _ = lab_targets(inventory)
                rows += [measure(t, args.logins, args.shipped_logins) for t in targets]
            finally:
                if not was_up:
                    lifecycle.down(inventory)
    rows.sort(key=lambda r: PLATFORMS.index(r["platform"]))
    return report(rows, "lab switches on their management addresses", args.logins)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=10, help="racfg logins per switch (default 10)")
    parser.add_argument("--shipped-logins", type=int, default=3,
                        help="logins per switch through netmiko's driver as shipped, for reference "
                             "(default 3; 0: none)")
    parser.add_argument("--lab", action="store_true", help="log in to the switches of two generated labs (root)")
    args = parser.parse_args()
    return run_lab(args) if args.lab else run_local(args)


if __name__ == "__main__":
    sys.exit(main())
