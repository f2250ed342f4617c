"""racfg's modules import each other one way: no cycles, lazy imports (inside functions) included,
and the product never imports the virtual lab (cli/providers.py is the one door). The lab is a
distribution of its own (lab/racfg_lab); its modules are in the graph too, so a cycle through the
lab (racfg -> racfg_lab -> racfg) is found as one inside racfg is.

A cycle hidden by a lazy import still couples two modules both ways; the graph here is read from
every ``import`` statement in the source, wherever it stands, so hiding one does not pass.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "racfg"
LAB_PACKAGE = REPO / "lab" / "racfg_lab"
LAB_DOORS = {"racfg.cli.providers"}  # the provider; `racfg lab` comes through an entry point (cli/lab_cmd.py)


def module_name(path: Path) -> str:
    root = LAB_PACKAGE.parent if path.is_relative_to(LAB_PACKAGE) else REPO
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for package in (PACKAGE, LAB_PACKAGE) for p in package.rglob("*.py")}


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The racfg modules ``name`` imports, from every import statement in it (lazy ones too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in found if m in known and m != name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_lazy_cycle():
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_racfg_imports_form_no_cycle():
    edges = graph()
    packages = {name for name, path in modules().items() if path.name == "__init__.py"}
    # a package's __init__ re-exporting its own submodules is how a package shows its API, not a cycle
    for name in edges:
        edges[name] = {m for m in edges[name] if not (name in packages and m.startswith(name + "."))
                       and not (m in packages and name.startswith(m + "."))}
    assert cycles(edges) == []


def test_racfg_packages_form_no_cycle():
    """Between racfg's subpackages too: render feeds switches the intended config, never the reverse."""
    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges: dict[str, set[str]] = {}
    for name, deps in graph().items():
        edges.setdefault(package(name), set()).update(package(d) for d in deps if package(d) != package(name))
    for deps in list(edges.values()):
        for dep in deps:
            edges.setdefault(dep, set())
    assert cycles(edges) == []


def test_the_product_never_imports_the_lab():
    offenders = sorted(f"{name} -> {dep}" for name, deps in graph().items() for dep in deps
                       if dep.startswith("racfg_lab") and not name.startswith("racfg_lab") and name not in LAB_DOORS)
    assert offenders == []
