"""A pod-size lab (bench/pod64.yaml: 48 GPU servers + 16 storage nodes, one 7368X, 64 cables)
boots on this machine, every host answers over real SSH, and ``lab down`` leaves nothing.

On a stock machine this size used to die at about the 27th host (root's inotify instances ran
out), and once up, its hosts could not all reach each other at once: the machine's one ARP table
(1024 entries on a stock machine) overflowed, and validate's jumbo pings failed on the later
hosts. ``lab up`` now checks and raises both limits first (lab/racfg_lab/limits.py), and the test
makes every host resolve every other at the same moment. Heavy on a small machine: about a
minute and 1 GiB while it runs.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from labsupport import running_lab

from racfg.inventory import load_cluster
from racfg_lab import limits
from racfg_lab.teardown import leftovers

pytestmark = [pytest.mark.lab, pytest.mark.solo]  # 64 hosts pinging at once: the machine to itself
POD = Path(__file__).resolve().parents[2] / "bench" / "pod64.yaml"
SITE = load_cluster(POD).name


def test_pod_of_64_hosts_boots_answers_ssh_and_leaves_nothing() -> None:
    with running_lab(POD) as lab:
        state = lab.state
        assert (len(state.hosts), len(state.switches), len(state.cables)) == (64, 1, 64)
        needed = limits.shortfalls(0, 0, limits.measure_usage(), limits.Sysctls())
        assert [s.name for s in needed if s.name.startswith("fs.inotify")] == []

        def login(host: str) -> tuple[str, str]:
            proc = lab.ssh(host, "hostname", check=False, timeout=60)
            return host, proc.stdout.strip() if proc.returncode == 0 else f"rc={proc.returncode} {proc.stderr.strip()}"

        with ThreadPoolExecutor(8) as pool:
            answers = dict(pool.map(login, sorted(state.hosts)))
        assert {host: name for host, name in answers.items() if name != host} == {}

        # All hosts at once, each pinging all 63 others: about 4000 ARP entries within seconds,
        # the burst validate's jumbo matrix makes. Past the table's limit the pings are lost.
        assert limits.Sysctls().read(limits.NEIGHBOUR_LIMIT) >= limits.NEIGHBOUR_NETWORKS * 66 * 66
        mgmt = {host: str(spec.mgmt) for host, spec in state.hosts.items()}

        def unreachable(host: str) -> tuple[str, list[str]]:
            others = " ".join(address for peer, address in sorted(mgmt.items()) if peer != host)
            burst = (f"for a in {others}; do (ping -c 1 -W 5 -q $a >/dev/null 2>&1 || echo $a) & done; wait")
            proc = lab.ssh(host, burst, check=False, timeout=120)
            return host, proc.stdout.split() if proc.returncode == 0 else [f"rc={proc.returncode} {proc.stderr}"]

        with ThreadPoolExecutor(len(mgmt)) as pool:
            lost = {host: peers for host, peers in pool.map(unreachable, sorted(mgmt)) if peers}
        assert lost == {}
    assert leftovers(SITE) == []
