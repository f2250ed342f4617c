"""The RA rules about storage: how many Weka nodes and drives, whether the storage (Weka hosts or an
external array) keeps every GPU server fed, and the shapes a user benchmark runs in.

racfg.policy imports this module after rules.py (whose ``rule`` registry it uses), so the import
runs one way and every entry point sees every rule.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from racfg.catalog import ARRAY_MODELS, HOST_MODELS
from racfg.inventory.cluster import Cluster
from racfg.policy.budget import array_gbytes, bandwidth_budget
from racfg.policy.findings import Finding
from racfg.policy.rules import rule

WEKA_MIN_NODES = 8


@rule("storage", "Weka wants >= 8 storage nodes with drives, the same count on each")
def storage(c: Cluster) -> Iterator[Finding]:
    nodes = c.role("storage")
    if c.inventory.software.weka is not None and len(nodes) < WEKA_MIN_NODES:
        yield Finding("warning", "storage", ("hosts",),
                      f"{len(nodes)} storage node(s); a Weka cluster needs at least {WEKA_MIN_NODES}",
                      "fine for a lab; production clusters start at 8 nodes",
                      expected=f">= {WEKA_MIN_NODES}", actual=str(len(nodes)))
    counts = {len(h.drives) for h in nodes}
    for host in nodes:
        if not host.drives:
            yield Finding("error", "storage", (*host.src, "drives"), "storage node without NVMe drives",
                          "list its drives, e.g. drives: [{path: /dev/nvme[0:5]n1}]", subject=host.name)
            continue
        paths = [d.path for d in host.drives]
        if len(set(paths)) != len(paths):
            yield Finding("error", "storage", (*host.src, "drives"), "a drive is listed twice", subject=host.name)
        known = HOST_MODELS.get(host.model or "")
        if known and known.drives and len(host.drives) != known.drives and host.range_index == 0:
            yield Finding("warning", "storage", (*host.src, "drives"),
                          f"{known.name} is qualified with {known.drives} NVMe drives", subject=host.name,
                          expected=str(known.drives), actual=str(len(host.drives)))
    if len(counts) > 1:
        yield Finding("warning", "storage", ("hosts",),
                      "storage nodes have different drive counts; Weka balances best on equal nodes",
                      actual=", ".join(str(n) for n in sorted(counts)))
    for host in c.role("dgx"):
        known = HOST_MODELS.get(host.model or "")
        if known and known.gpus and host.gpus != known.gpus and host.range_index == 0:
            yield Finding("warning", "storage", (*host.src, "gpus"), f"{known.name} has {known.gpus} GPUs",
                          subject=host.name, expected=str(known.gpus), actual=str(host.gpus))


@rule("bandwidth", "The storage can keep every GPU server fed for the budget's workload")
def bandwidth(c: Cluster) -> Iterator[Finding]:
    budget = bandwidth_budget(c)
    if budget.gpu_servers == 0 or (budget.storage_nodes == 0 and budget.array is None):
        return
    short = budget.servers_fed < budget.gpu_servers if budget.array else budget.supply < budget.demand
    if short:
        hint = ("add an array, or give training a larger array.training_share" if budget.array else
                "add storage nodes (RA: +22.5 GB/s per 4-node BigTwin) or links")
        if (budget.limiting_tier or "").startswith("uplinks"):  # leaf-spine: the spine tier is the limit
            hint = f"the {budget.limiting_tier} limit first: add links to the spines, or spread the hosts"
        yield Finding("warning", "bandwidth", ("array",) if budget.array else ("acceptance", "budget"),
                      f"storage supplies {budget.supply:.1f} GB/s but {budget.gpu_servers} GPU servers need "
                      f"{budget.demand:.1f} GB/s ({budget.workload}); it feeds {budget.servers_fed}", hint,
                      expected=f">= {budget.demand:.1f} GB/s", actual=f"{budget.supply:.1f} GB/s")
    yield from _storage_references(c, budget.supply, budget.supply_iops if not budget.array else None)
    if budget.client_link < budget.demand_per_server:
        yield Finding("warning", "bandwidth", ("acceptance", "budget"),
                      f"a GPU server's links carry {budget.client_link:.1f} GB/s but it needs "
                      f"{budget.demand_per_server:.1f} GB/s",
                      "add data NICs to the GPU servers (DGX-1 has 4x 100G)",
                      expected=f">= {budget.demand_per_server:.1f} GB/s", actual=f"{budget.client_link:.1f} GB/s")


# Storage references the budget can be held against: name -> (budget figure, unit scale).
STORAGE_REFERENCES = {"fio_read_gbytes_per_s": "GB/s", "fio_randread_iops": "IOPS"}


def _storage_references(c: Cluster, supply: float, iops: float | None) -> Iterator[Finding]:
    """The storage's acceptance references (seed 004: > 30 GB/s, > 2.5M IOPS) against what the budget
    says the storage supplies: a reference the declared storage cannot reach is named before any run."""
    for name, unit in STORAGE_REFERENCES.items():
        have = supply if unit == "GB/s" else iops
        for key, ref in sorted(c.inventory.acceptance.references.get(name, {}).items(), key=str):
            floor = ref.value * (1 + ref.lower) if ref.lower is not None else ref.value
            if have is not None and have < floor:
                yield Finding("warning", "bandwidth", ("acceptance", "references", name, key),
                              f"the budget's storage supplies {have:,.4g} {unit}, below this reference",
                              "add storage nodes, or correct acceptance.budget's per-node figures",
                              expected=f">= {floor:,.4g} {unit}", actual=f"{have:,.4g} {unit}")


@rule("array", "An external array has a known throughput, serves on a data subnet, and mounts where Weka does not")
def array(c: Cluster) -> Iterator[Finding]:
    spec = c.inventory.array
    if spec is None:
        return
    if array_gbytes(spec) is None:
        yield Finding("error", "array", ("array", "model"),
                      f"unknown array model {spec.model!r} and no mixed_gbytes_per_s",
                      f"give mixed_gbytes_per_s (and read_percent), or use a known model "
                      f"({', '.join(sorted(ARRAY_MODELS))})")
    known = ARRAY_MODELS.get(spec.model)
    if known and spec.read_percent is not None and spec.read_percent != known.read_percent \
            and spec.mixed_gbytes_per_s is None:
        yield Finding("warning", "array", ("array", "read_percent"),
                      f"the catalog's {known.mixed_gbytes_per_s:g} GB/s for {known.name} is at "
                      f"{known.read_percent}% reads", "give mixed_gbytes_per_s for this mix",
                      expected=str(known.read_percent), actual=str(spec.read_percent))
    try:
        server = ipaddress.IPv4Address(spec.server)
    except ValueError:
        server = None
    subnets = [ipaddress.IPv4Network(s) for s in c.fabric.data_subnets]
    if server is not None and subnets and not any(server in s for s in subnets):
        yield Finding("error", "array", ("array", "server"), f"{server} is outside the data subnets",
                      "the GPU servers must reach the array over the data fabric, not the management network",
                      expected=", ".join(map(str, subnets)), actual=str(server))
    weka = c.inventory.software.weka
    if weka is not None and weka.clients == "dgx" and weka.mount_point == spec.mount_point:
        yield Finding("error", "array", ("array", "mount_point"),
                      f"{spec.mount_point} is also Weka's mount point", "mount the array elsewhere, e.g. /mnt/array",
                      expected=f"not {weka.mount_point}", actual=spec.mount_point)
    if spec.protocol == "sshfs":
        yield Finding("warning", "array", ("array", "protocol"),
                      "sshfs (FUSE over SFTP) is the lab's stand-in for NFS, far slower than an array's NFS",
                      "use protocol: nfs for a real array")


@rule("benchmark-shapes", "Benchmark shapes NODESxGPUS fit the GPU servers (nodes and GPUs per node)")
def benchmark_shapes(c: Cluster) -> Iterator[Finding]:
    spec = c.inventory.acceptance.smoke.benchmark
    dgx = c.role("dgx")
    if spec is None or not dgx:
        return
    gpus = min(h.gpus for h in dgx)
    places: list[tuple[tuple[object, ...], object]] = [
        (("acceptance", "smoke", "benchmark", "steps", i), step) for i, step in enumerate(spec.steps or [])]
    places += [(("acceptance", "smoke", "benchmark", "equivalent", g, "shapes", i), shape)
               for g, group in enumerate(spec.equivalent) for i, shape in enumerate(group.shapes)]
    for loc, step in places:
        if not isinstance(step, str):
            continue
        nodes, per_node = (int(x) for x in step.split("x"))
        if nodes > len(dgx) or per_node > gpus:
            yield Finding("error", "benchmark-shapes", loc,
                          f"shape {step} needs {nodes} GPU server(s) with {per_node} GPUs each",
                          "shapes are NODESxGPUS_PER_NODE", expected=f"<= {len(dgx)}x{gpus}", actual=step)
