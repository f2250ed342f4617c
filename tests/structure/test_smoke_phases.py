"""smoke is one module per phase, run by one table, and its verdicts are pure (issue 53, point 1).

Read from the source (AST), as a newcomer reads it:

- every module of racfg/smoke/phases/ is a row of racfg.smoke.phase_table's ``PHASE_TABLE`` and every
  row is one of them: a new phase is one new module and one row;
- each phase module holds its plan (``steps``), its measurement (``measure``) and its verdicts
  (``VERDICTS``, functions of its own);
- a verdict reaches no measurement module: no name it uses, directly or through the module's other
  definitions it uses, is imported from a module that runs tools or holds the run (``MEASUREMENT``)
  or from another phase; the shared modules verdicts read (plain data, readings, references, counters,
  marks) import none of those, at any depth within racfg.smoke;
- no measurement module imports a verdict: the modules that run tools on hosts and switches import,
  at any depth within racfg.smoke, no phase module and no shared verdict module.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "racfg" / "smoke"
PHASES = sorted(p.stem for p in (SMOKE / "phases").glob("*.py") if p.name != "__init__.py")

# Modules that run tools on hosts or switches, or hold the run that does.
TOOL_RUNNERS = {"racfg.smoke.remote", "racfg.smoke.tcp", "racfg.smoke.probes", "racfg.smoke.window"}
MEASUREMENT = TOOL_RUNNERS | {"racfg.smoke.run_state", "racfg.smoke.smoke_run", "racfg.smoke.phase_table",
                              "racfg.smoke.plots"}
MEASUREMENT_PREFIXES = ("racfg.ssh", "racfg.switches.session", "paramiko", "netmiko", "subprocess",
                        "racfg.smoke.phases")
# What verdicts share: plain data, which reading decides, references, switch counters, NCCL's marks.
VERDICT_MODULES = {"racfg.smoke.measured", "racfg.smoke.remeasure", "racfg.smoke.metrics",
                   "racfg.smoke.counter_verdicts", "racfg.smoke.nccl_marks", "racfg.smoke.bottleneck",
                   "racfg.smoke.units", "racfg.smoke.pair_isolation"}


def module_path(module: str) -> Path:
    base = REPO / Path(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def tree(module: str) -> ast.Module:
    return ast.parse(module_path(module).read_text())


def imported(module: str) -> dict[str, str]:
    """Each name the module imports at its top, and the module it comes from (a module itself for
    ``from package import module``)."""
    out = {}
    for node in tree(module).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out[alias.asname or alias.name] = sub if module_path(sub).exists() else node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = alias.name
    return out


def smoke_imports(module: str, seen: set[str] | None = None) -> set[str]:
    """Every module ``module`` imports, at any depth, following racfg.smoke's own modules."""
    seen = set() if seen is None else seen
    for origin in imported(module).values():
        if origin not in seen:
            seen.add(origin)
            if origin.startswith("racfg.smoke") and module_path(origin).exists():
                smoke_imports(origin, seen)
    return seen


def is_measurement(module: str) -> bool:
    return module in MEASUREMENT or module.startswith(MEASUREMENT_PREFIXES)


def definitions(module: str) -> dict[str, ast.AST]:
    out: dict[str, ast.AST] = {}
    for node in tree(module).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    out[target.id] = node
    return out


def reached(module: str, name: str) -> dict[str, str]:
    """The imported names a definition uses, directly or through the module's other definitions it uses."""
    defs, imports = definitions(module), imported(module)
    todo, seen, found = [name], set(), {}
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for node in ast.walk(defs[current]):
            if isinstance(node, ast.Name):
                if node.id in imports:
                    found[node.id] = imports[node.id]
                elif node.id in defs:
                    todo.append(node.id)
    return found


def verdict_names(module: str) -> list[str]:
    [node] = [n for n in tree(module).body if isinstance(n, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id == "VERDICTS" for t in n.targets)]
    assert isinstance(node.value, ast.Tuple)
    return [elt.id for elt in node.value.elts if isinstance(elt, ast.Name)]


def test_every_phase_module_is_one_row_of_the_table() -> None:
    from racfg.smoke.phase_table import PHASE_TABLE

    rows = [phase.module.__name__.rsplit(".", 1)[1] for phase in PHASE_TABLE]
    assert sorted(rows) == PHASES
    assert len({phase.name for phase in PHASE_TABLE}) == len(PHASE_TABLE)


@pytest.mark.parametrize("phase", PHASES)
def test_a_phase_module_holds_its_plan_measurement_and_verdicts(phase: str) -> None:
    module = importlib.import_module(f"racfg.smoke.phases.{phase}")
    assert callable(module.steps) and callable(module.measure)
    names = verdict_names(module.__name__)
    assert names and all(isinstance(definitions(module.__name__).get(n), ast.FunctionDef) for n in names)
    assert [v.__name__ for v in module.VERDICTS] == names


@pytest.mark.parametrize("phase", PHASES)
def test_a_verdict_reaches_no_measurement_module(phase: str) -> None:
    module = f"racfg.smoke.phases.{phase}"
    assert {name: {n: origin for n, origin in reached(module, name).items() if is_measurement(origin)}
            for name in verdict_names(module)} == {name: {} for name in verdict_names(module)}


@pytest.mark.parametrize("module", sorted(VERDICT_MODULES))
def test_what_verdicts_share_imports_no_measurement_module(module: str) -> None:
    assert sorted(m for m in smoke_imports(module) if is_measurement(m)) == []


@pytest.mark.parametrize("module", sorted(TOOL_RUNNERS))
def test_no_measurement_module_imports_a_verdict(module: str) -> None:
    verdicts = VERDICT_MODULES - {"racfg.smoke.measured", "racfg.smoke.units"}  # plain data and units: both sides
    assert sorted(m for m in smoke_imports(module) if m in verdicts or m.startswith("racfg.smoke.phases")) == []


def test_the_check_sees_a_verdict_that_reaches_a_measurement() -> None:
    """The analysis itself: ``measure`` of every phase reaches the run (racfg.smoke.run_state), so a verdict
    that called it, or took the run, would be caught."""
    for phase in PHASES:
        module = f"racfg.smoke.phases.{phase}"
        assert any(is_measurement(origin) for origin in reached(module, "measure").values()), phase
