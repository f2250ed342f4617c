"""Pages generated from the code at build time, so the manual cannot drift from what racfg accepts.

MkDocs calls ``on_page_markdown`` for every page; a page that holds one of the markers below gets
the generated text in its place. The inventory reference is walked from the pydantic models that
load an inventory (every field, its type, default and description), with an example value taken
from the example inventories that ship in ``inventory/``; the rules page is the table that
``racfg rules`` prints, from the same list ``racfg check`` runs.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from racfg.inventory.model import Inventory
from racfg.policy.rules import RULES

REPO = Path(__file__).resolve().parents[2]
INVENTORY_MARKER = "<!-- generated: inventory reference -->"
RULES_MARKER = "<!-- generated: rules -->"
INCLUDE_PREFIX = "<!-- include: "


def on_page_markdown(markdown: str, **_: Any) -> str:
    if INVENTORY_MARKER in markdown:
        markdown = markdown.replace(INVENTORY_MARKER, inventory_reference())
    if RULES_MARKER in markdown:
        markdown = markdown.replace(RULES_MARKER, rules_reference())
    while INCLUDE_PREFIX in markdown:  # a file of the repository shown as a page (bench/RESULTS.md)
        start = markdown.index(INCLUDE_PREFIX)
        end = markdown.index("-->", start)
        included = (REPO / markdown[start + len(INCLUDE_PREFIX):end].strip()).read_text()
        markdown = markdown[:start] + included + markdown[end + 3:]
    return markdown


def models(root: type[BaseModel] = Inventory) -> list[tuple[str, type[BaseModel]]]:
    """Every model reachable from ``root``, each with the YAML path it is first met at, in walk order."""
    found: dict[type[BaseModel], str] = {}

    def walk(model: type[BaseModel], path: str) -> None:
        if model in found:
            return
        found[model] = path
        for name, field in model.model_fields.items():
            for sub in _submodels(field.annotation):
                walk(sub, f"{path}.{name}" if path else name)

    walk(root, "")
    return [(path, model) for model, path in found.items()]


def inventory_reference() -> str:
    examples = _example_documents()
    parts = []
    for path, model in models():
        title = f"`{path}`" if path else "The file (top level)"
        parts.append(f"## {title}\n\n{_first_paragraph(model)}\n")
        parts.append("| key | type | default | description | example |\n|---|---|---|---|---|")
        for name, field in model.model_fields.items():
            if field.exclude:
                continue
            key_path = f"{path}.{name}" if path else name
            parts.append("| " + " | ".join((
                f"`{name}`", _cell(_type_name(field.annotation)), _cell(_default(field)),
                _cell(_description(field)), _cell(_example(examples, key_path)),
            )) + " |")
        parts.append("")
    return "\n".join(parts)


def rules_reference() -> str:
    lines = ["| rule | what it checks |", "|---|---|"]
    for rule in RULES:
        lines.append(f"| `{rule.name}` | {_cell(rule.summary)} |")
    return "\n".join(lines)


def _submodels(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _submodels(arg)


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return " | ".join(repr(a) if isinstance(a, str) else str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args if a is not type(None)) + (
            " or null" if type(None) in args else "")
    if origin in (list, tuple, set):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"map of {_type_name(args[0])} to {_type_name(args[1])}" if args else "map"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{_anchor_of(annotation)})"
    if annotation is Any:
        return "any"
    return getattr(annotation, "__name__", str(annotation))


def _anchor_of(model: type[BaseModel]) -> str:
    for path, found in models():
        if found is model:
            return "".join(c for c in path.lower() if c.isalnum() or c in "-_") if path else "the-file-top-level"
    return ""


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return ""
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return "(its defaults)"
    return "" if value is None else f"`{_flow(value)}`"


def _flow(value: Any) -> str:
    """A value as YAML's flow style writes it on one line (``[198.18.0.1]``, ``0.9``)."""
    return yaml.safe_dump(value, default_flow_style=True, width=1000).strip().removesuffix("...").strip()


def _description(field: Any) -> str:
    if field.description:
        return field.description
    for sub in _submodels(field.annotation):
        return _first_paragraph(sub)
    return ""


def _first_paragraph(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    if obj.__doc__ is None or (isinstance(obj, type) and obj.__doc__ == BaseModel.__doc__):
        return ""
    return " ".join(doc.split("\n\n")[0].split())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _example_documents() -> list[Any]:
    docs = []
    for path in sorted((REPO / "inventory").glob("*.yaml")):
        docs.append(yaml.safe_load(path.read_text()))
    return docs


def _example(documents: list[Any], key_path: str) -> str:
    for doc in documents:
        value = _lookup(doc, key_path.split("."))
        if value is not None and not isinstance(value, dict) and not (
                isinstance(value, list) and value and isinstance(value[0], dict)):
            text = _flow(value)
            return f"`{text}`" if len(text) <= 60 else f"`{text[:57]}...`"
    return ""


def _lookup(node: Any, keys: list[str]) -> Any:
    for key in keys:
        if isinstance(node, list):
            node = next((item for item in node if isinstance(item, dict) and key in item), None)
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node
