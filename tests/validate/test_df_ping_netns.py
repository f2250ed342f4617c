"""The path matrix's DF ping tests the path as it is now, not the path MTU the host learned earlier
(racfg.validate.probe.DF_PING), on real kernels: three network namespaces on this machine, a host, a
router and a storage node, the router's link to the storage node at MTU 1500 first. A DF ping at 9000
then teaches the host a path MTU of 1500 (the router's ICMP "fragmentation needed"); with the link
raised to 9000 (the fabric repaired), iputils' ``ping -M do`` still fails for ten minutes on that
learned value, while DF_PING passes, and fails again when the link really is at 1500."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest

from racfg.validate.probe import DF_PING

pytestmark = pytest.mark.lab

TAG = f"rdf{os.getpid() % 100000}"
HOST, ROUTER, STORE = f"{TAG}h", f"{TAG}r", f"{TAG}s"


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=check, timeout=30)


def inside(ns: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return sh("ip", "netns", "exec", ns, *argv, check=check)


@pytest.fixture(scope="module")
def routed() -> Iterator[None]:
    """host 10.91.1.2 (mtu 9000) -- 10.91.1.1 router 10.91.2.1 (mtu 1500) -- 10.91.2.2 storage."""
    made: list[str] = []
    try:
        for ns in (HOST, ROUTER, STORE):
            sh("ip", "netns", "add", ns)
            made.append(ns)
        sh("ip", "link", "add", f"{TAG}a", "netns", HOST, "type", "veth", "peer", "name", f"{TAG}b", "netns", ROUTER)
        sh("ip", "link", "add", f"{TAG}c", "netns", ROUTER, "type", "veth", "peer", "name", f"{TAG}d", "netns", STORE)
        for ns, dev, address, mtu in ((HOST, "a", "10.91.1.2/24", 9000), (ROUTER, "b", "10.91.1.1/24", 9000),
                                      (ROUTER, "c", "10.91.2.1/24", 1500), (STORE, "d", "10.91.2.2/24", 1500)):
            inside(ns, "ip", "link", "set", f"{TAG}{dev}", "mtu", str(mtu), "up")
            inside(ns, "ip", "addr", "add", address, "dev", f"{TAG}{dev}")
        inside(ROUTER, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
        inside(HOST, "ip", "route", "add", "10.91.2.0/24", "via", "10.91.1.1")
        inside(STORE, "ip", "route", "add", "10.91.1.0/24", "via", "10.91.2.1")
        yield
    finally:
        for ns in made:
            sh("ip", "netns", "del", ns, check=False)  # takes its veth ends with it


def df_ping(size: int) -> int:
    return inside(HOST, "python3", "-c", DF_PING, "10.91.2.2", str(size), check=False).returncode


def ping_m_do(size: int) -> subprocess.CompletedProcess[str]:
    return inside(HOST, "ping", "-n", "-M", "do", "-s", str(size), "-c", "2", "-i", "0.2", "-W", "2",
                  "10.91.2.2", check=False)


def set_far_mtu(mtu: int) -> None:
    inside(ROUTER, "ip", "link", "set", f"{TAG}c", "mtu", str(mtu))
    inside(STORE, "ip", "link", "set", f"{TAG}d", "mtu", str(mtu))


def test_a_learned_path_mtu_is_not_the_path(routed: None):
    assert df_ping(1472) == 0  # the path works at 1500
    assert df_ping(8972) == 1  # the router drops a 9000-byte DF packet (and tells the host)
    assert ping_m_do(8972).returncode != 0
    assert "mtu 1500" in inside(HOST, "ip", "-o", "route", "get", "10.91.2.2").stdout  # learned
    set_far_mtu(9000)  # the fabric repaired
    try:
        assert ping_m_do(8972).returncode != 0  # refused on the learned value, which the host still holds
        assert "mtu 1500" in inside(HOST, "ip", "-o", "route", "get", "10.91.2.2").stdout
        assert df_ping(8972) == 0  # the path as it is now carries 9000
    finally:
        set_far_mtu(1500)
    assert df_ping(8972) == 1  # and a path at 1500 still fails, learned value or not


def test_a_packet_over_the_nics_own_mtu_fails(routed: None):
    assert df_ping(9000) == 1  # 9028 bytes on a 9000 NIC: refused at the host, as ping -M do refuses it


def raw_icmp_socket(pid: int) -> tuple[int, int]:
    """(bytes queued, packets dropped) of the raw ICMP socket ``pid`` holds, from HOST's /proc/net/raw."""
    inodes = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    for line in inside(HOST, "cat", "/proc/net/raw").stdout.splitlines()[1:]:
        fields = line.split()
        if f"socket:[{fields[9]}]" in inodes:
            return int(fields[4].split(":")[1], 16), int(fields[-1])
    raise AssertionError(f"no raw socket of {pid} in {HOST}")


def test_a_df_ping_run_late_keeps_its_replies_while_jumbo_icmp_floods_the_host(routed: None):
    """A DF ping the CPUs do not run for a while (stopped here) keeps the replies that arrive meanwhile:
    other hosts' jumbo echo requests never enter its socket, and 60 jumbo replies to the host's other
    pings (about 1 MB, five times the default socket buffer) are queued, none dropped."""
    proc = subprocess.Popen(["ip", "netns", "exec", HOST, "python3", "-c", DF_PING, "10.91.1.99", "8972"])
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                raw_icmp_socket(proc.pid)
                break
            except (AssertionError, FileNotFoundError):
                assert time.monotonic() < deadline, "the DF ping opened no raw socket"
                time.sleep(0.05)
        os.kill(proc.pid, signal.SIGSTOP)
        inside(ROUTER, "ping", "-n", "-q", "-c", "60", "-i", "0.002", "-s", "8972", "10.91.1.2")
        assert raw_icmp_socket(proc.pid) == (0, 0)  # echo requests: filtered out
        inside(HOST, "ping", "-n", "-q", "-c", "60", "-i", "0.002", "-s", "8972", "10.91.1.1")
        queued, dropped = raw_icmp_socket(proc.pid)
        assert dropped == 0 and queued > 212992, (queued, dropped)  # more than a default buffer, all kept
    finally:
        proc.kill()
        proc.wait(timeout=10)
