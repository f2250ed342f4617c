"""Run records (a *run* is one recorded command):
every deploy/validate/drift/smoke leaves ``.racfg/runs/<timestamp>-<command>/``.

The record keeps the ansible-runner artifacts (full log and events), the rendered inventory the
run used, and the results JSON, so an operator can answer "what did that run do?" later. It holds
no secret (racfg.secret_vars, racfg.secret_env), and only its owner may read it: the state
directory and every record are 0700 (racfg.paths.private_dir), their files 0600.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from racfg.paths import private_dir, private_state_dir


@dataclass(frozen=True)
class RunRecord:
    path: Path
    command: str

    @classmethod
    def create(cls, command: str, root: Path | None = None) -> RunRecord:
        base = (private_dir(root) if root is not None else private_state_dir()) / "runs"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        base.mkdir(mode=0o700, exist_ok=True)
        # mkdir is the claim: two runs started in the same second (two sites deployed at once from
        # one project) each get a directory of their own, never the other's
        suffix = 1
        while True:
            path = base / (f"{stamp}-{command}" if suffix == 1 else f"{stamp}-{command}-{suffix}")
            try:
                path.mkdir(mode=0o700)
                return cls(path, command)
            except FileExistsError:
                suffix += 1

    def write_json(self, name: str, data: Any) -> Path:
        target = self.path / name
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
        return target


def write_json_whole(path: Path, data: dict[str, Any]) -> None:
    """One JSON file, whole or not at all, owner-only as ansible-runner writes its event files.

    Readers may look while it is written (an event file while the run goes on; the task-count cache
    while another racfg of the project runs), and the temporary name is this process's own, so two
    writers never write into one file. A write that fails loses that file, as in ansible-runner.
    """
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(data))
        os.replace(temporary, path)
