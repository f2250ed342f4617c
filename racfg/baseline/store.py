"""Baselines: the facts of the last good deploy (or of an accepted drift), for `racfg drift`.

Facts are written to a staging directory first and swapped in whole, so a failed facts run
never leaves a half-new baseline behind the last good one. Every baseline that is replaced is
kept in ``<site>.history/<id>/`` (id = when it was recorded, ``YYYYmmdd-HHMMSS``), so drift can
list them (``--history``) and compare against an older one (``--baseline ID``).

The same rules keep smoke's performance baseline beside it (``kind="performance"``: ``<site>.performance/``
and ``<site>.performance.history/``, racfg.baseline.performance); a site's name has no dot, so neither
can be taken for another site's.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from racfg.errors import UsageError
from racfg.paths import private_state_dir, state_dir


def _named(site: str, kind: str) -> str:
    """The directory name of a site's baseline of ``kind`` ("": the facts of the last good deploy)."""
    return f"{site}.{kind}" if kind else site


def baseline_dir(site: str, kind: str = "") -> Path:
    return state_dir() / "baseline" / _named(site, kind)


def history_dir(site: str, kind: str = "") -> Path:
    return state_dir() / "baseline" / f"{_named(site, kind)}.history"


def staging_dir(site: str, kind: str = "", parts: tuple[str, ...] = ("hosts", "switches")) -> Path:
    """A fresh directory to collect facts into (one per process: two drifts may run at once)."""
    base = private_state_dir() / "baseline"
    base.mkdir(mode=0o700, exist_ok=True)
    path = base / f".{_named(site, kind)}.staging-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    for directory in (path, *(path / part for part in parts)):
        directory.mkdir(mode=0o700)
    return path


def _read_meta(directory: Path) -> dict[str, Any]:
    try:
        return json.loads((directory / "meta.json").read_text())
    except (OSError, ValueError):
        return {}


def commit_baseline(site: str, staging: Path, meta: dict[str, Any], kind: str = "") -> Path:
    """Swap the staged baseline in; the one it replaces moves to the history."""
    now = time.localtime()
    taken = {b["id"] for b in list_baselines(site, kind)}
    stamp = new_id = time.strftime("%Y%m%d-%H%M%S", now)
    suffix = 1
    while new_id in taken:
        suffix += 1
        new_id = f"{stamp}-{suffix}"
    meta = {**meta, "recorded": time.strftime("%Y-%m-%dT%H:%M:%S%z", now), "id": new_id}
    (staging / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    target = baseline_dir(site, kind)
    if target.exists():
        old_id = _read_meta(target).get("id") or time.strftime("%Y%m%d-%H%M%S", time.localtime(target.stat().st_mtime))
        keep = history_dir(site, kind) / old_id
        keep.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        target.rename(keep)
    staging.rename(target)
    return target


def list_baselines(site: str, kind: str = "") -> list[dict[str, Any]]:
    """Every baseline of a site (of ``kind``), newest first: {id, recorded, source, current, path}."""
    out = []
    current = baseline_dir(site, kind)
    if (current / "meta.json").is_file():
        out.append({**_summary(current), "current": True})
    history = history_dir(site, kind)
    for directory in sorted(history.iterdir() if history.is_dir() else [], reverse=True):
        if (directory / "meta.json").is_file():
            out.append({**_summary(directory), "id": directory.name, "current": False})
    return out


def _summary(directory: Path) -> dict[str, Any]:
    meta = _read_meta(directory)
    run = str(meta.get("run") or "")
    return {"id": meta.get("id") or directory.name, "recorded": meta.get("recorded", "?"),
            "source": meta.get("source") or ("deploy " + Path(run).name if run else "?"), "path": str(directory)}


def load_baseline(site: str, baseline_id: str | None = None) -> dict[str, Any] | None:
    """A baseline as {"meta", "hosts": {name: facts}, "switches": {name: facts}}; the current one by
    default, or the one with ``baseline_id`` (UsageError if there is none). None: no baseline yet."""
    root = baseline_dir(site)
    if baseline_id is not None:
        match = next((b for b in list_baselines(site) if b["id"] == baseline_id), None)
        if match is None:
            known = ", ".join(b["id"] for b in list_baselines(site)) or "none"
            raise UsageError(f"site {site} has no baseline {baseline_id}", hint=f"baselines: {known}")
        root = Path(match["path"])
    return read_facts_dir(root) if (root / "meta.json").is_file() else None


def read_facts_dir(root: Path) -> dict[str, Any]:
    return {
        "meta": _read_meta(root),
        "hosts": {p.stem: json.loads(p.read_text()) for p in sorted((root / "hosts").glob("*.json"))},
        "switches": {p.stem: json.loads(p.read_text()) for p in sorted((root / "switches").glob("*.json"))},
    }
