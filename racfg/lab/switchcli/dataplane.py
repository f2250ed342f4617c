"""What the emulated switch does to the real lab links: port MTU and admin state onto its
veths (``ip -batch``, one process for many ports), counters and link state from the kernel.

Counters are the veth's own (sysfs statistics). A port's egress drops happen in its tbf qdisc
(the lab's line rate), which the netdev counters do not see; a real switch counts them as
egress discards, so they are added to ``tx_dropped``.
"""

from __future__ import annotations

import json
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
