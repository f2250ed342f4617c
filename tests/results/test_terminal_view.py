"""The terminal view: plain aligned lines for logs and pipes, rich on a TTY, same content in both."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from racfg.results import Status, print_report, render_report
from racfg.results import terminal as terminal_module
from racfg.results.problems import Problem
from racfg.results.table import render_table
from racfg.results.wording import clean, headline
from tests.results.samples import awkward_report, realistic_report


def _plain(report_text: str) -> list[str]:
    return report_text.rstrip("\n").split("\n")


def test_table_shows_each_failure_message_and_fix_on_the_next_line() -> None:
    report = realistic_report()
    lines = _plain(render_report(report, "table"))
    for result in report.results:
        if result.status is not Status.FAIL:
            continue
        (index,) = [i for i, line in enumerate(lines) if result.check in line]
        assert lines[index].split()[0] == "FAIL"
        assert lines[index].endswith(result.message)
        assert lines[index + 1].strip() == f"fix: {result.fix}"


def test_table_says_why_for_skips_and_what_for_errors_and_counts_passes() -> None:
    report = realistic_report()
    text = render_table(report, show_skips=True)
    lines = _plain(text)
    for result in report.results:
        if result.status in (Status.SKIP, Status.ERROR):
            (line,) = [line for line in lines if result.check in line]
            assert line.split()[0] == result.status.name
            assert line.endswith(result.message)
    assert "  PASS   9 checks passed" in text  # dgx02: 10 host checks minus its failing one
    assert "dgx02/os/kernel" not in text  # passes folded unless verbose


def test_table_summarises_skips_by_reason_with_their_targets_and_count_by_default() -> None:
    text = render_report(realistic_report(), "table")
    assert "dgx01/gpu/driver" not in text
    assert "  SKIP   no GPUs in the lab: nvidia-smi cannot run (2: dgx01, dgx02)" in text
    assert "skipped, by reason (5 checks; --show-skips lists each):" in text


def test_table_shows_problems_first_with_their_symptoms_folded_under_them() -> None:
    report = realistic_report()
    mtu = next(r for r in report.results if r.check == "dgx02/network/mtu[data0]")
    sysctl = next(r for r in report.results if r.check == "dgx02/os/sysctl[net.ipv4.tcp_timestamps]")
    report.problems = [Problem("host_mtu:dgx02:data0", "host_mtu", "dgx02", "dgx02:data0 MTU 1500", mtu.fix,
                               mtu.check, (sysctl.check,))]
    lines = _plain(render_report(report, "table"))
    start = lines.index("1 problem:")
    assert lines[start + 1] == "  1. dgx02:data0 MTU 1500 [host_mtu:dgx02:data0, explains 1 more]"
    assert lines[start + 2] == f"     fix: {mtu.fix}"
    assert lines[start + 3].split() == ["FAIL", mtu.check, *mtu.message.split()]
    assert lines[start + 4].split()[:2] == ["FAIL", sysctl.check]
    assert sum(mtu.check in line for line in lines) == 1, "a result a problem holds is shown once, there"


def test_table_groups_targets_failures_first_and_ends_with_notes_then_summary() -> None:
    report = realistic_report()
    lines = _plain(render_report(report, "table"))
    headings = [line.split(":")[0] for line in lines if line and not line.startswith((" ", "racfg ", "note:"))]
    assert headings[:2] == ["dgx02", "sw1"]  # the targets with failures come first
    assert lines[-1] == report.summary_line()
    assert lines[-3] == f"note: {report.notes[0]}"


def test_table_keeps_awkward_text_readable_and_multiline_text_aligned() -> None:
    report = awkward_report()
    lines = _plain(render_report(report, "table"))
    assert "\x1b" not in "\n".join(lines)
    (index,) = [i for i, line in enumerate(lines) if 'sw1/port/mtu["Eth1/1", <x>]' in line]
    column = lines[index].index("He said")
    assert lines[index + 1].index("wrote:") == column
    assert lines[index + 2].index("fix: ") == column
    assert lines[index + 1].endswith("[red]no[/red] \\x1b[0m")


def test_plain_print_report_is_the_table_and_verbose_lists_passes(capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RACFG_PLAIN", "1")
    report = realistic_report()
    print_report(report)
    assert capsys.readouterr().out == render_report(report, "table")
    print_report(report, verbose=True)
    out = capsys.readouterr().out
    for result in report.results:
        assert result.check in out
    assert out.rstrip("\n").split("\n")[-1] == report.summary_line()


def _tty_output(report_fn, monkeypatch: pytest.MonkeyPatch, *, verbose: bool = False) -> str:
    """What print_report shows on a terminal: a real rich console 140 columns wide, recorded as text."""
    recorder = Console(file=io.StringIO(), record=True, width=140, force_terminal=True, color_system="truecolor")
    monkeypatch.setattr(terminal_module, "is_tty", lambda: True)
    monkeypatch.setattr(terminal_module, "console", lambda: recorder)
    print_report(report_fn(), verbose=verbose)
    return recorder.export_text()


def test_tty_view_has_the_same_content_in_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    report = awkward_report()
    out = _tty_output(awkward_report, monkeypatch)
    flat = " ".join(out.split())
    for result in report.results:
        if result.status is Status.PASS:
            continue
        assert " ".join(clean(headline(result)).split()) in flat
        if result.fix:
            assert " ".join(f"fix: {clean(result.fix)}".split()) in flat
    assert "[red]no[/red]" in out  # shown as written, not taken as rich markup
    assert "1 check passed" in out
    lines = out.rstrip("\n").split("\n")
    assert lines[-1] == report.summary_line()
    assert any(line.startswith("note: lab run:") for line in lines[:-1])


def test_tty_view_verbose_lists_every_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _tty_output(realistic_report, monkeypatch, verbose=True)
    for result in realistic_report().results:
        assert result.check in out
    assert "checks passed" not in out
