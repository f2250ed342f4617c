"""What the emulated switch does to the real lab links: port MTU and admin state onto its
veths (``ip -batch``, one process for many ports), counters and link state from the kernel.

Counters are the veth's own (sysfs statistics). A port's egress drops happen in its tbf qdisc
(the lab's line rate), which the netdev counters do not see; a real switch counts them as
egress discards, so they are added to ``tx_dropped``. LLDP frames a port receives are control
traffic, never discards: see ``ControlFrameSink``.
"""

from __future__ import annotations

import ctypes
import json
import socket
import struct
import subprocess
from pathlib import Path

SYS = Path("/sys/class/net")
COUNTERS = ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors", "tx_errors", "rx_dropped",
            "tx_dropped", "multicast")


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def link_mtu(ifname: str) -> int | None:
    value = _read(SYS / ifname / "mtu")
    return int(value) if value.isdigit() else None


def link_up(ifname: str) -> bool:
    """Operational state: the veth is up and has carrier (its peer is up too)."""
    return _read(SYS / ifname / "operstate") == "up" or (
        _read(SYS / ifname / "carrier") == "1" and _read(SYS / ifname / "flags") not in ("", "0x1002")
    )


def admin_up(ifname: str) -> bool:
    flags = _read(SYS / ifname / "flags")
    return bool(flags) and int(flags, 16) & 1 == 1


def qdisc_drops(ifname: str) -> int:
    """Packets the port's qdiscs dropped (tbf queue full: the lab line rate was exceeded)."""
    try:
        proc = subprocess.run(["tc", "-s", "-j", "qdisc", "show", "dev", ifname], capture_output=True, text=True,
                              timeout=5, check=False)
        return sum(int(q.get("drops", 0)) for q in json.loads(proc.stdout or "[]") if q.get("root"))
    except (OSError, subprocess.TimeoutExpired, ValueError, TypeError):
        return 0


def counters(ifname: str) -> dict[str, int]:
    stats = SYS / ifname / "statistics"
    out = {}
    for name in COUNTERS:
        value = _read(stats / name)
        out[name] = int(value) if value.isdigit() else 0
    out["tx_dropped"] += qdisc_drops(ifname)
    return out


ETH_P_LLDP = 0x88CC
SO_ATTACH_FILTER = 26  # <asm-generic/socket.h>
ACCEPT_NOTHING = struct.pack("HBBI", 0x06, 0, 0, 0)  # classic BPF: "ret #0"


class ControlFrameSink:
    """A handler for the LLDP frames reaching the switch's ports that keeps none of them.

    Each port is a bridge port: the bridge passes link-local frames (LLDP) up to the port, the
    switch's lldpd reads them on a tap (ETH_P_ALL) and then, with no handler registered for their
    ethertype, the kernel counts every one in the port's ``rx_dropped``. An idle lab switch so
    showed one discard per second on each host port (the lab's LLDP interval) and smoke rightly
    failed on them. On a real switch the control plane consumes LLDP. One packet socket per port,
    of ethertype LLDP and with a filter that accepts nothing, is that handler: nothing is queued,
    lldpd still receives every frame, and real drops (a full backlog) stay counted.
    A port whose veth is re-created (a cable swap) is claimed again on its next read.
    """

    def __init__(self) -> None:
        self._sockets: dict[str, tuple[int, socket.socket]] = {}

    def claim(self, ifname: str) -> None:
        index = _read(SYS / ifname / "ifindex")
        held = self._sockets.get(ifname)
        if not index.isdigit() or (held is not None and held[0] == int(index)):
            return
        if held is not None:
            held[1].close()
        try:
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_LLDP))
            program = ctypes.create_string_buffer(ACCEPT_NOTHING)
            sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, struct.pack("HL", 1, ctypes.addressof(program)))
            sock.bind((ifname, ETH_P_LLDP))
        except OSError:
            self._sockets.pop(ifname, None)
            return
        self._sockets[ifname] = (int(index), sock)


def apply_links(settings: dict[str, tuple[int, bool]]) -> str:
    """Set ``{ifname: (mtu, up)}`` where it differs from the kernel's. Returns an error text or ''."""
    lines = []
    for ifname, (mtu, up) in settings.items():
        if not (SYS / ifname).exists():
            continue
        if link_mtu(ifname) != mtu:
            lines.append(f"link set dev {ifname} mtu {mtu}")
        if admin_up(ifname) != up:
            lines.append(f"link set dev {ifname} {'up' if up else 'down'}")
    if not lines:
        return ""
    result = subprocess.run(["ip", "-force", "-batch", "-"], input="\n".join(lines) + "\n", capture_output=True,
                            text=True, check=False)
    return result.stderr.strip() if result.returncode else ""
