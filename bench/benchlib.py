"""What the lab benchmarks share: running racfg as a user does, and the lab copy of ra-ethernet.

ra-ethernet runs in the lab with inbox OFED and without drive models: the lab has no MLNX_OFED
distribution, and its loop-device drives report no model (the nvme_storage role rightly refuses a
drive whose model differs from the declared one). The rest of the file is as shipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
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


def _renamed(text: str, site: str, new_site: str, octet: str, new_octet: str) -> str:
    """The same site under another name and subnets, so a benchmark never touches a test's lab."""
    return (text.replace(f"  name: {site}\n", f"  name: {new_site}\n", 1)
            .replace(f"198.18.{octet}.", f"198.18.{new_octet}.").replace(f"198.19.{octet}.", f"198.19.{new_octet}."))


def lab_copy(directory: Path) -> Path:
    """inventory/lab.yaml as site benchlab on 198.18.90.0/24 and 198.19.90.0/24."""
    path = directory / "benchlab.yaml"
    path.write_text(_renamed((REPO / "inventory" / "lab.yaml").read_text(), "lab", "benchlab", "0", "90"))
    return path


def ra_ethernet_lab_copy(directory: Path) -> Path:
    """inventory/ra-ethernet.yaml as site benchra (198.18.91.0/24, 198.19.91.0/24), inbox OFED, no drive models."""
    path = directory / "ra-ethernet.yaml"
    text = (REPO / "inventory" / "ra-ethernet.yaml").read_text().replace(
        "    flavor: mlnx\n    version: 4.5-1.0.1.0\n", "    flavor: inbox\n").replace(
        "        model: Micron 9200\n", "")
    path.write_text(_renamed(text, "ra-ethernet", "benchra", "1", "91"))
    return path


def lab_up(inventory: str, env: dict[str, str]) -> dict[str, str]:
    """Build a fresh lab; returns ``env`` plus each ``password_env`` switch's variable set to the password the
    lab gave that switch (an inventory's own password source is never overridden: the operator exports it)."""
    from racfg.inventory import load_cluster
    from racfg_lab import switch_password

    racfg("lab", "down", inventory, env=env)
    racfg("lab", "up", inventory, env=env)
    cluster = load_cluster(inventory)
    out = dict(env)
    for name, switch in cluster.switches.items():
        if switch.spec.credentials.password_env:
            out[switch.spec.credentials.password_env] = switch_password(cluster.name, name)
    return out


def deployed_labs() -> Iterator[tuple[str, str, dict[str, str]]]:
    """(name, inventory, env) for the lab copies of lab.yaml and ra-ethernet, each built fresh and
    deployed, then removed when the caller moves on (and whatever happens)."""
    with tempfile.TemporaryDirectory() as tmp:
        base = {**os.environ, "RACFG_STATE_DIR": tmp, "RACFG_PLAIN": "1"}
        labs = (("lab.yaml", str(lab_copy(Path(tmp)))), ("ra-ethernet.yaml", str(ra_ethernet_lab_copy(Path(tmp)))))
        try:
            for name, inventory in labs:
                env = lab_up(inventory, base)
                racfg("deploy", inventory, "--yes", env=env)
                yield name, inventory, env
                racfg("lab", "down", inventory, env=env)
        finally:
            lab_down(*(inventory for _, inventory in labs), env=base)


def lab_down(*inventories: str, env: dict[str, str]) -> None:
    for inventory in inventories:
        subprocess.run([*RACFG, "lab", "down", inventory], env=env, capture_output=True, check=False, cwd=REPO)
