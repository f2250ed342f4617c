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

ALLOWED = {
    "__init__.py": "every package has one",
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
