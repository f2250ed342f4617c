"""drift --performance --quick on a lab copy of the smoke lab: ten clean runs, then a link slowed by 6%.

Targets (bench/RESULTS.md): zero drops in ten clean runs; the 6% drop on one link found in every
run; the quick form's time. The lab is tests/smoke/smokelab.yaml as site benchperf (its own
subnets), its data plane set as the smoke tests set it; one full ``racfg smoke --accept`` is the
baseline. Prints one line per run and the figures. ``BENCH_INVENTORY=bench/pod64.yaml`` times the
64-host pod instead (BENCH_CLEAN_RUNS=1 BENCH_SLOWED_RUNS=0: its lab is the pod's own site).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from benchlib import REPO, _renamed, racfg

sys.path[:0] = [str(REPO), str(REPO / "tests")]
from labsupport import running_lab  # noqa: E402  (the tests' lab handle: up, data plane, down)

from racfg_lab import api  # noqa: E402
from tests.smoke.labnet import configure_data_plane  # noqa: E402

CLEAN = int(os.environ.get("BENCH_CLEAN_RUNS", "10"))
SLOWED = int(os.environ.get("BENCH_SLOWED_RUNS", "3"))
OTHER = os.environ.get("BENCH_INVENTORY")  # another lab inventory, used as it is (timing only)


def drift(inventory: Path, env: dict[str, str]) -> tuple[float, dict]:
    seconds, out = racfg("drift", str(inventory), "--performance", "--quick", "--layer", "performance",
                         "--format", "json", env=env, ok=(0, 1))
    return seconds, json.loads(out)


def drops(report: dict) -> list[str]:
    return sorted(r["check"] for r in report["results"] if r["status"] == "fail")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        inventory = Path(tmp) / "benchperf.yaml"
        inventory.write_text(_renamed((REPO / "tests/smoke/smokelab.yaml").read_text(), "smokelab", "benchperf",
                                      "56", "91"))
        if OTHER:
            inventory = REPO / OTHER
        env = {**os.environ, "RACFG_STATE_DIR": f"{tmp}/state"}
        with running_lab(inventory) as lab:
            configure_data_plane(lab)
            baseline_s, _ = racfg("smoke", str(inventory), "--accept", "--format", "json", env=env)
            print(f"baseline: racfg smoke --accept in {baseline_s:.1f} s", flush=True)
            clean_drops, times = 0, []
            for n in range(1, CLEAN + 1):
                seconds, report = drift(inventory, env)
                times.append(seconds)
                named = drops(report)
                clean_drops += len(named)
                print(f"clean {n}: {seconds:.1f} s, {report['meta']['performance']['items']} items, "
                      f"drops {named or 'none'}", flush=True)
            found = 0
            for n in range(1, SLOWED + 1):
                try:
                    api.slow_link(lab.site, "smdgx02", "data0", 0.94)
                    seconds, report = drift(inventory, env)
                finally:
                    api.slow_link(lab.site, "smdgx02", "data0", 1)
                named = drops(report)
                link = {r["check"]: r for r in report["results"]}["smdgx02/performance/link.read.smdgx02:data0"]
                found += "smdgx02/performance/link.read.smdgx02:data0" in named
                print(f"slowed {n}: {seconds:.1f} s, link.read.smdgx02:data0 drop {link['data']['drop']:.1%}, "
                      f"drops {named}", flush=True)
    print(f"clean runs: {CLEAN}, drops named in them: {clean_drops}")
    print(f"6% slower link found: {found} of {SLOWED}")
    print(f"site {inventory.name}: baseline smoke {baseline_s:.1f} s")
    median = sorted(times)[len(times) // 2]
    print(f"drift --performance --quick: {min(times):.1f}-{max(times):.1f} s (median {median:.1f}), "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
