"""What validate reads from each host, in one round trip per host.

Every host check needs a handful of command outputs (``ip -j addr``, ``sysctl``, ``lsblk`` ...).
Running them one SSH command at a time costs a round trip each; a 17-host site with a jumbo-frame
matrix would spend its time waiting. So the commands a host's checks need are derived from the
rendered inventory, run as one script over the host's single connection (all hosts at once, one
thread each), and the validators read the captured sections. Which commands: each validators
module declares the sections it reads (``COMMANDS`` beside its checks); see :func:`collect_commands`.
The pings of the jumbo matrix run in parallel on their source host inside the same script, by
destination as applications send (not bound to a NIC): a small ping first (can the destination be
reached at all?), then, if it passed, the DF ping at the path MTU (``DF_PING``: DF set, and the path
MTU the host learned ignored); if it failed, the same ping bound
to the path's NIC (passing there, the host's routing is at fault). ``ip route get`` says which NIC
and source address the host's routing picks: one that is not the path's data NIC is the route.
"""

from __future__ import annotations

import ipaddress
import shlex
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from racfg.errors import CannotRunError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPInterface = ipaddress.IPv4Interface | ipaddress.IPv6Interface

MARK = "@@racfg-probe@@"


@dataclass(frozen=True)
class Section:
    """One command's exit code and output (stdout and stderr together)."""

    rc: int
    out: str

    @property
    def ok(self) -> bool:
        return self.rc == 0

    @property
    def missing(self) -> bool:
        """The tool is not installed (rc 127, or the shell's "not found")."""
        first = self.out.strip().splitlines()[0] if self.out.strip() else ""
        return self.rc == 127 or first.endswith("not found")


@dataclass(frozen=True)
class PingPath:
    """One jumbo-frame path: from a host's data NIC to another host's data NIC address."""

    src_host: str
    src_nic: str
    dst_host: str
    dst_nic: str
    dst_addr: str
    size: int  # ICMP payload: MTU - 28 (20 IP + 8 ICMP header)
    src_addr: str = ""  # the source NIC's address: a reply by destination must come back to a data address

    @property
    def label(self) -> str:
        return f"{self.src_host}:{self.src_nic}->{self.dst_host}:{self.dst_nic}"


@dataclass
class HostProbe:
    """The captured sections of one host, or why they could not be read."""

    name: str
    sections: dict[str, Section] = field(default_factory=dict)
    # PingPath.label -> "ok", "mtu" (small ping passes, DF ping fails), "unreachable" (small ping fails)
    # or "route" (by destination the host's routing sends it wrong: ``routes`` has its lookup)
    pings: dict[str, str] = field(default_factory=dict)
    routes: dict[str, str] = field(default_factory=dict)  # PingPath.label -> ``ip route get`` of its address
    error: str | None = None
    fix: str | None = None  # what repairs ``error`` (racfg.ssh.reach), where it is known
    seconds: float = 0.0
    via: str = "over SSH"  # how its script reached it: "over SSH", "in a Slurm job step"

    def get(self, key: str) -> Section | None:
        return self.sections.get(key)

    def section(self, key: str, *, allow_fail: bool = False) -> Section:
        """A captured section; a command that failed makes the check an error, not a verdict."""
        result = self.sections.get(key)
        if result is None:
            raise LookupError(f"{self.name}: nothing captured for {key}")
        if not result.ok and not allow_fail:
            raise RuntimeError(f"{self.name}: {key} failed (rc {result.rc}): {result.out.strip()[:200]}")
        return result


def ping_paths(hosts: dict[str, dict[str, Any]]) -> list[PingPath]:
    """Every dgx data NIC to every storage data NIC, and storage to storage (Weka backends talk
    to each other), at the smaller of the two NICs' MTUs, from the NIC the host's routing sends by:
    a NIC of the destination's subnet, else (a routed leaf-spine site: a storage node on another
    leaf) the NIC of the lowest-metric planned route that covers it (``racfg_routing``). A
    destination neither reaches is no path of that host (the site does not route between them)."""
    paths = []
    for src, svars in sorted(hosts.items()):
        for dst, dvars in sorted(hosts.items()):
            if src == dst or dvars.get("racfg_role") != "storage":
                continue
            for dnic in dvars.get("racfg_nics", []):
                d_if = ipaddress.ip_interface(dnic["address"])
                for snic, s_if in _senders(svars, d_if.ip):
                    size = min(int(snic["mtu"]), int(dnic["mtu"])) - 28
                    paths.append(PingPath(src, snic["name"], dst, dnic["name"], str(d_if.ip), size, str(s_if.ip)))
    return paths


def _senders(hv: dict[str, Any], address: IPAddress) -> list[tuple[dict[str, Any], IPInterface]]:
    """The host's data NICs that send to ``address`` (see ping_paths): every NIC of its subnet, else
    the one the lowest-metric planned route to it names."""
    nics = [(nic, ipaddress.ip_interface(nic["address"])) for nic in hv.get("racfg_nics", [])]
    connected = [(nic, s_if) for nic, s_if in nics if address in s_if.network]
    if connected:
        return connected
    routes = sorted((r for r in (hv.get("racfg_routing") or {}).get("routes", [])
                     if any(address in ipaddress.ip_network(to) for to in r["to"])), key=lambda r: int(r["metric"]))
    return [(nic, s_if) for nic, s_if in nics if routes and nic["name"] == routes[0]["nic"]]


# What one validators module declares it reads (its module-level ``COMMANDS``): section name ->
# command, either fixed or computed from the host's vars, the group vars and the sysctl keys the
# host is expected to carry (the commands that depend on the inventory: NIC names, drive paths).
Commands = Mapping[str, str] | Callable[[dict[str, Any], dict[str, Any], list[str]], Mapping[str, str]]


def collect_commands(declarations: Iterable[tuple[str, Commands]], hv: dict[str, Any], gv: dict[str, Any],
                     sysctl_keys: list[str]) -> dict[str, str]:
    """The read-only commands one host's checks need, keyed by section name, from the validators'
    declarations (``(module name, COMMANDS)`` pairs).

    Each check names what it reads beside itself (ANTA's ``commands``); the declarations are
    collected by ``validators/conftest.py`` from the modules pytest collected (the product never
    imports the validators: they are a pytest plugin directory, imported once, by pytest) and
    merged here into the one script a host runs, so a host still costs one round trip. Two modules
    reading the same section (``mounts``: array and Weka) must declare the same command; a
    different one is a programming error named here, not a silent override."""
    merged: dict[str, str] = {}
    owner: dict[str, str] = {}
    for where, declared in declarations:
        commands = declared(hv, gv, sysctl_keys) if callable(declared) else declared
        for key, command in commands.items():
            if merged.setdefault(key, command) != command:
                raise ValueError(f"section {key}: {owner[key]} runs {merged[key]!r}, {where} runs {command!r}")
            owner.setdefault(key, where)
    return merged


# The DF ping at the path MTU, in Python on the host (validate's hosts run Ansible, so they have python3):
# iputils' ping offers DF only as IP_PMTUDISC_DO, under which the kernel refuses locally what exceeds
# the path MTU it has learned for the destination, and a path MTU learned from an ICMP "fragmentation
# needed" while the fabric was wrong lasts ten minutes after the fabric is repaired. IP_PMTUDISC_PROBE
# sets DF and sends at the NIC's MTU whatever was learned (what tracepath does), so the packet tests
# the path as it is now. A raw socket needs root: without it (exit 2), or without python3 (126, 127),
# the script falls back to ping -M do.
# A raw ICMP socket gets a copy of every ICMP packet the host receives: the host's own parallel DF pings'
# jumbo replies and every other host's jumbo echo requests. In a socket of the default 208 KiB about a
# dozen of them fill it, and a process the CPUs ran late (a loaded 2-core lab, right after a deploy) lost
# its own replies: the path was reported as an MTU fault. So the socket takes echo replies only
# (ICMP_FILTER) and a buffer for hundreds of them (SO_RCVBUFFORCE as root, else what rmem_max allows).
DF_PING = """import os, select, socket, struct, sys, time
dst, size = sys.argv[1], int(sys.argv[2])
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
except OSError:
    sys.exit(2)
s.setsockopt(socket.IPPROTO_IP, 10, 3)  # IP_MTU_DISCOVER: IP_PMTUDISC_PROBE
s.setsockopt(255, 1, struct.pack("I", 0xFFFFFFFE))  # SOL_RAW, ICMP_FILTER: every type but echo reply out
for option in (33, socket.SO_RCVBUF):  # SO_RCVBUFFORCE, then SO_RCVBUF
    try:
        s.setsockopt(socket.SOL_SOCKET, option, 1 << 23)
        break
    except OSError:
        pass
ident = os.getpid() & 0xFFFF
def echo(seq):
    body = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + bytes(size)
    padded = body + bytes(len(body) % 2)
    total = sum(struct.unpack("!%dH" % (len(padded) // 2), padded))
    total = (total & 0xFFFF) + (total >> 16)
    total += total >> 16
    return body[:2] + struct.pack("!H", ~total & 0xFFFF) + body[4:]
start, sent = time.monotonic(), 0
while time.monotonic() - start < 5:
    if sent < 3 and time.monotonic() - start >= 0.2 * sent:
        try:
            s.sendto(echo(sent), (dst, 0))
        except OSError:
            sys.exit(1)
        sent += 1
    if select.select([s], [], [], 0.05)[0]:
        data, (src, _) = s.recvfrom(65535)
        icmp = data[(data[0] & 15) * 4:]
        if src == dst and icmp[:1] == b"\\0" and struct.unpack("!H", icmp[4:6])[0] == ident:
            sys.exit(0)
sys.exit(1)
"""


def script(commands: dict[str, str], pings: list[PingPath]) -> str:
    """One POSIX shell script printing every section between markers; pings run in parallel."""
    lines = ["export LC_ALL=C PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    for key, command in commands.items():
        lines.append(f"echo {shlex.quote(f'{MARK} begin {key}')}")  # a section is named for a NIC or a drive
        lines.append(f"( {command} ) </dev/null 2>&1")
        lines.append(f"echo \"{MARK} rc $?\"")
    if pings:
        lines.append(f"echo '{MARK} begin pings'")
        lines.append(f"racfg_df={shlex.quote(DF_PING)}")
        lines.append("( ")
        for i, p in enumerate(pings):
            # by destination, as applications send (the host's routing picks NIC and source address),
            # and bound to the NIC only where that fails: it tells the route from the link
            dst = shlex.quote(p.dst_addr)
            small = f"ping -n -q -c 2 -i 0.2 -W 2 {dst} >/dev/null 2>&1"
            df = (f"{{ python3 -c \"$racfg_df\" {dst} {p.size} 2>/dev/null; b=$?; [ $b -gt 1 ] && "
                  f"{{ ping -n -q -M do -s {p.size} -c 3 -i 0.2 -W 5 {dst} >/dev/null 2>&1; b=$?; }}; }}")
            bound = f"ping -n -q -c 2 -i 0.2 -W 2 -I {shlex.quote(p.src_nic)} {dst} >/dev/null 2>&1"
            route = f"r=$(ip -o -4 route get {dst} 2>&1 | head -n 1 | tr -s ' \\t' '__')"
            lines.append(f"  ( {route}; {small}; a=$?; b=-; c=-; if [ $a = 0 ]; then {df}; "
                         f"else {bound}; c=$?; fi; echo \"{i} $a $b $c $r\" ) &")
        lines.append("  wait )")
        lines.append(f"echo \"{MARK} rc 0\"")
    return "\n".join(lines) + "\n"


def parse_output(text: str) -> dict[str, Section]:
    sections: dict[str, Section] = {}
    key: str | None = None
    buf: list[str] = []
    for line in text.splitlines():
        if line.startswith(f"{MARK} begin "):
            key, buf = line[len(MARK) + 7:], []
        elif line.startswith(f"{MARK} rc ") and key is not None:
            rc_text = line[len(MARK) + 4:].strip()
            sections[key] = Section(int(rc_text) if rc_text.lstrip("-").isdigit() else -1, "\n".join(buf))
            key = None
        elif key is not None:
            buf.append(line)
    return sections


def run_probe(host: Any, name: str, commands: dict[str, str], pings: list[PingPath]) -> HostProbe:
    """Run the script on ``host`` (a testinfra Host); connection problems become ``error``."""
    start = time.monotonic()
    probe = HostProbe(name)
    try:
        result = host.run(script(commands, pings))
    except CannotRunError as exc:  # racfg.ssh.host_sessions: the host named, with the reason and a person's fix
        probe.error, probe.fix = exc.message, exc.hint
        probe.seconds = time.monotonic() - start
        return probe
    except Exception as exc:  # paramiko/socket errors: the host's checks become errors, not a crash
        probe.error = f"cannot reach {name} over SSH: {_reason(exc)}"
        probe.seconds = time.monotonic() - start
        return probe
    return probe_of(name, commands, pings, result.stdout, f"rc {result.rc}", time.monotonic() - start)


def probe_of(name: str, commands: dict[str, str], pings: list[PingPath], output: str, how: str,
             seconds: float, via: str = "over SSH") -> HostProbe:
    """The probe a host's script output makes, however the script reached the host (``via``: over SSH,
    or in a Slurm job step: racfg.slurm.node_step); ``how`` names the run in an incomplete output's error."""
    probe = HostProbe(name, sections=parse_output(output), seconds=seconds, via=via)
    missing = [k for k in commands if k not in probe.sections]
    if missing:
        probe.error = f"probe output of {name} incomplete (missing {', '.join(missing[:3])}; {how})"
    ping_section = probe.sections.get("pings")
    for line in ping_section.out.splitlines() if ping_section else []:
        index, small, df, bound, route = ([*line.split(), "", "", "", "", ""])[:5]
        if index.isdigit() and int(index) < len(pings):
            path = pings[int(index)]
            probe.routes[path.label] = " ".join(route.replace("_", " ").replace("\\", " ").split())
            probe.pings[path.label] = ping_outcome(small, df, bound, probe.routes[path.label], pings)
    return probe


def route_leaves_right(route: str, pings: list[PingPath]) -> bool:
    """Whether ``ip route get``'s answer sends by a data NIC from a data address of the host (the
    reply then comes back to the data NIC, not to the management network)."""
    words = route.split()
    dev = words[words.index("dev") + 1] if "dev" in words[:-1] else None
    src = words[words.index("src") + 1] if "src" in words[:-1] else None
    return dev in {p.src_nic for p in pings} and src in {p.src_addr for p in pings}


def ping_outcome(small: str, df: str, bound: str, route: str, pings: list[PingPath]) -> str:
    """A path's outcome from its pings by destination (small, DF), its bound ping (run when the
    small one failed) and the route lookup: a wrong route is the route, whatever the pings say."""
    if not route_leaves_right(route, pings) or (small != "0" and bound == "0"):
        return "route"
    return "unreachable" if small != "0" else "ok" if df == "0" else "mtu"


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
