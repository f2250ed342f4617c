"""racfg uses ansible-core's public API only: nothing in racfg/, roles/, playbooks/ or validators/
imports a private module of ansible (any ``_``-named part: ``ansible._internal``,
``ansible.module_utils._text``) or a private name from a public one, not even by a string given to
``importlib``. Private modules change without notice between ansible-core releases (2.19 moved the
template engine into ``ansible._internal``), and racfg supports 2.16 to 2.21 (docs/development.md).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("racfg", "roles", "playbooks", "validators")
# a dotted name under ansible (or ansible_runner) with a private part, wherever it is written
PRIVATE_NAME = re.compile(r"\bansible(?:_runner)?(?:\.\w+)*\.(_\w+)")


def private_part(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] in ("ansible", "ansible_runner") and any(p.startswith("_") for p in parts[1:])


def offences(source: str, where: str) -> list[str]:
    """Each private ansible import in ``source``: import statements, lazy ones included, and string
    literals that name a private ansible module (``importlib.import_module``, ``__import__``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"{where}:{node.lineno}: import {a.name}" for a in node.names if private_part(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if private_part(node.module):
                found.append(f"{where}:{node.lineno}: from {node.module} import ...")
            elif node.module.split(".")[0] in ("ansible", "ansible_runner"):
                found += [f"{where}:{node.lineno}: from {node.module} import {a.name}" for a in node.names
                          if a.name.startswith("_")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and PRIVATE_NAME.search(node.value):
            found.append(f"{where}:{node.lineno}: names {PRIVATE_NAME.search(node.value).group(0)}")
    return found


def product_files() -> list[Path]:
    return sorted(p for top in PRODUCT for p in (REPO / top).rglob("*.py") if "__pycache__" not in p.parts)


def test_the_product_imports_no_private_ansible_module():
    files = product_files()
    assert len(files) > 50 and any(p.parent.name == "lookup_plugins" for p in files)  # the scan sees the plugins
    found = [o for path in files for o in offences(path.read_text(), str(path.relative_to(REPO)))]
    assert found == []


@pytest.mark.parametrize("source", [
    "from ansible._internal._templating._engine import TemplateOptions",
    "import ansible._internal._templating._jinja_bits",
    "def f():\n    from ansible.module_utils._text import to_text",
    "from ansible.template import _private_helper",
    "import importlib\nimportlib.import_module('ansible._internal._templating')",
    "from ansible_runner._internal import x",
])
def test_the_scan_finds_each_way_of_importing_a_private_module(source: str):
    assert len(offences(source, "x.py")) == 1


@pytest.mark.parametrize("source", [
    "from ansible.plugins.lookup.template import LookupModule",
    "from ansible.module_utils.basic import AnsibleModule",
    "from __future__ import annotations",
    "from ._local import helper",  # a relative import is racfg's own
    "x = '_internal'",
])
def test_public_imports_pass(source: str):
    assert offences(source, "x.py") == []
