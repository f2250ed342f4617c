#!/usr/bin/env python3
"""`racfg drift` speed on the virtual lab (issue target in brackets):

drift runs its three layers (config = check-mode deploy, state = validate, environment = facts
against the baseline) concurrently, so its time is about the check-mode deploy's alone
[drift <= 1.2x `racfg deploy --check`], on inventory/lab.yaml and on ra-ethernet.yaml in the lab.
Prints each layer's time. ra-ethernet runs with inbox OFED and without drive models, as in
bench/deploy.py. Needs root; builds and removes its labs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RACFG = [sys.executable, "-m", "racfg"]


def racfg(*args: str, env: dict[str, str], ok: tuple[int, ...] = (0,)) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([*RACFG, *args], capture_output=True, text=True, env=env, cwd=REPO, check=False,
                          stdin=subprocess.DEVNULL)
    if proc.returncode not in ok:
        sys.exit(f"racfg {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - start, proc.stdout


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RACFG_STATE_DIR": tmp, "RACFG_PLAIN": "1"}
        lab = str(REPO / "inventory" / "lab.yaml")
        ra = Path(tmp) / "ra-ethernet.yaml"
        ra.write_text((REPO / "inventory" / "ra-ethernet.yaml").read_text().replace(
            "    flavor: mlnx\n    version: 4.5-1.0.1.0\n", "    flavor: inbox\n").replace(
            "        model: Micron 9200\n", ""))
        try:
            for name, inventory in (("lab.yaml", lab), ("ra-ethernet.yaml", str(ra))):
                racfg("lab", "down", inventory, env=env)
                racfg("lab", "up", inventory, env=env)
                racfg("deploy", inventory, "--yes", env=env)
                check, _ = racfg("deploy", inventory, "--check", "--format", "json", env=env)
                seconds, out = racfg("drift", inventory, "--format", "json", env=env, ok=(0, 1))
                layers = json.loads(out)["meta"]["layers_seconds"]
                rows.append((name, check, seconds, layers))
                racfg("lab", "down", inventory, env=env)
        finally:
            for inventory in (lab, str(ra)):
                subprocess.run([*RACFG, "lab", "down", inventory], env=env, capture_output=True, check=False)
    for name, check, seconds, layers in rows:
        per_layer = ", ".join(f"{k} {v:.1f} s" for k, v in sorted(layers.items()))
        print(f"drift {name:<18} {seconds:6.1f} s  (deploy --check alone {check:6.1f} s: {seconds / check:.2f}x "
              f"[<= 1.2x])  layers: {per_layer}")


if __name__ == "__main__":
    main()
