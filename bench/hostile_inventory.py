#!/usr/bin/env python3
"""How long `racfg check` takes to refuse each hostile inventory of issue 51 (target: under 1 s each).

Each case is a copy of inventory/lab.yaml bent one way (a template in a value, a sysctl key that
leaves /proc/sys, a newline, a command in a mount point, a connection variable in vars), or a file
built to hang or crash a loader: a nine-level alias bomb (ten references per level, 10^9 values
expanded), fifty 100,000-host ranges (5,000,000 hosts), a 100 MB file, 10,000-deep nesting in block
and in flow style. Prints, per case,
the exit code, the wall time of the command (median of 3, interpreter start included) and the
in-process time of the load that refuses it, and the message's first 90 characters.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from racfg.inventory import InventoryError, load_cluster

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 1.0


def _lab(bend: Callable[[dict], None]) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        data = yaml.safe_load((REPO / "inventory" / "lab.yaml").read_text())
        bend(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False, width=1000))

    return write


def _text(text: str) -> Callable[[Path], None]:
    return lambda path: path.write_text(text)


def _bomb() -> str:
    text = "a: &a [" + ", ".join(['"lol"'] * 10) + "]\n"
    for level in range(1, 9):
        text += f"l{level}: &l{level} [" + ", ".join([f"*{'a' if level == 1 else f'l{level - 1}'}"] * 10) + "]\n"
    return text


def _big(path: Path) -> None:
    with path.open("wb") as handle:
        handle.write(b"site: {name: big}\n")
        handle.truncate(100 * 1000 * 1000)


PIPE = "{{ lookup('pipe', 'touch /tmp/racfg-hostile') }}"
CASES: dict[str, Callable[[Path], None]] = {
    "site.time_sources template": _lab(lambda d: d["site"].update(time_sources=[PIPE])),
    "gpu_model template": _lab(lambda d: d["hosts"][0].update(gpu_model=PIPE)),
    "sysctl key x./etc/motd": _lab(lambda d: d["software"].update(tuning={"sysctl": {"x./etc/motd": "owned"}})),
    "sysctl value with a newline": _lab(lambda d: d["software"].update(
        tuning={"sysctl": {"net.core.rmem_max": "1\nkernel.core_pattern = |/tmp/racfg-hostile"}})),
    "mount_point with a command": _lab(lambda d: d["software"]["weka"].update(mount_point="/mnt/weka;touch /tmp/x")),
    "vars ansible_ssh_common_args": _lab(lambda d: d["hosts"][0].update(
        vars={"ansible_ssh_common_args": "-o ProxyCommand=touch /tmp/racfg-hostile"})),
    "dns_domain with a newline": _lab(lambda d: d["site"].update(dns_domain="example.org\n198.18.0.99 evil")),
    "alias bomb (9 levels x 10)": _text(_bomb()),
    "range bomb (50 x 100,000 hosts)": _lab(lambda d: d.update(
        hosts=[{"name": f"h{i}x[1:100000]", "role": "dgx", "mgmt": "198.18.0.11"} for i in range(50)])),
    "100 MB file": _big,
    "10,000-deep block nesting": _text("- " * 10_000 + "x\n"),
    "10,000-deep flow nesting": _text("[" * 10_000 + "]" * 10_000 + "\n"),
}


def command(path: Path) -> tuple[float, int, str]:
    times, result = [], None
    for _ in range(3):
        start = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "racfg", "check", str(path)], capture_output=True, text=True,
                                check=False, env={"PATH": "/usr/bin:/bin", "RACFG_PLAIN": "1"})
        times.append(time.perf_counter() - start)
    assert result is not None
    message = result.stderr.strip().splitlines()[0] if result.stderr.strip() else result.stdout.strip()
    return statistics.median(times), result.returncode, message.removeprefix("racfg: error: check: ").replace(
        str(path.parent) + "/", "")


def in_process(path: Path) -> float:
    start = time.perf_counter()
    with contextlib.suppress(InventoryError):
        load_cluster(path)
    return time.perf_counter() - start


def main() -> int:
    print(f"{'hostile inventory':<32} {'exit':>4} {'racfg check s':>14} {'load s':>8}  message")
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, write in CASES.items():
            path = Path(tmp) / "site.yaml"
            write(path)
            wall, code, message = command(path)
            load = in_process(path)
            print(f"{name:<32} {code:>4} {wall:>14.3f} {load:>8.4f}  {message[:90]}")
            if code != 2 or wall >= TARGET_S:
                missed.append(name)
    print(f"target: each refused (exit 2) in under {TARGET_S:g} s (issue 51)"
          + (f"; missed: {', '.join(missed)}" if missed else ": met"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
