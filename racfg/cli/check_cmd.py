"""``racfg schema``, ``racfg check`` and ``racfg render``: the inventory commands."""

from __future__ import annotations

import json

import typer

from racfg.cli.app import app
from racfg.inventory.model import Inventory


@app.command()
def schema() -> None:
    """Print the inventory's JSON Schema (for editors: yaml-language-server, VS Code)."""
    document = Inventory.model_json_schema()
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["title"] = "racfg inventory"
    typer.echo(json.dumps(document, indent=2, sort_keys=True))
