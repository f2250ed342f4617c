"""Command-line interface. Importing the command modules registers them on the app."""

from racfg.cli import demo_cmd as _demo_cmd  # noqa: F401
from racfg.cli import deploy_cmd as _deploy_cmd  # noqa: F401
from racfg.cli import drift_cmd as _drift_cmd  # noqa: F401
from racfg.cli import gate_cmd as _gate_cmd  # noqa: F401
from racfg.cli import history_cmd as _history_cmd  # noqa: F401
from racfg.cli import hostkey_cmd as _hostkey_cmd  # noqa: F401
from racfg.cli import inventory_cmd as _inventory_cmd  # noqa: F401
from racfg.cli import lab_cmd as _lab_cmd  # noqa: F401
from racfg.cli import lock_cmd as _lock_cmd  # noqa: F401
from racfg.cli import smoke_cmd as _smoke_cmd  # noqa: F401
from racfg.cli import validate_cmd as _validate_cmd  # noqa: F401
from racfg.cli.app import app, invoke, main

__all__ = ["app", "invoke", "main"]
