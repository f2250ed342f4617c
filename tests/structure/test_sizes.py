"""A module holds one concept and a function does one thing: no module of racfg (or of its lab,
lab/racfg_lab) over 400 lines, no function over 80 (the project's readability targets; a longer
one is split by concern, not waived)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = (REPO / "racfg", REPO / "lab" / "racfg_lab")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def test_no_module_over_400_lines():
    long = {str(p.relative_to(REPO)): n for package in PACKAGES for p in package.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_no_function_over_80_lines():
    long = {}
    for path in (p for package in PACKAGES for p in package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(REPO)}:{node.name}"] = lines
    assert long == {}
