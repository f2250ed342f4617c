"""A lab switch counts the LLDP frames it receives as control traffic, never as discards.

Found running the full examples (issue 13): every host port of a lab switch showed one rx discard
per second (the lab's LLDP interval), so `racfg smoke` failed every switch port on an idle
fabric. The kernel, not the lab's wiring, decides this, so the test builds the smallest real
case (a namespace with a bridge port, LLDP frames sent into it, a tap reading them as the
switch's lldpd does) rather than a whole lab, and checks both halves: no discard counted, and
the tap still receives every frame.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from labsupport import prerequisite_problem

FRAMES = 5
LLDP_FRAME = "0180c200000e" + "020000000001" + "88cc" + "00" * 50

# Runs inside the switch-side namespace: the emulated switch's sink, a tap (lldpd reads LLDP on an
# ETH_P_ALL socket), FRAMES frames sent from the host end, then the port's rx_dropped and what the tap got.
SWITCH_SIDE = f"""
import socket, subprocess, sys
from racfg_lab.switchcli.dataplane import ControlFrameSink
sink = ControlFrameSink()
sink.claim("swp1")
tap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
tap.bind(("swp1", 0))
tap.settimeout(2)
subprocess.run(["ip", "netns", "exec", sys.argv[1], sys.executable, "-c", sys.argv[2]], check=True)
got = 0
try:
    while got < {FRAMES}:
        got += tap.recv(2048)[12:14] == bytes.fromhex("88cc")
except TimeoutError:
    pass
print(open("/sys/class/net/swp1/statistics/rx_dropped").read().strip(), got)
"""
HOST_SIDE = f"""
import socket
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("data0", 0))
for _ in range({FRAMES}):
    s.send(bytes.fromhex("{LLDP_FRAME}"))
"""


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@pytest.fixture
def bridge_port() -> Iterator[tuple[str, str]]:
    """A switch namespace with a bridge and port swp1, cabled to a host namespace's data0; removed after."""
    problem = prerequisite_problem()
    if problem:
        pytest.fail(f"the lab cannot run here: {problem}")
    tag = uuid.uuid4().hex[:6]
    switch, host = f"rf-t{tag}.sw", f"rf-t{tag}.host"
    try:
        ip("netns", "add", switch)
        ip("netns", "add", host)
        ip("-n", switch, "link", "add", "swp1", "type", "veth", "peer", "name", "data0", "netns", host)
        ip("-n", switch, "link", "add", "br0", "type", "bridge")
        ip("-n", switch, "link", "set", "swp1", "master", "br0")
        for ns, dev in ((switch, "br0"), (switch, "swp1"), (host, "data0")):
            ip("-n", ns, "link", "set", dev, "up")
        yield switch, host
    finally:
        for ns in (switch, host):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)


@pytest.mark.lab
def test_lldp_frames_are_not_counted_as_discards(bridge_port: tuple[str, str]) -> None:
    switch, host = bridge_port
    result = subprocess.run(["ip", "netns", "exec", switch, sys.executable, "-c", SWITCH_SIDE, host, HOST_SIDE],
                            capture_output=True, text=True, timeout=60, check=True,
                            cwd=Path(__file__).resolve().parents[2])
    dropped, received = (int(v) for v in result.stdout.split())
    assert received == FRAMES, f"the switch's LLDP tap got {received} of {FRAMES} frames"
    assert dropped == 0, f"{dropped} LLDP frames counted as rx discards on the switch port"
