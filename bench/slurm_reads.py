"""validate's per-host read through Slurm against SSH on the 64- and 128-host pods (issue 55 point 5).

Target (bench/RESULTS.md): at 128 hosts the read through Slurm (``racfg validate --read-via slurm``:
one job step per partition) in under half the time of the read over SSH (one session per host).
The figure compared is validate's own ``meta.reads.read_seconds``, the wall time from the first
host's read to the last one's (scripts built, hosts read, output parsed); validate's whole time is
printed beside it. Each pod is a copy of bench/pod64.yaml or bench/pod128.yaml with a ``scheduler:``
section (slurmctld on one more lab machine, slurmd in every host), its data plane set as the smoke
tests set it (addresses and MTU 9000, no deploy: both reads run the same scripts against the same
state, so what differs is how the scripts reach the hosts). The two reads alternate, BENCH_RUNS
times each (default 3; BENCH_VALIDATE_RUNS=0: none, the transport alone); every run's verdicts are
compared with the first SSH run's. Then the
transport alone, as often: one ``hostname`` on every host over SSH and through Slurm (what the
reads cost beyond the hosts' own work: in the lab every host's script runs on the same two CPUs, so
the scripts' own time does not shrink with more nodes as it does on a real site).
Run as root:  .venv/bin/python bench/slurm_reads.py [pod64] [pod128]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchlib import REPO, racfg

sys.path[:0] = [str(REPO), str(REPO / "tests")]
from labsupport import running_lab  # noqa: E402  (the tests' lab handle: up, data plane, down)

from tests.smoke.labnet import configure_data_plane  # noqa: E402

SCHEDULER = """
scheduler:
  type: slurm
  controller: {{name: slurmctl, address: {address}}}
  partitions:
    - {{name: gpu, roles: [dgx]}}
    - {{name: storage, roles: [storage]}}
  default_partition: gpu
"""
PODS = {"pod64": ("bench/pod64.yaml", "198.18.66.5"), "pod128": ("bench/pod128.yaml", "198.18.96.12")}
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
VALIDATE_RUNS = int(os.environ.get("BENCH_VALIDATE_RUNS", str(RUNS)))  # 0: the transport alone


def validate(inventory: Path, env: dict[str, str], via: str) -> tuple[float, dict]:
    seconds, out = racfg("validate", str(inventory), "--read-via", via, "--format", "json", env=env, ok=(0, 1, 3))
    return seconds, json.loads(out)


def transport(inventory: Path) -> tuple[float, float, float, float]:
    """The reads' transport alone: one short script (``hostname``) on every host, over SSH (a session
    per host, 32 at once, as validate opens them) and through Slurm (racfg.slurm.node_step, one job
    step per partition). Wall seconds and racfg's own CPU seconds (this process: what a controller
    pays per host) each; every host must answer its own name both ways."""
    from racfg.cli.providers import overrides_for
    from racfg.inventory import load_cluster
    from racfg.slurm.node_step import read_nodes
    from racfg.ssh.host_sessions import HostSession, SshEndpoint

    cluster = load_cluster(inventory)
    overrides = overrides_for(cluster)
    names = [h.name for h in cluster.hosts]

    def over_ssh(host) -> str:
        session = HostSession(SshEndpoint.of(host, overrides))
        try:
            session.connect()
            return session.run("hostname", timeout=120).stdout.strip()
        finally:
            session.close()

    start, cpu = time.monotonic(), time.process_time()
    with ThreadPoolExecutor(max_workers=32) as pool:
        answers = list(pool.map(over_ssh, cluster.hosts))
    ssh, ssh_cpu = time.monotonic() - start, time.process_time() - cpu
    assert answers == names, "a host over SSH did not answer its name"
    start, cpu = time.monotonic(), time.process_time()
    reads = read_nodes(cluster, overrides, dict.fromkeys(names, "hostname"), 300)
    slurm, slurm_cpu = time.monotonic() - start, time.process_time() - cpu
    assert reads.ssh == {} and all(reads.outputs[n].strip() == n for n in names), reads.describe()
    return ssh, slurm, ssh_cpu, slurm_cpu


def verdicts(report: dict) -> dict[str, str]:
    return {r["check"]: r["status"] for r in report["results"]}


def bench_pod(name: str, tmp: Path) -> tuple[float, float]:
    source, controller = PODS[name]
    inventory = tmp / f"{name}.yaml"
    inventory.write_text((REPO / source).read_text() + SCHEDULER.format(address=controller))
    env = {**os.environ, "RACFG_STATE_DIR": str(tmp / f"state-{name}")}
    reads: dict[str, list[float]] = {"ssh": [], "slurm": [], "transport ssh": [], "transport slurm": [],
                                 "cpu ssh": [], "cpu slurm": []}
    with running_lab(inventory) as lab:
        if VALIDATE_RUNS:
            configure_data_plane(lab)
        reference: dict[str, str] | None = None
        for run in range(1, VALIDATE_RUNS + 1):
            for via in ("ssh", "slurm"):
                seconds, report = validate(inventory, env, via)
                meta = report["meta"]["reads"]
                reads[via].append(meta["read_seconds"])
                found = verdicts(report)
                reference = found if reference is None else reference
                differ = sorted(c for c in reference.keys() | found.keys() if reference.get(c) != found.get(c))
                steps = {p: len(n) for p, n in meta.get("steps", {}).items()}
                print(f"{name} run {run} {via:5}: read {meta['read_seconds']:6.2f} s, validate {seconds:6.1f} s, "
                      f"{len(found)} checks ({report['summary']['pass']} passed), verdicts differing from the "
                      f"first SSH run: {len(differ)} {differ[:3]}, job steps {steps or '-'}, over SSH "
                      f"{len(meta.get('ssh', {})) if via == 'slurm' else 'all'}, load {os.getloadavg()[0]:.1f}",
                      flush=True)
        for run in range(1, RUNS + 1):
            over_ssh, through_slurm, ssh_cpu, slurm_cpu = transport(inventory)
            reads["transport ssh"].append(over_ssh)
            reads["transport slurm"].append(through_slurm)
            reads["cpu ssh"].append(ssh_cpu)
            reads["cpu slurm"].append(slurm_cpu)
            print(f"{name} transport run {run}: `hostname` on {len(lab.cluster.hosts)} hosts over SSH "
                  f"{over_ssh:.2f} s ({ssh_cpu:.2f} CPU-s of racfg's), through Slurm {through_slurm:.2f} s "
                  f"({slurm_cpu:.2f} CPU-s), load {os.getloadavg()[0]:.1f}", flush=True)
    alone = statistics.median(reads["transport ssh"]), statistics.median(reads["transport slurm"])
    cpu = statistics.median(reads["cpu ssh"]), statistics.median(reads["cpu slurm"])
    hosts = len(lab.cluster.hosts)
    print(f"{name}: transport alone, medians: over SSH {alone[0]:.2f} s, {cpu[0]:.2f} CPU-s of racfg's "
          f"({cpu[0] / hosts * 1000:.1f} ms a host), through Slurm {alone[1]:.2f} s, {cpu[1]:.2f} CPU-s "
          f"({cpu[1] / hosts * 1000:.1f} ms a host): {alone[1] / alone[0]:.2f} of SSH's time, "
          f"{cpu[1] / cpu[0]:.2f} of its CPU", flush=True)
    if not VALIDATE_RUNS:
        return alone
    ssh, slurm = statistics.median(reads["ssh"]), statistics.median(reads["slurm"])
    print(f"{name}: read over SSH median {ssh:.2f} s ({min(reads['ssh']):.2f}-{max(reads['ssh']):.2f}), through "
          f"Slurm median {slurm:.2f} s ({min(reads['slurm']):.2f}-{max(reads['slurm']):.2f}): "
          f"{slurm / ssh:.2f} of SSH's time", flush=True)
    return ssh, slurm


def main(argv: list[str]) -> int:
    names = argv or list(PODS)
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            start = time.monotonic()
            ssh, slurm = bench_pod(name, Path(tmp))
            print(f"{name}: {time.monotonic() - start:.0f} s with lab up and down", flush=True)
            if name == "pod128" and slurm >= ssh / 2:
                missed.append(f"pod128: the read through Slurm {slurm:.2f} s is not under half of SSH's {ssh:.2f} s")
    for line in missed:
        print("MISSED", line)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
