"""What a routed lab switch's layer-3 config does to its namespace: forwarding, routed ports, VLAN
interfaces and their addresses. Run by the switch CLI (inside the namespace) after every change.

A switchport is a veth in the namespace's bridge ``br0``; ``no switchport`` takes it out of the
bridge, so it is a routed interface of the namespace and its address is the kernel's. A VLAN
interface's address goes on the bridge itself: the hosts of a leaf reach their gateway there.
Lab substitution: the lab's kernels cannot be relied on for VLAN-aware bridges or VLAN devices
(this machine's has neither: "Operation not supported" / "Unknown device type"), so every
switchport of a lab switch is in one broadcast domain whatever its access VLAN; the VLANs are
kept and shown in the config. ``ip routing`` is the namespace's ``net.ipv4.ip_forward``.
Everything is reconciled against the kernel (what is already right is left alone), so applying
the same config twice changes nothing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from racfg_lab.switchcli.routing import RoutingConfig

BRIDGE = "br0"
# An ISL switchport's bridge-port setting: it never forwards to another ISL (racfg_lab.routed says why).
ISOLATED = ("type", "bridge_slave", "isolated", "on")
FORWARDING = Path("/proc/sys/net/ipv4/ip_forward")
SYS = Path("/sys/class/net")


def _master(ifname: str) -> str | None:
    link = SYS / ifname / "master"
    return link.resolve().name if link.exists() else None


def _addresses() -> dict[str, set[str]]:
    proc = subprocess.run(["ip", "-j", "-4", "addr", "show"], capture_output=True, text=True, check=False)
    try:
        links = json.loads(proc.stdout or "[]")
    except ValueError:
        return {}
    return {link["ifname"]: {f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", [])} for link in links}


def plan(routing: RoutingConfig, ports: dict[str, str], current: dict[str, set[str]],
         masters: dict[str, str | None], isls: frozenset[str] = frozenset()) -> list[str]:
    """The ``ip -batch`` lines that bring the namespace to ``routing``; ``ports``: cabled port ->
    its veth; ``current``: addresses by device; ``masters``: each veth's bridge (None when routed);
    ``isls``: the veths cabled to another switch, isolated when they become switchports again.
    Pure, so that what the kernel is told is unit-tested."""
    lines: list[str] = []
    wanted: dict[str, set[str]] = {BRIDGE: {a for a in routing.svis.values() if a}}
    for port, ifname in sorted(ports.items()):
        routed = port in routing.routed_ports
        if routed and masters.get(ifname) is not None:
            lines.append(f"link set dev {ifname} nomaster")
        elif not routed and masters.get(ifname) != BRIDGE:
            lines.append(f"link set dev {ifname} master {BRIDGE}")
            if ifname in isls:
                lines.append(f"link set dev {ifname} {' '.join(ISOLATED)}")
        wanted[ifname] = {routing.routed_ports[port]} if routed and routing.routed_ports[port] else set()
    for dev, addresses in sorted(wanted.items()):
        have = current.get(dev, set())
        lines += [f"address del {a} dev {dev}" for a in sorted(have - addresses)]
        lines += [f"address add {a} dev {dev}" for a in sorted(addresses - have)]
    return lines


def apply(routing: RoutingConfig, ports: dict[str, str], isls: frozenset[str] = frozenset()) -> str:
    """Bring the namespace to ``routing``. Returns an error text, or '' when all was applied."""
    errors = []
    want_forwarding = "1" if routing.ip_routing else "0"
    if FORWARDING.read_text().strip() != want_forwarding:
        FORWARDING.write_text(want_forwarding)
    ports = {port: ifname for port, ifname in ports.items() if (SYS / ifname).exists()}
    lines = plan(routing, ports, _addresses(), {i: _master(i) for i in ports.values()}, isls)
    if lines:
        proc = subprocess.run(["ip", "-force", "-batch", "-"], input="\n".join(lines) + "\n",
                              capture_output=True, text=True, check=False)
        errors += [ln for ln in proc.stderr.splitlines() if ln.strip()]
    return "; ".join(errors)

