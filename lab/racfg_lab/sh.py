"""Running the system tools the lab is made of (ip, tc, losetup, mount, nspawn ...).

Each lab step is a handful of commands; when one fails the user must see which command and
what it said, not a Python traceback. ``run`` raises LabCommandError carrying both.
"""

from __future__ import annotations

import logging
import shlex
import subprocess
from collections.abc import Sequence

from racfg.errors import CannotRunError

log = logging.getLogger("racfg_lab")


class LabCommandError(CannotRunError):
    """A system command the lab needs failed (exit 3)."""

    def __init__(self, argv: Sequence[str], returncode: int, output: str) -> None:
        text = output.strip().splitlines()
        tail = " | ".join(text[-3:]) if text else "no output"
        super().__init__(f"`{shlex.join(argv)}` failed with exit code {returncode}: {tail}")
        self.argv = list(argv)
        self.returncode = returncode
        self.output = output


def run(argv: Sequence[str], *, check: bool = True, input: str | None = None, timeout: float | None = 120,
        quiet: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (no shell), capture its output, raise LabCommandError on failure if ``check``."""
    if not quiet:
        log.debug("run: %s", shlex.join(argv))
    try:
        proc = subprocess.run(list(argv), input=input, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError as exc:
        raise CannotRunError(f"command not found: {argv[0]}") from exc
    except subprocess.TimeoutExpired as exc:
        raise CannotRunError(f"`{shlex.join(argv)}` did not finish within {timeout} s") from exc
    if check and proc.returncode != 0:
        raise LabCommandError(argv, proc.returncode, (proc.stderr or "") + (proc.stdout or ""))
    return proc


def ok(argv: Sequence[str]) -> bool:
    """Run for the side effect, ignoring failure (teardown of what may already be gone)."""
    return run(argv, check=False, quiet=True).returncode == 0
