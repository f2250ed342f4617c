"""A module holds one concept and a function does one thing: no module of racfg's own Python over 400
lines, no function over 80 (the project's readability targets). The caps are guides, not goals: a
module over the cap is split by concept (what it holds), never by line count into pieces that make
sense only together, and no module is waived.

racfg's own Python is the package, the roles' code that Ansible ships to a host or loads on the
controller (``library/``, ``module_utils/``, filter and lookup plugins) and the playbooks' plugins,
and the lab's distribution where it lives beside the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
ROLE_CODE = ("library", "module_utils", "filter_plugins", "lookup_plugins", "action_plugins",
             "callback_plugins", "test_plugins")
SPLIT_BY_CONCEPT = ("split it by concept (one module per thing it holds, named for it; a role module shares "
                    "code through module_utils), not by line count; the caps take no allow-list")


def sources() -> list[Path]:
    """Every Python file of racfg's own code (the package, the lab's distribution, the roles' and
    playbooks' code), so a new plugin folder is checked without a change here."""
    paths = [*(REPO / "racfg").rglob("*.py")]
    lab = REPO / "lab"
    if lab.is_dir():
        paths += [p for p in lab.rglob("*.py") if ".venv" not in p.parts and "build" not in p.parts]
    for folder in ROLE_CODE:
        paths += [*(REPO / "roles").glob(f"*/{folder}/*.py"), *(REPO / "playbooks").glob(f"{folder}/*.py")]
    return sorted(paths)


def test_the_checked_sources_include_the_roles_code() -> None:
    names = {str(p.relative_to(REPO)) for p in sources()}
    assert "roles/common/library/racfg_probe.py" in names
    assert "roles/common/module_utils/racfg_state.py" in names
    assert "roles/fabric/filter_plugins/fabric.py" in names
    assert "playbooks/callback_plugins/fork_gc.py" in names


def test_no_module_over_400_lines() -> None:
    long = {str(p.relative_to(REPO)): n for p in sources()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines: {long}; {SPLIT_BY_CONCEPT}"


def test_no_function_over_80_lines() -> None:
    long = {}
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(REPO)}:{node.name}"] = lines
    assert long == {}, (f"functions over {MAX_FUNCTION_LINES} lines: {long}; split each by what it does "
                        "(one function per step, named for it), not by line count")
