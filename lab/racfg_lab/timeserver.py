"""The lab's time source: an NTP server on the management gateway address.

A site's hosts synchronise to the site's time sources, and validate checks that they do. In the
lab the inventory names the management gateway (198.18.0.1 in lab.yaml) as its time source, so
the lab answers there: a small SNTP server (RFC 4330 server mode) serving this machine's clock
at stratum 2. It is real NTP on the wire: the hosts' chronyd polls it and synchronises (with -x,
tracking without steering the container's clock). One process per lab, started by ``lab up``
after the management bridge, stopped by ``lab down``; run as every lab service is (racfg_lab.service).

Run as ``python -m racfg_lab.timeserver ADDRESS SITE`` (the site only labels the process).
"""

from __future__ import annotations

import signal
import socket
import struct
import sys
import time
from pathlib import Path

from racfg_lab.service import LabService

NTP_EPOCH_OFFSET = 2208988800  # seconds from 1900-01-01 (NTP era 0) to 1970-01-01
MARKER = "racfg_lab.timeserver"


def _ntp_time(t: float) -> tuple[int, int]:
    seconds = int(t) + NTP_EPOCH_OFFSET
    return seconds & 0xFFFFFFFF, int((t - int(t)) * 2**32) & 0xFFFFFFFF


def reply(request: bytes, received: float, now: float) -> bytes | None:
    """The server-mode answer to a client request, or None for anything that is not one."""
    if len(request) < 48:
        return None
    first = request[0]
    version, mode = (first >> 3) & 0x7, first & 0x7
    if mode != 3 or version not in (3, 4):
        return None
    header = (0 << 6) | (version << 3) | 4  # leap 0 (synchronised), same version, mode 4 (server)
    packet = struct.pack(
        "!BBbbII4sIIIIIIII",
        header, 2, request[2], -20,  # stratum 2, client's poll, precision ~1 us
        0, 0x00000100,  # root delay 0, root dispersion ~4 ms (16.16 fixed point)
        b"LAB\x00",  # reference id
        *_ntp_time(now - 16),  # reference time: "last set" shortly before
        *struct.unpack("!II", request[40:48]),  # originate = the client's transmit timestamp
        *_ntp_time(received), *_ntp_time(time.time()),
    )
    return packet


def serve(address: str, port: int = 123) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((address, port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        data, peer = sock.recvfrom(512)
        received = time.time()
        answer = reply(data, received, received)
        if answer is not None:
            sock.sendto(answer, peer)


SERVICE = LabService("timeserver", MARKER, "time server")


def start(site_dir: Path, address: str) -> int:
    """Start the lab's time server on ``address`` (idempotent: a running one is kept)."""
    return SERVICE.start(site_dir, address)


if __name__ == "__main__":
    serve(sys.argv[1])
