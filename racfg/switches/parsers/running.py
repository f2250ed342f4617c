"""The routing settings of a running config (routed ports, host VLANs and their interfaces, BGP) as
ConfigLines, for Onyx's flat layout and EOS's nested one.

Why the running config: it is what the switch will keep, and it holds exactly the lines the drivers
type, so the plan compares like with like (show commands would need one parser per setting).
Only the settings racfg manages are read; every other line is left alone, never an error.
"""

from __future__ import annotations

import re

from racfg.switches.facts import ConfigLine

# Onyx prints every setting on one line: the mode's entry command, then the setting.
_ONYX_CONTEXT_RE = re.compile(
    r"^(interface (?:ethernet \d+/\d+(?:/\d+)?|vlan \d+)|router bgp \d+(?: vrf \S+)?|vlan \d+)(?: (.+))?$")
_GLOBAL = ("ip routing", "protocol bgp")


def setting_key(context: str | None, line: str) -> str | None:
    """The key of a setting within its mode (see ConfigLine); None for a line racfg does not manage."""
    words = line.split()
    if not words:
        return None
    if context is None:
        return line if line in _GLOBAL else None
    if context.lower().startswith("interface"):
        if line in ("no switchport", "no switchport force"):
            return "switchport"
        if line.startswith("switchport access vlan "):
            return "switchport access vlan"
        if line.startswith("ip address ") and "secondary" not in words:
            return "ip address"
        if words[0] == "mtu" and context.lower().startswith("interface vlan"):
            return "mtu"  # an Ethernet port's MTU is read from show interfaces, with the port's other facts
        return None
    if context.startswith("vlan "):
        return "name" if words[0] == "name" else None
    if context.startswith("router bgp "):
        if words[0] in ("router-id", "maximum-paths"):
            return words[0]
        if words[0] == "neighbor" and len(words) == 4 and words[2] == "remote-as":
            return f"neighbor {words[1]}"
        if words[0] == "network" and len(words) >= 2:
            return f"network {''.join(words[1:3]) if len(words) > 2 and words[2].startswith('/') else words[1]}"
    return None


def _line(context: str | None, line: str) -> ConfigLine | None:
    line = " ".join(line.split())
    if context and context.startswith("vlan ") and line.startswith("name "):
        line = line.replace('"', "")  # Onyx quotes VLAN names in its running config
    key = setting_key(context, line)
    return None if key is None else ConfigLine(context, key, line)


def _bgp(context: str) -> ConfigLine | None:
    """The BGP process itself, as a global setting: a process under another ASN must go first."""
    return ConfigLine(None, "router bgp", context) if context.startswith("router bgp ") else None


def parse_flat(text: str) -> tuple[ConfigLine, ...]:
    """Onyx ``show running-config``: ``interface ethernet 1/21 ip address 10.0.0.1/31 primary``,
    ``router bgp 65101 vrf default neighbor 10.0.0.0 remote-as 65100``, indented under ``##`` headings."""
    found: list[ConfigLine] = []
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line or line.startswith("#"):
            continue
        match = _ONYX_CONTEXT_RE.match(line)
        if match is None:
            item = _line(None, line)
        elif match.group(2) is None:
            item = _bgp(match.group(1))
        else:
            item = _line(match.group(1), match.group(2))
        if item is not None and item.key == "ip address" and not item.line.endswith(" primary"):
            continue  # Onyx prints its secondary addresses without a keyword: only the primary is racfg's
        if item is not None and item not in found:
            found.append(item)
    return tuple(found)


def parse_nested(text: str) -> tuple[ConfigLine, ...]:
    """EOS ``show running-config``: a mode's entry line at the margin, its settings indented three
    spaces (deeper blocks, e.g. ``address-family``, are not racfg's and are skipped)."""
    found: list[ConfigLine] = []
    context: str | None = None
    for raw in text.splitlines():
        if not raw.strip() or raw.strip().startswith("!"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        line = " ".join(raw.split())
        if indent == 0:
            context = line
            item = _bgp(line) or _line(None, line)
        elif indent <= 3 and context is not None:
            item = _line(context, line)
        else:
            continue
        if item is not None and item not in found:
            found.append(item)
    return tuple(found)
