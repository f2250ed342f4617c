"""The receiving NICs' window (racfg.smoke.window) on tables: its place in a load, the reader's shell and
the parse of what it printed, and a step judged on it rather than on the processes' sum."""

from __future__ import annotations

import subprocess

import pytest

from racfg.smoke.measured import LoadResult
from racfg.smoke.measurement_error import MeasurementError
from racfg.smoke.phases.read_scaling import StepMeasurement
from racfg.smoke.smoke_plan import SHAPER_FRAMING, Link, tcp_ceiling
from racfg.smoke.window import HEADER_BYTES, Window, parse_reads, reader_argv

LINKS = [Link("dgx01", "dgx", nic, "10.1.2.1/24", "leaf1", f"1/{i}", 250.0, "lab shaper", 9000, SHAPER_FRAMING)
         for i, nic in enumerate(("enp5s0", "enp6s0"), start=1)]
PAYLOAD = (9000 - 52) / (9000 + HEADER_BYTES)


@pytest.mark.parametrize(("duration", "omit", "window"), [
    (3, 1, Window(2.0, 3.8)),    # the lab's: after the warm-up and a second of late starts, before the first end
    (10, 2, Window(3.0, 11.8)),  # a real cluster's
    (2, 1, Window(2.0, 2.8)),    # shorter than a second of window: none
])
def test_the_window_sits_inside_every_process_s_measured_seconds(duration: int, omit: int, window: Window) -> None:
    expected = window if window.closes - window.opens >= 1.0 else None
    assert Window.for_load(duration, omit) == expected


def test_the_reader_reads_with_builtins_only_between_two_clock_reads(tmp_path) -> None:
    """Run as it runs on a host, on files standing in for /proc/uptime and the NIC counters."""
    argv = reader_argv(["enp5s0", "enp6s0"], Window(0.0, 0.05))
    script = argv[2]
    assert argv[:2] == ["sh", "-c"] and "date" not in script and "cat " not in script
    assert script.count("read ta x < /proc/uptime") == 2
    fake = script.replace("/proc/uptime", str(tmp_path / "uptime")).replace("/sys/class/net/", str(tmp_path) + "/")
    for nic, value in (("enp5s0", "1000"), ("enp6s0", "2000")):
        (tmp_path / nic / "statistics").mkdir(parents=True)
        (tmp_path / nic / "statistics" / "rx_bytes").write_text(value + "\n")
    (tmp_path / "uptime").write_text("12.50 40.00\n")
    out = subprocess.run(["sh", "-c", fake], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["12.50 12.50 1000 2000"] * 2


def test_each_link_s_rate_is_its_payload_over_the_middle_of_the_clock_reads() -> None:
    text = "100.00 100.02 0 5000\n102.00 102.02 62500000 5000\n"  # 2.0 s apart; enp6s0 took in nothing
    rates = parse_reads(text, LINKS)
    assert rates["dgx01:enp5s0"] == pytest.approx(62500000 * 8 * PAYLOAD / 2.0)
    assert rates["dgx01:enp6s0"] == 0.0


@pytest.mark.parametrize("text", [
    "",                                           # the reader was killed before it printed
    "100.00 100.02 0 5000\n",                     # one read only
    "100.00 100.02 0\n102.00 102.02 10\n",        # a NIC missing
    "102.00 102.02 0 0\n100.00 100.02 10 10\n",   # out of order
    "100.00 100.02 0 x\n102.00 102.02 10 10\n",   # not a number (sh: cannot open ...)
])
def test_output_that_is_not_two_reads_is_an_error(text: str) -> None:
    with pytest.raises(MeasurementError):
        parse_reads(text, LINKS)


def test_a_step_is_what_its_receiving_links_took_in_not_the_processes_sum() -> None:
    """The ra-leafspine lab at 1 Gbit/s per link: the processes of 16 clients added up to 21.5 Gbit/s
    (counted as the 15.9 its links carry, E = 1.000: a false pass), while the clients' NICs took in 7.7."""
    capacity = 16 * 1000e6 * tcp_ceiling(9000, SHAPER_FRAMING)
    hosts = [f"dgx{i:02d}" for i in range(1, 17)]
    received = {f"{host}:enp5s0": 7.7e9 / 16 for host in hosts}
    step = StepMeasurement(16, hosts, LoadResult("read", [], 15.0, received), 0.0, capacity_bits=capacity)
    assert step.measured == pytest.approx(7.7e9) and step.total == pytest.approx(7.7e9) and step.together
    unread = StepMeasurement(16, hosts, LoadResult("read", [], 15.0, None), 0.0, capacity_bits=capacity)
    assert unread.measured == unread.load.total == 0.0  # no window read: the processes' sum, as before
