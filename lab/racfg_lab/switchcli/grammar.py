"""What every platform's CLI is described by (``Platform``: prompts, errors, paging commands, the
command grammar and which formatter prints each show command), the modes, and the layer-3 forms
Onyx and EOS type alike. Each platform's own description is in its folder (eos/grammar.py,
mlnx/grammar.py); platforms.py is the table of them. The engine is shared; only these differ.

Grammar: literal words (abbreviations accepted, as on the real CLIs), ``<arg>`` one word,
``<arg...>`` the rest of the line, ``[word]`` an optional literal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Platform:
    name: str
    prompts: dict[str, str]  # mode -> format with {host}, {port}, {session}
    unknown_error: str  # format with {token}, {index}
    incomplete_error: str
    json_pipe: str  # "json-print" / "json"
    grammar: list[tuple[tuple[str, ...], str, str]]  # (modes, pattern, action)
    shows: dict[str, tuple[Any, bool]] = field(default_factory=dict)  # key -> (formatter, is_json)
    banner: str = ""
    interface_keyword: str = ""
    mtu_range: tuple[int, int] = (1500, 9216)
    short_port_in_prompt: bool = False  # EOS: ``(config-if-Et1)``; Mellanox: ``(config interface ethernet 1/1)``
    section_filter: bool = False  # ``| section PATTERN`` (EOS)
    save_message: str = ""  # what saving the running config prints
    missing_interface: str = "% Interface {keyword} {text} does not exist"  # format with {keyword}, {text}
    force_for_live_port_change: bool = False  # Onyx: MTU or speed of an enabled port needs ``force``


_ALL = ("user", "enable", "config", "if", "svi", "bgp", "vlan")
_PRIV = ("enable", "config", "if", "svi", "bgp", "vlan")
_CFG = ("config", "if", "svi", "bgp", "vlan")
_IFS = ("if", "svi")  # a routed port or a VLAN interface: where ``ip address`` goes

# Layer 3 (l3cli.py), what Onyx and EOS type alike; each platform's own forms follow.
_L3_COMMON: list[tuple[tuple[str, ...], str, str]] = [
    (_ALL, "show ip bgp summary", "show:bgp_summary"),
    (_ALL, "show ip route", "show:routes"),
    (_CFG, "ip routing", "ip_routing_on"),
    (_CFG, "no ip routing", "ip_routing_off"),
    (_CFG, "vlan <vid>", "vlan"),
    (("vlan",), "name <text...>", "vlan_name"),
    (("vlan",), "no name", "vlan_no_name"),
    (("svi",), "mtu <mtu>", "svi_mtu"),
    (("svi",), "no mtu", "svi_no_mtu"),
    (("if",), "no switchport access vlan", "port_no_access_vlan"),
    (("bgp",), "no router-id", "bgp_no_router_id"),
    (("bgp",), "no maximum-paths", "bgp_no_maximum_paths"),
    (_CFG, "interface vlan <vid>", "svi"),
    (_CFG, "no interface vlan <vid>", "no_svi"),
    (("if",), "switchport access vlan <vid>", "port_access_vlan"),
    (_IFS, "no ip address", "no_ip_address"),
    (_CFG, "router bgp <asn>", "router_bgp"),
    (_CFG, "no router bgp <asn>", "no_router_bgp"),
    (("bgp",), "neighbor <peer> remote-as <asn>", "bgp_neighbor"),
    (("bgp",), "no neighbor <peer>", "bgp_no_neighbor"),
    (("bgp",), "maximum-paths <n>", "bgp_maximum_paths"),
    (("bgp",), "network <prefix>", "bgp_network"),
    (("bgp",), "no network <prefix>", "bgp_no_network"),
    (("bgp",), "redistribute connected", "bgp_redistribute_connected"),
    (("bgp",), "no redistribute connected", "bgp_no_redistribute_connected"),
]
