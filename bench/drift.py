#!/usr/bin/env python3
"""`racfg drift` speed on the virtual lab (issue target in brackets):

drift runs its three layers (config = check-mode deploy, state = validate, environment = facts
against the baseline) concurrently, so its time is about the check-mode deploy's alone
[drift <= 1.2x `racfg deploy --check`], on inventory/lab.yaml and on ra-ethernet.yaml in the lab
(the lab copies of bench/benchlib.py). Prints each layer's time. Needs root; builds and removes its labs.
"""

from __future__ import annotations

import json

from benchlib import deployed_labs, racfg


def main() -> None:
    rows = []
    for name, inventory, env in deployed_labs():
        check, _ = racfg("deploy", inventory, "--check", "--format", "json", env=env)
        seconds, out = racfg("drift", inventory, "--format", "json", env=env, ok=(0, 1))
        rows.append((name, check, seconds, json.loads(out)["meta"]["layers_seconds"]))
    for name, check, seconds, layers in rows:
        per_layer = ", ".join(f"{k} {v:.1f} s" for k, v in sorted(layers.items()))
        print(f"drift {name:<18} {seconds:6.1f} s  (deploy --check alone {check:6.1f} s: {seconds / check:.2f}x "
              f"[<= 1.2x])  layers: {per_layer}")


if __name__ == "__main__":
    main()
