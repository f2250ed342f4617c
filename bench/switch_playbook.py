"""Benchmark: a no-change run of playbooks/switches.yml on inventory/ra-arista.yaml built in the lab.
Target (issue 4): < 30 s.

    .venv/bin/python bench/switch_playbook.py [--inventory inventory/ra-arista.yaml] [--keep]

Brings the inventory's lab up (unless it is up already), renders it (`racfg render`), runs the switch
playbook once to converge, then times a second run that must report changed=0 on every switch. The
lab switches' generated passwords are handed to the inventory's credential references (e.g.
RACFG_ARISTA_PASSWORD) for the run only. A lab this script brought up is torn down after, unless
--keep. Exit status 1 when the target is missed or the re-run changes something.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent

from racfg.errors import RacfgError  # noqa: E402
from racfg.inventory import load_cluster  # noqa: E402
from racfg_lab import api, lifecycle  # noqa: E402

RECAP = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


def playbook(rendered: Path, env: dict[str, str]) -> tuple[float, dict[str, tuple[int, int, int]], str, int]:
    """Run switches.yml; (seconds, {switch: (changed, unreachable, failed)}, output, rc)."""
    start = time.monotonic()
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(rendered), "playbooks/switches.yml"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.monotonic() - start
    recap = {m[0]: (int(m[2]), int(m[3]), int(m[4])) for m in RECAP.findall(proc.stdout)}
    return seconds, recap, proc.stdout + proc.stderr, proc.returncode


def veth_mtus(site: str, mtu: int) -> tuple[int, int]:
    """(switch-port veths at ``mtu``, cabled switch ports): the data plane, read with ``ip -n``."""
    state = api.require_lab(site)
    at = 0
    for cable in state.cables:
        out = subprocess.run(["ip", "-n", state.switches[cable.switch].netns, "-j", "link", "show",
                              cable.switch_ifname], check=True, capture_output=True, text=True).stdout
        at += json.loads(out)[0]["mtu"] == mtu
    return at, len(state.cables)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inventory", type=Path, default=REPO / "inventory" / "ra-arista.yaml")
    parser.add_argument("--target-seconds", type=float, default=30.0)
    parser.add_argument("--keep", action="store_true", help="leave a lab this script brought up running")
    args = parser.parse_args()
    cluster = load_cluster(args.inventory)
    site = cluster.name
    was_up = api.is_lab_up(site)
    t0 = time.monotonic()
    try:
        lifecycle.up(args.inventory)
    except RacfgError as exc:
        print(f"cannot bring the lab up: {exc}", file=sys.stderr)
        return 3
    up_seconds = time.monotonic() - t0
    try:
        env = dict(os.environ, ANSIBLE_NOCOLOR="1", PATH=f"{BIN}:{os.environ['PATH']}")
        for name, sw in cluster.switches.items():
            var = sw.spec.credentials.password_env
            if var:
                env[var] = api.switch_password(site, name)
        with tempfile.TemporaryDirectory(prefix="racfg-bench-") as tmp:
            rendered = Path(tmp)
            env["ANSIBLE_FACT_CACHING_CONNECTION"] = str(rendered / "facts")
            subprocess.run([str(BIN / "racfg"), "render", str(args.inventory), "--out", str(rendered)],
                           check=True, capture_output=True, text=True)
            first_s, first, out, rc = playbook(rendered, env)
            if rc != 0:
                print(out[-3000:], file=sys.stderr)
                raise SystemExit(f"converging run failed (rc {rc})")
            second_s, second, out, rc = playbook(rendered, env)
        jumbo, cabled = veth_mtus(site, cluster.fabric.effective_switch_mtu)
    finally:
        if not was_up and not args.keep:
            lifecycle.down(args.inventory)
    ports = sum(len([n for h in cluster.hosts for n in h.nics if n.switch == name]) for name in cluster.switches)
    changed = {name: r[0] for name, r in second.items() if r[0]}
    ok = (rc == 0 and not changed and set(second) == set(cluster.switches) and jumbo == cabled
          and second_s < args.target_seconds)
    print(f"lab {site} {'already up' if was_up else 'up'} in {up_seconds:.1f} s: "
          f"{len(cluster.switches)} switch(es), {ports} cabled ports")
    print(f"converging run: {first_s:.1f} s, changed on {sum(1 for r in first.values() if r[0])} switch(es); "
          f"{jumbo}/{cabled} switch-port veths at MTU {cluster.fabric.effective_switch_mtu}")
    print(f"{'PASS' if ok else 'FAIL'}: no-change run of switches.yml in {second_s:.1f} s "
          f"(target < {args.target_seconds:g} s), changed={sum(changed.values())}, rc={rc}")
    if rc != 0 or changed:
        print(out[-3000:], file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
