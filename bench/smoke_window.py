#!/usr/bin/env python3
"""One smoke scaling load on a running lab: the processes' sum against what the clients' NICs took in.

Loads the first N dgx hosts of INVENTORY from the storage links as smoke's scaling step does
(racfg.smoke.tcp.run_load) and prints the sum of the iperf3 figures, the receiving NICs' window
(racfg.smoke.window), what the step's links carry, and how far apart the processes began (iperf3's
own start time, whole seconds). A sum far above what the links carry with a window below it is a
machine too busy to start the processes together, and a lab shaped faster than its CPUs carry.

    RACFG_LEAFSPINE_PASSWORD=... .venv/bin/python bench/smoke_window.py inventory/ra-leafspine.yaml 16 8

Needs the lab of INVENTORY up and deployed (racfg demo); changes nothing on it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from racfg.cli.providers import overrides_for  # noqa: E402
from racfg.hostfacts.iperf3 import Iperf3Result  # noqa: E402
from racfg.inventory import load_cluster  # noqa: E402
from racfg.smoke import tcp  # noqa: E402
from racfg.smoke.phases.read_scaling import step_capacity  # noqa: E402
from racfg.smoke.remote import Fleet  # noqa: E402
from racfg.smoke.smoke_plan import build_plan  # noqa: E402


class Recorder:
    """Stands in for iperf3's parser in racfg.smoke.tcp, keeping each report's text (its start time)."""

    def __init__(self) -> None:
        self.parse = tcp.parse_iperf3
        self.texts: list[str] = []

    def __call__(self, text: str) -> Iperf3Result:
        self.texts.append(text)
        return self.parse(text)

    def starts(self, since: int) -> dict[int, int]:
        found = Counter(json.loads(text[text.index("{"):])["start"]["timestamp"]["timesecs"] - since
                        for text in self.texts if "{" in text)
        return dict(sorted(found.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inventory")
    parser.add_argument("clients", nargs="+", type=int, help="step sizes to load, one after another")
    args = parser.parse_args()
    cluster = load_cluster(Path(args.inventory))
    overrides = overrides_for(cluster)
    plan = build_plan(cluster, overrides)
    hosts = [h for h in cluster.hosts if h.name in {*plan.client_hosts, *plan.storage_hosts}]
    print(f"{'clients':>7} {'processes':>9} {'capacity':>9} {'sum':>9} {'NICs':>9}  Gbit/s; process starts (s: count)")
    recorder = Recorder()
    tcp.parse_iperf3 = recorder  # type: ignore[assignment]
    try:
        with Fleet(hosts, overrides) as fleet:
            for n in args.clients:
                names = plan.client_hosts[:n]
                flows = tcp.plan_flows(plan, [link for host in names for link in plan.links_of(host)])
                recorder.texts.clear()
                started = int(time.time())
                load = tcp.run_load(fleet, flows, "read", plan.duration_s, plan.omit_s)
                window = sum(load.received.values()) / 1e9 if load.received else float("nan")
                print(f"{n:7} {len(flows):9} {step_capacity(plan, names) / 1e9:9.2f} {load.total / 1e9:9.2f} "
                      f"{window:9.2f}  {recorder.starts(started)}")
    finally:
        tcp.parse_iperf3 = recorder.parse  # type: ignore[assignment]
    return 0


if __name__ == "__main__":
    sys.exit(main())
