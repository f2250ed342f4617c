#!/usr/bin/env python3
"""A playbook through ansible-runner and nothing else: the floor under any wrapper built on it.

bench/scale.py runs the same no-change site.yml three ways on one lab: plain ``ansible-playbook``,
this, and ``racfg deploy``. This one starts ansible-playbook exactly as racfg does
(``racfg.playbook.Playbook.launch``: the same environment, ansible-runner's pty and its
``awx_display`` callback, Ansible's in-memory fact cache) with the options plain ansible-playbook
gets, and an event handler that keeps the recap and records nothing. Why: racfg over plain then
splits into ansible-runner over plain (its event protocol, which deploy cannot drop while it runs
through ansible-runner) and racfg over this (racfg's own part: its imports, inventory, tracker, run
record and the baseline read).

    .venv/bin/python bench/runner_alone.py PLAYBOOK INVENTORY [ANSIBLE-PLAYBOOK OPTION ...]

PLAYBOOK is a path, or a name under playbooks/. Prints the recap's totals (``changed=N failed=N
unreachable=N``) and exits with ansible-playbook's status.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from racfg.playbook import RECAP_COUNTS, Playbook

# the recap's counts this prints, as racfg names them
RECAP = {key: name for key, name in RECAP_COUNTS.items() if name in ("changed", "failed", "unreachable")}


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    playbook, inventory, *options = argv
    totals = dict.fromkeys(RECAP.values(), 0)

    def keep_recap(event: dict[str, Any]) -> bool:
        if event.get("event") == "playbook_on_stats":
            data = event.get("event_data") or {}
            for key, name in RECAP.items():
                totals[name] = sum((data.get(key) or {}).values())
        return False  # no event file: a wrapper that records nothing

    with tempfile.TemporaryDirectory(prefix="racfg-runner-alone-") as private:
        run = Playbook(playbook, Path(inventory), Path(private), connection_options=options)
        thread, runner = run.launch(keep_recap, lambda: False)
        thread.join()
    print(" ".join(f"{name}={count}" for name, count in totals.items()))
    return int(runner.rc if runner.rc is not None else 1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
