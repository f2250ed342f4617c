"""The report on the terminal: colour and wrapping on a TTY, the plain table everywhere else.

Both views list the same lines in the same order (``racfg.results.table`` decides what is shown),
so what a person sees interactively is what CI logs. Text from results goes into rich as ``Text``
objects, never as markup, so a message holding ``[red]`` or brackets prints as written.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from racfg.console import console, is_tty
from racfg.errors import ExitCode
from racfg.results.model import Report, Status
from racfg.results.table import detail_lines, problem_lines, render_table, shown_results, skip_lines
from racfg.results.wording import STATUS_LABEL, by_target, clean, problem_views, title

STATUS_COLOUR = {Status.FAIL: "red", Status.ERROR: "dark_orange", Status.SKIP: "grey62", Status.INFO: "blue",
                 Status.PASS: "green"}
STATUS_STYLE = {s: f"bold {c}" if s in (Status.FAIL, Status.ERROR) else c for s, c in STATUS_COLOUR.items()}


def print_report(report: Report, *, verbose: bool = False, show_skips: bool = False) -> None:
    """Print ``report`` for a person (rich on a TTY) or a log (plain aligned lines otherwise)."""
    if not is_tty():
        print(render_table(report, verbose=verbose, show_skips=show_skips), end="")
        return
    out = console()
    out.print(Text(f"{title(report)} (started {report.started}, {report.elapsed:.1f} s)", style="bold"))
    views = problem_views(report)
    if views:
        out.print()
        out.print(Text(f"{len(views)} problem{'' if len(views) == 1 else 's'}:", style="bold red"))
        for number, view in enumerate(views, 1):
            for i, line in enumerate(problem_lines(number, view)):
                out.print(Text(line, style="bold" if i == 0 else "cyan" if "fix: " in line else ""))
    for group in by_target(report, outside_problems=True):
        out.print()
        heading = Text.assemble((clean(group.target), f"bold {STATUS_COLOUR[group.worst()]}"), f"  {group.tally()}")
        out.print(heading)
        listed, passes_folded = shown_results(group, verbose=verbose, show_skips=verbose or show_skips)
        table = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False)
        table.add_column("status", no_wrap=True)
        table.add_column("check", overflow="fold", max_width=56)
        table.add_column("detail", overflow="fold", ratio=1)
        for result in listed:
            detail = Text()
            for i, line in enumerate(detail_lines(result)):
                if i:
                    detail.append("\n")
                detail.append(line, style="cyan" if line.startswith("fix: ") else "")
            table.add_row(Text(f" {STATUS_LABEL[result.status]}", style=STATUS_STYLE[result.status]),
                          Text(clean(result.check)), detail)
        if passes_folded:
            noun = "check" if passes_folded == 1 else "checks"
            table.add_row(Text(f" {STATUS_LABEL[Status.PASS]}", style=STATUS_STYLE[Status.PASS]),
                          Text(f"{passes_folded} {noun} passed", style="dim"), Text(""))
        out.print(table)
    for line in [] if verbose or show_skips else skip_lines(report.results):
        out.print(Text(line, style=STATUS_COLOUR[Status.SKIP]))
    if report.notes:
        out.print()
        for note in report.notes:
            out.print(Text(f"note: {clean(note)}", style="yellow"))
    out.print()
    code = report.exit_code()
    colour = {ExitCode.OK: "green", ExitCode.FINDINGS: "red"}.get(code, STATUS_COLOUR[Status.ERROR])
    out.print(Text(report.summary_line(), style=f"bold {colour}"))
