"""Module docstrings name only modules that exist (issue 53: racfg.smoke's listed ``settings`` and
``run`` long after they had gone). A docstring that maps a package is read by whoever changes it; a
stale map sends them looking for what is not there.

What counts as naming a module, in every module docstring of racfg's own packages (the ones found
under the repository's top-level packages, so a package that moves or a distribution that joins is
checked as it is):

- a file name, ``name.py``: a module of that name in the same top-level package (racfg, the lab's);
  another tool's file (``frr-reload.py``, ``conftest.py`` of the validators) is written with its path
  or hyphenated name, or named in the repository;
- a dotted name under racfg (``racfg.inventory.cluster``): an importable module, or a name defined
  at the top of one;
- in a sentence of a package's docstring that speaks of its modules ("Modules, one concept each:
  ``plan`` (...), ``remote``, ..."), each double-backticked lowercase name: a module or subpackage of
  that package.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("racfg", "lab")  # the product package, and the lab's distribution where it lives beside it
IGNORED = {".venv", "build", "dist", "__pycache__", "node_modules"}

FILE_NAME = re.compile(r"(?<![\w/.-])(\w+)\.py\b")
DOTTED = re.compile(r"(?<![\w.])(racfg(?:\.\w+)+)")
LISTED = re.compile(r"``([a-z_][a-z0-9_]*)``")
SENTENCE = re.compile(r"(?<=[.;])\s+(?=[A-Z`])")
SPEAKS_OF_MODULES = re.compile(r"\bmodules?\b", re.I)


def python_files() -> list[Path]:
    out = []
    for root in ROOTS:
        base = REPO / root
        if base.is_dir():
            out += [p for p in base.rglob("*.py") if not IGNORED & set(p.relative_to(REPO).parts)]
    return sorted(out)


def docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def package_modules(package: Path) -> set[str]:
    """Every module and subpackage name under ``package``, at any depth."""
    names = {p.stem for p in package.rglob("*.py") if p.name != "__init__.py"}
    return names | {p.parent.name for p in package.rglob("__init__.py") if p.parent != package}


def defined_at_top(origin: str, name: str) -> bool:
    tree = ast.parse(Path(origin).read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return True
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        if isinstance(node, ast.Import | ast.ImportFrom) and any(
                (a.asname or a.name.split(".")[0]) == name for a in node.names):
            return True
    return False


def dotted_exists(dotted: str) -> bool:
    """An importable module, or a module and a name defined at its top (``racfg.inventory.site``)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            spec = importlib.util.find_spec(".".join(parts[:cut]))
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        # a name at the top of the module (a class's attributes after it are the class's business)
        return spec.origin is not None and spec.origin.endswith(".py") and defined_at_top(spec.origin, rest[0])
    return False


def stale_names(path: Path, repo_modules: set[str], root_modules: set[str]) -> list[str]:
    """What ``path``'s docstring names that does not exist: ``root_modules`` are the modules of its
    top-level package, ``repo_modules`` every module of the repository."""
    text = docstring(path)
    stale = [f"{name}.py" for name in FILE_NAME.findall(text) if name not in root_modules | repo_modules]
    stale += [d for d in DOTTED.findall(" ".join(text.split())) if not dotted_exists(d.rstrip("."))]
    if path.name == "__init__.py":
        own = package_modules(path.parent)
        for sentence in SENTENCE.split(" ".join(text.split())):
            if SPEAKS_OF_MODULES.search(sentence):
                stale += [f"``{n}``" for n in LISTED.findall(sentence) if n not in own]
    return stale


def repo_module_names() -> set[str]:
    return {p.stem for p in REPO.rglob("*.py") if not IGNORED & set(p.relative_to(REPO).parts)}


FILES = python_files()


def test_the_checked_files_are_racfgs_packages() -> None:
    assert REPO / "racfg" / "smoke" / "__init__.py" in FILES


@pytest.mark.parametrize("text,stale", [
    ("Modules, one concept each: ``plan`` (what to run), ``nosuch`` (gone), and ``cli``.", ["``nosuch``"]),
    ("It builds it (see gone.py); racfg.nosuch.thing reads it.", ["gone.py", "racfg.nosuch.thing"]),
    ("Every verdict's ``data`` keeps the series under ``metrics``; see racfg.inventory.cluster.", []),
])
def test_the_reader_finds_what_a_package_docstring_names(tmp_path: Path, text: str, stale: list[str]) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(f'"""{text}"""\n')
    (package / "plan.py").write_text("")
    (package / "cli").mkdir()
    (package / "cli" / "__init__.py").write_text("")
    assert stale_names(package / "__init__.py", {"plan", "cli"}, {"plan", "cli"}) == stale


def test_every_module_a_docstring_names_exists() -> None:
    repo_modules = repo_module_names()
    roots = {root: package_modules(REPO / root) for root in ROOTS if (REPO / root).is_dir()}
    stale = {str(p.relative_to(REPO)): names for p in FILES
             if (names := stale_names(p, repo_modules, roots[p.relative_to(REPO).parts[0]]))}
    assert stale == {}, f"docstrings that name modules that do not exist: {stale}"
