"""Whether the GPU servers a smoke phase runs on have their GPUs: what the NCCL phase and a user's GPU
benchmark both ask before they run anything.

Why one place: a phase that needs GPUs on a host that has none is not a measurement of the fabric. On
a site that does not require GPUs (a provider's site such as the lab: ``plan.lab``) it is a skip with
the reason; where the GPU servers must have them it is a failure pointing at validate's GPU checks,
never a benchmark that "ran" and printed nothing (a training script's ``horovodrun: not found``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from racfg.results import Result, Status
from racfg.smoke.measurement_error import MeasurementError


def gpu_counts(run: Any, hosts: Sequence[Any]) -> dict[str, int | str]:
    """GPUs each host's driver lists (``nvidia-smi -L``), or why it lists none. ``run``: a SmokeRun (its fleet)."""
    counts: dict[str, int | str] = {}
    for host in hosts:
        try:
            done = run.fleet[host.name].run("nvidia-smi -L", timeout=30)
        except MeasurementError as exc:
            counts[host.name] = exc.message
            continue
        listed = sum(1 for line in done.stdout.splitlines() if line.startswith("GPU "))
        counts[host.name] = listed if done.rc == 0 and listed else (
            "nvidia-smi not found" if done.rc == 127 else f"nvidia-smi -L: exit {done.rc}, no GPU listed")
    return counts


def gpus_of(run: Any, hosts: Sequence[Any]) -> tuple[dict[str, int | str], dict[str, str], list[str]]:
    """What a phase needs to judge its hosts' GPUs: each host's count or why it has none, the hosts
    without (host -> why), and the hosts that must have them (declared GPUs, not a provider's site).
    ``run``: a SmokeRun (its fleet and plan); ``hosts``: the inventory's hosts the phase runs on."""
    counts = gpu_counts(run, hosts)
    missing = {host: why for host, why in counts.items() if isinstance(why, str)}
    required = [h.name for h in hosts if h.gpus > 0 and not run.plan.lab]
    return counts, missing, required


def gpus_missing(missing: dict[str, str], required: Sequence[str], check: str, category: str,
                 what: str) -> Result | None:
    """GPUs missing on some hosts (host -> why): a skip where no host requires them, a failure where one
    does; None when every host has its GPUs. ``what`` names the phase in the message (``nccl``)."""
    if not missing:
        return None
    why = "; ".join(f"{name}: {reason}" for name, reason in missing.items())
    if not set(missing) & set(required):
        return Result("cluster", check, category, Status.SKIP, f"{what}: no GPU here ({why}); "
                      "this site does not require GPUs (a provider's site such as the lab)")
    return Result("cluster", check, category, Status.FAIL, f"{what}: GPUs missing ({why})",
                  "GPUs on every GPU server", why, fix="racfg validate --category gpu")
