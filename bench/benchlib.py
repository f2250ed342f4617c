"""What the lab benchmarks share: running racfg as a user does, and the lab copy of ra-ethernet.

ra-ethernet runs in the lab with inbox OFED and without drive models: the lab has no MLNX_OFED
distribution, and its loop-device drives report no model (the nvme_storage role rightly refuses a
drive whose model differs from the declared one). The rest of the file is as shipped.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RACFG = [sys.executable, "-m", "racfg"]


def racfg(*args: str, env: dict[str, str], ok: tuple[int, ...] = (0,)) -> tuple[float, str]:
    """Run a racfg command; exit with its output when its code is not in ``ok``. Returns (seconds, stdout)."""
    start = time.perf_counter()
    proc = subprocess.run([*RACFG, *args], capture_output=True, text=True, env=env, cwd=REPO, check=False,
                          stdin=subprocess.DEVNULL)
    if proc.returncode not in ok:
        sys.exit(f"racfg {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - start, proc.stdout


def ra_ethernet_lab_copy(directory: Path) -> Path:
    path = directory / "ra-ethernet.yaml"
    path.write_text((REPO / "inventory" / "ra-ethernet.yaml").read_text().replace(
        "    flavor: mlnx\n    version: 4.5-1.0.1.0\n", "    flavor: inbox\n").replace(
        "        model: Micron 9200\n", ""))
    return path


def lab_down(*inventories: str, env: dict[str, str]) -> None:
    for inventory in inventories:
        subprocess.run([*RACFG, "lab", "down", inventory], env=env, capture_output=True, check=False, cwd=REPO)
