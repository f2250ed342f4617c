"""A module of racfg/ is named for what it holds, and the name is its own (issue 53 point 5): five
``errors.py`` and four ``command.py`` said nothing about which was which, and a traceback, a grep
or an editor tab showing ``site.py`` did not say whether it was the site lock or the site's schema.

So no two modules of racfg/ share a file name, except those listed here with the reason.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "racfg"

IN_PROGRESS = "issue 53 point 1 (smoke, one module per phase), in progress: its phases and verdicts are being merged"
ALLOWED = {
    "__init__.py": "every package has one",
    # racfg/errors.py is the package's error base; smoke/errors.py goes with smoke's rework
    "errors.py": IN_PROGRESS,
    "nccl.py": IN_PROGRESS,  # smoke/nccl.py, smoke/judge/nccl.py, hostfacts/nccl.py
    "benchmark.py": IN_PROGRESS,  # smoke/benchmark.py, smoke/judge/benchmark.py
    "links.py": IN_PROGRESS,  # smoke/links.py, smoke/judge/links.py
    "scaling.py": IN_PROGRESS,  # smoke/scaling.py, smoke/judge/scaling.py
    "storage.py": IN_PROGRESS,  # smoke/storage.py, smoke/judge/storage.py
}


def shared_names() -> dict[str, list[str]]:
    places: dict[str, list[str]] = defaultdict(list)
    for path in PACKAGE.rglob("*.py"):
        if "__pycache__" not in path.parts:
            places[path.name].append(str(path.relative_to(REPO)))
    return {name: sorted(paths) for name, paths in places.items() if len(paths) > 1}


def test_no_two_modules_of_racfg_share_a_name():
    shared = {name: paths for name, paths in shared_names().items() if name not in ALLOWED}
    assert shared == {}, "name each module for what it holds, so that its name is its own"


def test_every_name_the_list_allows_is_still_shared():
    """An entry whose modules were renamed or merged goes from the list, so the list says what is left."""
    assert sorted(set(ALLOWED) - set(shared_names())) == []
