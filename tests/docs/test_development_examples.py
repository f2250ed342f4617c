"""docs/development.md teaches the code as it is (issue 53): its worked examples are excerpts of the real
code and the API it names exists.

- Every fenced ``python`` block compiles, and each definition in it (function or class, decorators
  included) is an excerpt of the definition of that name in racfg/ or validators/: its tokens, comments
  aside, are the real definition's, from the first to the last, where ``...`` stands for whatever the
  excerpt leaves out. An example that names a function the code does not have, or shows a call the
  code does not make, fails. A block that defines nothing of the code's (code a contributor would
  write) has its imports resolved against the package instead.
- Every ``verdict.<method>(...)`` the page shows, in prose or in an example, is a method of the real
  ``Verdict`` (validators/conftest.py), and each call in an example binds to its signature.
- Every repository path the page names (``racfg/...``, ``tests/...``, ``roles/...``) exists.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import io
import re
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "development.md"
CODE = ("racfg", "validators")
TOP_DIRS = ("racfg", "validators", "tests", "roles", "playbooks", "scripts", "bench", "inventory", "docs", "lab")
SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def tokens(source: str) -> list[str]:
    """The source's tokens without layout or comments: an excerpt may re-wrap lines and drop comments."""
    return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in SKIP]


def definitions() -> dict[str, list[str]]:
    """Every top-level or class-level function and class of the code by name: its source, decorators included."""
    found: dict[str, list[str]] = {}
    for top in CODE:
        for path in (REPO / top).rglob("*.py"):
            source = path.read_text()
            lines = source.splitlines(keepends=True)
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    found.setdefault(node.name, []).append("".join(lines[first - 1:node.end_lineno]))
    return found


def is_excerpt(example: list[str], real: list[str]) -> bool:
    """``example``'s tokens are ``real``'s from its first to its last, ``...`` standing for any run of them."""
    segments: list[list[str]] = [[]]
    for tok in example:
        if tok == "...":
            segments.append([])
        else:
            segments[-1].append(tok)
    at = 0
    for i, seg in enumerate(segments):
        if not seg:
            continue
        if i == 0:
            if real[:len(seg)] != seg:
                return False
            at = len(seg)
            continue
        starts = [s for s in range(at, len(real) - len(seg) + 1) if real[s:s + len(seg)] == seg]
        if not starts:
            return False
        at = starts[0] + len(seg)
    return segments[-1] == [] or at == len(real)


def example_definitions(block: str) -> list[tuple[str, str]]:
    """Each top-level definition of an example block: its name and source (decorators included)."""
    lines = block.splitlines(keepends=True)
    out = []
    for node in ast.parse(block).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            out.append((node.name, "".join(lines[first - 1:node.end_lineno])))
    return out


def verdict_class() -> type:
    spec = importlib.util.spec_from_file_location("racfg_docs_validators_conftest", REPO / "validators" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Verdict


TEXT = PAGE.read_text()
BLOCKS = python_blocks(TEXT)


def test_the_page_has_examples_to_check() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[b.split("\n", 1)[0][:40] for b in BLOCKS])
def test_each_example_is_the_code_as_it_is(block: str) -> None:
    compile(block, str(PAGE), "exec")
    code = definitions()
    shown = example_definitions(block)
    ours = [(name, src) for name, src in shown if name in code]
    for name, source in ours:
        assert any(is_excerpt(tokens(source), tokens(real)) for real in code[name]), (
            f"docs/development.md's {name} is not the code's {name} (an excerpt may only leave out, with ...)")
    if not ours:  # code a contributor would write: what it imports must exist
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = importlib.import_module(node.module)
                missing = [a.name for a in node.names if not hasattr(module, a.name)]
                assert not missing, f"docs/development.md imports {missing} from {node.module}, which has none"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    importlib.import_module(alias.name)


def test_every_verdict_method_the_page_names_exists_and_each_example_call_binds() -> None:
    verdict = verdict_class()
    named = set(re.findall(r"\bverdict\.(\w+)\(", TEXT))
    assert named, "the page teaches the verdict fixture"
    assert sorted(m for m in named if not callable(getattr(verdict, m, None))) == []
    for block in BLOCKS:
        for node in ast.walk(ast.parse(block)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "verdict"):
                signature = inspect.signature(getattr(verdict, node.func.attr))
                signature.bind(None, *node.args, **{k.arg: k.value for k in node.keywords if k.arg})


def test_the_reading_without_a_comparison_is_taught_as_info() -> None:
    """Issue 53: a reading with nothing to compare is ``verdict.info`` (never a pass), not ``note``."""
    verdict = verdict_class()
    assert "never as a pass" in inspect.getdoc(verdict.info)
    assert "`verdict.info(...)` records a reading with nothing to compare" in " ".join(TEXT.split())


def test_every_path_the_page_names_exists() -> None:
    paths = {p for p in re.findall(r"`([\w./-]+)`", TEXT) if p.split("/")[0] in TOP_DIRS and "/" in p}
    assert paths, "the page names the repository's files"
    assert sorted(p for p in paths if not (REPO / p).exists()) == []
