"""Terminal output: rich tables on a TTY, plain aligned lines otherwise (CI logs, pipes).

Every command prints tables through here so that `racfg ... | grep` and CI logs read as well
as an interactive terminal does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console
from rich.table import Table


def is_tty(stream: TextIO | None = None) -> bool:
    """True when ``stream`` (default stdout) is a terminal and the user did not ask for plain output."""
    if os.environ.get("RACFG_PLAIN") not in (None, "", "0"):
        return False
    return (stream or sys.stdout).isatty()


_console: Console | None = None


def console() -> Console:
    global _console
    if _console is None:
        _console = Console(highlight=False, soft_wrap=not is_tty())
    return _console


def print_table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A table: rich on a TTY, otherwise a title line and left-aligned columns."""
    if is_tty():
        table = Table(title=title, title_justify="left", show_lines=False)
        for column in columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*("" if cell is None else str(cell) for cell in row))
        console().print(table)
        return
    text_rows = [[str(c) for c in columns]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in text_rows) for i in range(len(columns))]
    if title:
        print(title)
    for i, row in enumerate(text_rows):
        print("  " + "  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if i == 0:
            print("  " + "  ".join("-" * w for w in widths))


def say(text: str, style: str | None = None) -> None:
    """A line of text, styled on a TTY only."""
    if is_tty():
        console().print(text, style=style)
    else:
        print(text)


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(("" if c is None else str(c)).replace("|", "\\|") for c in row) + " |")
    return "\n".join(lines)
