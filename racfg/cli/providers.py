"""Where commands learn how to reach a site beyond its inventory: connection providers.

The virtual lab is the one provider today. It is a distribution of its own (``racfg-lab``, import
package ``racfg_lab``, ``lab/`` in racfg's repository), so the product wheel carries no emulator,
image builder or server. This is the only module of racfg that imports it, and only inside
functions (the lab's ``racfg lab`` comes through an entry point: cli/lab_cmd.py). Deploy, validate,
drift and smoke receive the answer as ``ConnectionOverrides`` and never ask the lab themselves, so
the product runs the same with or without the lab installed. ``racfg lab`` and ``racfg demo`` come
with the lab package; without it they say how to install it and exit 3 (``register_lab_missing``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib.util import find_spec
from pathlib import Path

from racfg.cli.app import app
from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.inventory import Cluster

LAB_PACKAGE = "racfg_lab"
LAB_DISTRIBUTION = "racfg-lab"
LAB_INSTALL_HINT = f"pip install {LAB_DISTRIBUTION}; in a racfg checkout: make setup, or pip install -e lab"


def lab_installed() -> bool:
    """Whether the lab package is there, found without importing it (every command asks, at start)."""
    return find_spec(LAB_PACKAGE) is not None


def register_lab_missing(name: str, help_text: str) -> None:
    """``racfg NAME`` for a racfg without the lab package: any arguments, ``--help`` included, get
    one line saying how to install it and exit 3 (could not run: a prerequisite is missing)."""

    def missing() -> None:
        raise CannotRunError(f"{name}: the virtual lab (package {LAB_DISTRIBUTION}) is not installed",
                             hint=LAB_INSTALL_HINT)

    missing.__doc__ = f"{help_text} (Needs the {LAB_DISTRIBUTION} package: not installed.)"
    app.command(name, add_help_option=False,
                context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(missing)


def overrides_for(cluster: Cluster) -> ConnectionOverrides:
    """The lab's overrides when a lab of this cluster's site is up; NO_OVERRIDES otherwise."""
    if not lab_installed():  # a racfg without the lab package: nothing overrides the inventory
        return NO_OVERRIDES
    from racfg_lab.api import connection_overrides

    return connection_overrides(cluster.name, cluster)


def announce_substitutions(overrides: ConnectionOverrides, to_stderr: bool = False) -> None:
    """Say once, before anything runs, what the provider replaces (the lab's inbox OFED for MLNX_OFED ...),
    so a user never mistakes a lab run for a run of the inventory as written. ``to_stderr`` keeps a
    machine-readable stdout (``--format json``) clean."""
    import sys

    from racfg.console import say

    for line in overrides.substitutions:
        if to_stderr:
            print(f"{overrides.provider}: {line}", file=sys.stderr)
        else:
            say(f"{overrides.provider}: {line}")


def lab_up(inventory: Path, progress: Callable[[str], None]) -> bool:
    """Build (or confirm) the lab of ``inventory``; True when something was built."""
    from racfg_lab import up

    return up(inventory, progress=progress).changed


def lab_down(inventory: Path) -> None:
    from racfg_lab import down

    down(inventory)


def lab_passwords_for_unset_env(cluster: Cluster) -> tuple[list[str], list[str]]:
    """Fill each unset ``password_env`` of the inventory's switches with the lab switch's generated password,
    in this process only, and say so. Returns the substitution lines and, for the other commands,
    the shell line that exports each such variable from the lab's password file.

    An example written for real switches names an environment variable for each switch password;
    the lab's switch accepts only the password the lab generated, and the product never replaces
    an inventory's own credential source. `racfg demo` is the one command meant to run any
    inventory on the lab as is, so it, not the product, hands the lab's password to the variable;
    for validate, drift and smoke the user sets the variable, and the exact line is printed at the
    end so that nobody has to find the variable's name or the lab's password file.
    """
    from racfg_lab import switch_password
    from racfg_lab.state import site_dir
    from racfg_lab.switches import password_path, switch_dir

    lines, exports = [], []
    for name, switch in cluster.switches.items():
        var = switch.spec.credentials.password_env
        if var and not os.environ.get(var):
            os.environ[var] = switch_password(cluster.name, name)
            lines.append(f"switch {name} password: {var} is not set: this run uses the lab switch's generated "
                         "password")
            exports.append(f"export {var}=$(cat {password_path(switch_dir(site_dir(cluster.name), name))})")
    return lines, exports
