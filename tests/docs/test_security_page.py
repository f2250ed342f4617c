"""docs/security.md names the test behind each promise: every test file and test it names exists,
so the page cannot keep pointing at a test that was moved or renamed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "security.md"
NAMED = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?")


def _functions(path: Path) -> set[str]:
    return {node.name for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.FunctionDef)}


def test_every_test_the_security_page_names_exists():
    named = NAMED.findall(PAGE.read_text())
    assert len(named) > 20  # the page's table names a test for each promise
    missing = [f"{file}::{test}" if test else file for file, test in named
               if not (REPO / file).is_file() or (test and test not in _functions(REPO / file))]
    assert missing == []


def test_every_secret_grep_the_page_relies_on_is_in_the_modules_it_names():
    """The page says each of these lab modules ends with the grep for secrets."""
    text = PAGE.read_text()
    row = next(line for line in text.splitlines() if "test_no_secret_in_any_file_or_argv" in line)
    modules = NAMED.findall(row)
    assert modules
    for file, _test in modules:
        if file.endswith("_lab.py"):
            assert {"test_no_secret_in_any_file_or_argv", "test_no_secret_in_any_file"} & _functions(REPO / file), file
