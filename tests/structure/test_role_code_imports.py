"""The roles' module_utils import each other one way, as racfg's modules do (test_imports.py): no
cycle, lazy imports included. Ansible ships a module's module_utils by name
(``ansible.module_utils.<name>``), and a cycle between two of them couples them both ways.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PREFIX = "ansible.module_utils."


def module_utils() -> dict[str, Path]:
    return {p.stem: p for p in (REPO / "roles").glob("*/module_utils/*.py")}


def imported_module_utils(path: Path, known: set[str]) -> set[str]:
    """The racfg module_utils ``path`` imports, from every import statement in it (lazy ones too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.removeprefix(PREFIX) for alias in node.names if alias.name.startswith(PREFIX)}
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(PREFIX):
                found.add(node.module.removeprefix(PREFIX))
            elif node.module == PREFIX.rstrip("."):
                found |= {alias.name for alias in node.names}
    return found & known


def test_the_graph_reads_the_imports_ansible_ships() -> None:
    utils = module_utils()
    assert imported_module_utils(utils["racfg_drives"], set(utils)) >= {"racfg_state"}


def test_the_roles_module_utils_form_no_cycle() -> None:
    utils = module_utils()
    edges = {name: imported_module_utils(path, set(utils)) for name, path in utils.items()}
    try:
        tuple(graphlib.TopologicalSorter(edges).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"module_utils import cycle: {' -> '.join(exc.args[1])}")
