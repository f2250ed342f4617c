"""The ``racfg`` command: one Typer app; each subcommand lives in its own module."""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import NoReturn

import typer

from racfg.errors import EXIT_CODES_HELP, ExitCode, RacfgError
from racfg.paths import private_files

app = typer.Typer(
    name="racfg",
    help=(
        "Deploy, validate and measure an AI reference-architecture cluster (DGX + WekaFS over one "
        "100G Ethernet or InfiniBand fabric) from one declarative inventory.\n\n" + EXIT_CODES_HELP
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_state = {"debug": False}

# The commands that write the state directory (records, reports, baselines, locks): their process
# creates files 0600 and directories 0700 (racfg.paths.private_files). `demo` does so for its steps
# after `lab up` (the lab's image and hosts keep their usual modes); `check`, `render` and the lab's
# commands write no record.
RECORDING_COMMANDS = frozenset({"deploy", "validate", "drift", "gate", "smoke", "lock"})


@app.callback()
def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", envvar="RACFG_DEBUG", help="Show tracebacks for errors."),
) -> None:
    _state["debug"] = debug
    if ctx.invoked_subcommand in RECORDING_COMMANDS:
        ctx.with_resource(private_files())


def debug_enabled() -> bool:
    return _state["debug"] or os.environ.get("RACFG_DEBUG", "") not in ("", "0", "false")


def fail(error: RacfgError) -> NoReturn:
    """Print a human error (no traceback) and exit with its code."""
    typer.echo(f"racfg: error: {error}", err=True)
    raise typer.Exit(int(error.exit_code))


def invoke() -> int:
    """Run the app, mapping racfg errors to exit codes and hiding tracebacks unless --debug."""
    _interruptible()
    try:
        code = app(standalone_mode=False)
    except RacfgError as error:
        if debug_enabled():
            raise
        typer.echo(f"racfg: error: {error}", err=True)
        return int(error.exit_code)
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        typer.echo("racfg: interrupted", err=True)
        return 130
    except KeyboardInterrupt:
        typer.echo("racfg: interrupted", err=True)
        return 130
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    except Exception as exc:  # a bug or an environment problem: say so, exit 3
        if debug_enabled():
            raise
        if _is_click_exception(exc):
            exc.show()  # type: ignore[attr-defined]
            return int(getattr(exc, "exit_code", ExitCode.USAGE))
        typer.echo(f"racfg: internal error: {type(exc).__name__}: {exc} (rerun with --debug for details)",
                   err=True)
        return int(ExitCode.CANNOT_RUN)
    return code if isinstance(code, int) else 0


def _interruptible() -> None:
    """Make SIGINT raise KeyboardInterrupt in every command, which is how they stop and clean up
    (smoke its remote load, validate its sessions; deploy adds its own handler, stop_on_signals).

    Why: a process started as a background job (``racfg smoke ... &`` in a script, nohup) starts
    with SIGINT ignored, and Python then leaves it ignored: ``kill -INT`` was lost and smoke's load
    ran to its end on every host. Only the main thread may install a handler.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _is_click_exception(exc: BaseException) -> bool:
    """Typer may vendor click (typer._click) or use click itself: match either by name."""
    return any(cls.__name__ == "ClickException" for cls in type(exc).__mro__)


def main() -> None:
    sys.exit(invoke())
