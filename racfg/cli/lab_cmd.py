"""``racfg lab``: the commands the lab package registers, added to the app when it is installed.

The lab is a distribution of its own (racfg-lab, lab/ in this repository): it declares its typer
app in the entry point group named by ``COMMANDS_GROUP`` (below), so the product names no module of the lab and the
lab's CLI may use the product's CLI helpers without a cycle. Without the lab, ``racfg lab ...``
says how to install it and exits 3. The entry points are read from the lab's own distribution, not
from every installed one (a scan of the whole venv costs each command milliseconds).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, distribution

from racfg.cli.app import app
from racfg.cli.providers import LAB_DISTRIBUTION, register_lab_missing

COMMANDS_GROUP = "racfg.commands"


def _add_lab_commands() -> bool:
    """Add each typer app the lab package declares; False when the lab package is not installed."""
    try:
        declared = distribution(LAB_DISTRIBUTION).entry_points.select(group=COMMANDS_GROUP)
    except PackageNotFoundError:
        return False
    for entry in declared:
        app.add_typer(entry.load(), name=entry.name)
    return bool(declared)


if not _add_lab_commands():
    register_lab_missing("lab", "The virtual lab: an inventory's hosts, switches and cables built on this machine.")
