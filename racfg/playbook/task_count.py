"""How many tasks a play will start, for deploy's progress bar, without parsing the play twice.

What the last run of the same play started is kept (``.racfg/task-counts.json``, keyed by the play,
its selection, the rendered inventory and the playbooks and roles as they are); only a play not run
before asks ``ansible-playbook --list-tasks``, a second process that parses every role.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from racfg.paths import playbooks_dir, roles_dir
from racfg.playbook.runner import Playbook
from racfg.run_record import write_json_whole


def task_count_key(play: Playbook) -> str:
    """What the number of tasks a play starts depends on: the play, its selection, the
    rendered inventory (content), and playbooks/ and roles/ (names, sizes, mtimes)."""
    sel = play.selection
    digest = hashlib.sha256(repr((play.playbook, sel.limit, sel.tags, sel.skip_tags, sel.check)).encode())
    # the rendered hosts.yml, group_vars/ and host_vars/ beside it
    for path in sorted(p for p in play.inventory.parent.rglob("*") if p.is_file()):
        with contextlib.suppress(OSError):
            digest.update(path.name.encode() + path.read_bytes())
    for root in (playbooks_dir(), roles_dir()):
        for path in sorted(root.rglob("*")):
            with contextlib.suppress(OSError):
                info = path.stat()
                digest.update(f"{path}:{info.st_size}:{info.st_mtime_ns}".encode())
    return digest.hexdigest()[:20]

def remember_task_count(play: Playbook, cache: Path, tasks_started: int) -> None:
    """Keep how many tasks a finished run started: the next run of the same play needs no
    ``--list-tasks`` (a second ansible-playbook that parses every role) for its progress bar."""
    with contextlib.suppress(OSError, ValueError):
        known = json.loads(cache.read_text()) if cache.exists() else {}
        known[task_count_key(play)] = tasks_started
        cache.parent.mkdir(parents=True, exist_ok=True)
        # another racfg of the project (another site's deploy) may read or write it now
        write_json_whole(cache, dict(list(known.items())[-32:]))

def count_tasks(play: Playbook, cache: Path | None = None) -> int:
    """How many tasks the play will start (for the progress bar): what the last run of the
    same play started (``cache``, see remember_task_count), else ansible-playbook --list-tasks."""
    if cache is not None:
        with contextlib.suppress(OSError, ValueError):
            known = json.loads(cache.read_text()).get(task_count_key(play))
            if isinstance(known, int) and known > 0:
                return known

    argv = [str(Path(sys.executable).parent / "ansible-playbook"), "--list-tasks",
            str(playbooks_dir() / play.playbook), "-i", str(play.inventory)]
    sel = play.selection
    for flag, value in (("--limit", sel.limit), ("--tags", sel.tags), ("--skip-tags", sel.skip_tags)):
        if value:
            argv += [flag, value]
    env = play.environment()
    try:
        out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("      ") and "TAGS:" in line)
