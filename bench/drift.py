#!/usr/bin/env python3
"""`racfg drift` speed on the virtual lab (issue target in brackets):

drift runs its state layer (validate) beside its config layer (the check-mode deploy), whose run
also reads the facts its environment layer compares with the baseline, so its time is about the
check-mode deploy's alone
[drift <= 1.2x `racfg deploy --check`], on inventory/lab.yaml and on ra-ethernet.yaml in the lab
(the lab copies of bench/benchlib.py). Needs root; builds and removes its labs.

A drift run reads each switch once for its three layers [one login per switch and drift run]:
the lab switches count the logins they accept (racfg_lab.api.switch_logins), printed per switch.

Each lab is measured ``ROUNDS`` times, the check-mode deploy and drift alternating so both see the
same machine; the medians are compared. Printed per lab: each layer's time, the CPU seconds each
command used (its own and its children's: on a shared machine extra CPU is extra time), and the load
average while it ran (the lab shares the machine, so a ratio means little without it).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
from collections.abc import Callable

from benchlib import deployed_labs, racfg

from racfg.inventory import load_cluster
from racfg_lab import api

ROUNDS = 3


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(run: Callable[[], tuple[float, str]]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the command and its children, stdout)."""
    cpu = cpu_seconds()
    seconds, out = run()
    return seconds, cpu_seconds() - cpu, out


def measure(name: str, inventory: str, env: dict[str, str], rounds: int = ROUNDS) -> list[str]:
    """Check-mode deploy and drift, alternating, ``rounds`` times on a deployed lab; the report lines."""
    checks, drifts, check_cpu, drift_cpu, layers, loads = [], [], [], [], [], []
    cluster = load_cluster(inventory)
    logins: dict[str, list[int]] = {switch: [] for switch in cluster.switches}
    for _ in range(rounds):
        loads.append(os.getloadavg()[0])
        seconds, cpu, _ = measured(lambda: racfg("deploy", inventory, "--check", "--format", "json", env=env))
        checks.append(seconds)
        check_cpu.append(cpu)
        before = {switch: api.switch_logins(cluster.name, switch) for switch in logins}
        seconds, cpu, out = measured(lambda: racfg("drift", inventory, "--format", "json", env=env, ok=(0, 1)))
        for switch, count in before.items():  # not ``name``: that is the lab's, printed below
            logins[switch].append(api.switch_logins(cluster.name, switch) - count)
        drifts.append(seconds)
        drift_cpu.append(cpu)
        layers.append(json.loads(out)["meta"]["layers_seconds"])
    loads.append(os.getloadavg()[0])
    check, drift = statistics.median(checks), statistics.median(drifts)
    per_layer = ", ".join(f"{k} {statistics.median(d[k] for d in layers):.1f} s" for k in sorted(layers[0]))
    return [f"drift {name:<18} {drift:6.1f} s  (deploy --check alone {check:6.1f} s: {drift / check:.2f}x "
            f"[<= 1.2x])  layers: {per_layer}",
            f"      {'':<18} each round: drift {' '.join(f'{s:.1f}' for s in drifts)} s, check "
            f"{' '.join(f'{s:.1f}' for s in checks)} s; CPU drift {statistics.median(drift_cpu):.1f} s, "
            f"check {statistics.median(check_cpu):.1f} s; load average {min(loads):.1f}-{max(loads):.1f} "
            f"on {os.cpu_count()} CPUs",
            f"      {'':<18} switch logins per drift run: "
            + (", ".join(f"{switch} {' '.join(map(str, counts))}" for switch, counts in logins.items())
               or "no switches")
            + " [1 each]"]


def main() -> None:
    lines = []
    for name, inventory, env in deployed_labs():
        lines += measure(name, inventory, env)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
