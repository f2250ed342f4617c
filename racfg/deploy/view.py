"""What a person watches during a deploy: a live rich view on a TTY, plain lines otherwise."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from racfg.console import console, is_tty, print_table
from racfg.playbook import PlaybookTracker


def _status(h: Any) -> Text:
    if h.unreachable:
        return Text("unreachable", style="bold red")
    if h.failed:
        return Text("failed", style="bold red")
    if h.current == "done":
        return Text("done", style="green")
    return Text("running", style="cyan")


def live_renderable(tracker: PlaybookTracker, title: str) -> Group:
    """One line per host with its current task, a bar over the play's tasks and the counts."""
    with tracker.lock:
        total = max(tracker.total_tasks, tracker.tasks_started, 1)
        bar = ProgressBar(total=total, completed=min(tracker.tasks_started, total), width=40)
        totals = tracker.totals
        table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
        for column in ("host", "status", "ok", "changed", "failed", "unreach.", "current task"):
            table.add_column(column)
        for h in sorted(tracker.hosts.values(), key=lambda x: x.name):
            table.add_row(h.name, _status(h), str(h.ok), str(h.changed), str(h.failed), str(h.unreachable),
                          Text(h.current[:70], overflow="ellipsis"))
        head = Text.assemble((f"{title}  ", "bold"), f"task {tracker.tasks_started}/{total}  ",
                             (f"{tracker.play}", "dim"))
        counts = Text(f"ok={totals['ok']} changed={totals['changed']} failed={totals['failed']} "
                      f"unreachable={totals['unreachable']}")
    return Group(head, bar, counts, table)


class RunView:
    """Shows a running play: rich Live on a TTY, one plain line per change or failure otherwise."""

    def __init__(self, title: str, verbose: bool = False, to_stderr: bool = False, quiet: bool = False) -> None:
        self.title = title
        self.verbose = verbose
        self.quiet = quiet  # a caller (drift) that shows its own progress: nothing printed here
        self.stream = sys.stderr if to_stderr else sys.stdout
        self.tty = is_tty(self.stream) and not quiet
        self._live: Live | None = None
        self._print_lock = threading.Lock()

    def line_sink(self) -> Callable[[str], None] | None:
        """Where the tracker's event lines go: printed in plain mode, dropped under Live."""
        if (self.tty and not self.verbose) or self.quiet:
            return None

        def sink(text: str) -> None:
            with self._print_lock:
                if self._live is not None:
                    self._live.console.print(text, highlight=False, markup=False)
                else:
                    print(text, file=self.stream, flush=True)

        return sink

    def __enter__(self) -> RunView:
        return self

    def attach(self, tracker: PlaybookTracker) -> None:
        if self.tty:
            target = console() if self.stream is sys.stdout else Console(stderr=True, highlight=False)
            self._live = Live(live_renderable(tracker, self.title), console=target, refresh_per_second=4,
                              get_renderable=lambda: live_renderable(tracker, self.title), transient=False)
            self._live.start()
        elif not self.quiet:
            print(f"{self.title}: running ...", file=self.stream, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def print_recap(rows: list[dict[str, Any]], title: str = "Recap") -> None:
    """The per-host counts, then one line per role and host that could not act and why (a role
    that reports "skipped: ..." did so because the inventory allows it; one that may not skip fails)."""
    print_table(title, ["host", "ok", "changed", "failed", "unreachable", "skipped", "seconds"],
                [[r["host"], r["ok"], r["changed"], r["failed"], r["unreachable"], r["skipped"],
                  f"{r['seconds']:.1f}"] for r in rows])
    skips = [[r["host"], s["role"] or "-", s["reason"]] for r in rows for s in r.get("skips", [])]
    if skips:
        print_table("Skipped with reason", ["host", "role", "reason"], skips)
