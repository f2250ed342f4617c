"""The baseline: facts of the last good deploy, for `racfg drift` to compare against.

Written to a staging directory first and swapped in whole, so a failed facts run never leaves
a half-new baseline behind the last good one.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from racfg.paths import state_dir


def baseline_dir(site: str) -> Path:
    return state_dir() / "baseline" / site


def staging_dir(site: str) -> Path:
    path = state_dir() / "baseline" / f".{site}.staging"
    shutil.rmtree(path, ignore_errors=True)
    (path / "hosts").mkdir(parents=True)
    (path / "switches").mkdir(parents=True)
    return path


def commit_baseline(site: str, staging: Path, meta: dict[str, Any]) -> Path:
    """Swap the staged baseline in; keep the previous one as ``<site>.previous``."""
    meta = {**meta, "recorded": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    (staging / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    target = baseline_dir(site)
    previous = target.with_name(f"{site}.previous")
    shutil.rmtree(previous, ignore_errors=True)
    if target.exists():
        target.rename(previous)
    staging.rename(target)
    return target


def load_baseline(site: str) -> dict[str, Any] | None:
    """The recorded baseline as {"meta", "hosts": {name: facts}, "switches": {name: facts}}, or None."""
    root = baseline_dir(site)
    if not (root / "meta.json").is_file():
        return None
    return {
        "meta": json.loads((root / "meta.json").read_text()),
        "hosts": {p.stem: json.loads(p.read_text()) for p in sorted((root / "hosts").glob("*.json"))},
        "switches": {p.stem: json.loads(p.read_text()) for p in sorted((root / "switches").glob("*.json"))},
    }
