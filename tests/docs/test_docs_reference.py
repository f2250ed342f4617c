"""The manual's generated pages: the inventory reference covers every key the schema accepts, and
the rules page every rule ``racfg check`` runs, so neither can fall behind the code."""

from __future__ import annotations

import importlib.util
import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from racfg.inventory.model import Inventory
from racfg.policy.rules import RULES

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference():
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "docs" / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _schema_fields(model: type[BaseModel], seen: set[type[BaseModel]]) -> list[tuple[str, str]]:
    """Every (model, field) reachable from ``model``, walked independently of the generator."""
    if model in seen:
        return []
    seen.add(model)
    fields = []
    for name, field in model.model_fields.items():
        if not field.exclude:
            fields.append((model.__name__, name))
        stack = [field.annotation]
        while stack:
            tp = stack.pop()
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                fields += _schema_fields(tp, seen)
            stack.extend(typing.get_args(tp))
    return fields


def _tables(markdown: str) -> dict[str, set[str]]:
    """Section title -> the keys its table lists."""
    tables: dict[str, set[str]] = {}
    title = ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            title = line[3:]
            tables[title] = set()
        elif match := re.match(r"^\| `([^`]+)` \|", line):
            tables[title].add(match.group(1))
    return tables


def test_inventory_reference_lists_every_schema_field(reference):
    tables = _tables(reference.inventory_reference())
    listed = {key for keys in tables.values() for key in keys}
    fields = _schema_fields(Inventory, set())
    assert len(fields) > 100
    missing = sorted(f"{model}.{name}" for model, name in fields if name not in listed)
    assert not missing, missing
    for path, model in reference.models():
        title = f"`{path}`" if path else "The file (top level)"
        assert set(tables[title]) == {n for n, f in model.model_fields.items() if not f.exclude}, title


def test_inventory_reference_describes_every_field(reference):
    rows = [line for line in reference.inventory_reference().splitlines() if line.startswith("| `")]
    cells = [re.split(r"(?<!\\)\|", row) for row in rows]  # a type cell escapes its own pipes
    undescribed = [cell[1].strip() for cell in cells if not cell[4].strip()]
    assert not undescribed, f"fields without a description (add Field(description=...)): {undescribed}"


def test_inventory_reference_shows_types_defaults_and_examples(reference):
    text = reference.inventory_reference()
    assert "| `host_mtu` | int or null |" in text
    assert "| `link_saturation` | float | `0.9` |" in text
    assert re.search(r"\| `type` \| 'ethernet' \\\| 'infiniband' \| required \| .+ \| `(ethernet|infiniband)` \|", text)


def test_rules_page_lists_every_rule(reference):
    text = reference.rules_reference()
    for rule in RULES:
        assert f"| `{rule.name}` | {rule.summary.replace('|', chr(92) + '|')} |" in text


def test_include_marker_shows_a_repository_file(reference):
    page = reference.on_page_markdown("before\n<!-- include: bench/RESULTS.md -->\nafter")
    assert page.startswith("before\n# Benchmark results") and page.endswith("after")
