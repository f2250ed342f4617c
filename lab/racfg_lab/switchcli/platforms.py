"""The per-platform table: prompts, errors, paging commands, the command grammar and which
formatter prints each show command. The engine is shared; only this table differs.

Grammar: literal words (abbreviations accepted, as on the real CLIs), ``<arg>`` one word,
``<arg...>`` the rest of the line, ``[word]`` an optional literal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from racfg_lab.switchcli import formats as f


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

_MLNX_COMMON: list[tuple[tuple[str, ...], str, str]] = [
    (_ALL, "no cli session paging enable", "ok"),
    (_ALL, "terminal length <n>", "ok"),
    (_ALL, "terminal width <n>", "ok"),
    (("user",), "enable", "enable"),
    (("enable",), "disable", "disable"),
    (("enable",), "configure terminal", "configure"),
    (_ALL, "show version", "show:version"),
    (_ALL, "show running-config", "show:running"),
    (_ALL, "show configuration files", "show:config_files"),
    (_CFG, "configuration write", "save"),
    (("enable",), "write memory", "unknown"),
    (_CFG, "exit", "exit"),
    (("config",), "end", "end"),
    (("user", "enable"), "exit", "logout"),
    (("user", "enable"), "quit", "logout"),
    (_CFG, "hostname <name>", "hostname"),
    (("if",), "description <text...>", "port_description"),
    (("if",), "no description", "port_no_description"),
    (("if",), "shutdown", "port_shutdown"),
    (("if",), "no shutdown", "port_no_shutdown"),
]

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

# Onyx's own forms: one-line ``interface ...`` and ``router bgp ASN ...`` from config mode.
_ONYX_L3: list[tuple[tuple[str, ...], str, str]] = [
    *_L3_COMMON,
    (_CFG, "protocol bgp", "protocol_bgp"),
    (_CFG, "no protocol bgp", "no_protocol_bgp"),
    (_CFG, "vlan <vid> <rest...>", "vlan_inline"),
    (_CFG, "interface vlan <vid> <rest...>", "svi_inline"),
    (("if",), "no switchport [force]", "port_routed"),
    (("if",), "switchport [force]", "port_switched"),
    (_IFS, "ip address <addr> [primary]", "ip_address"),
    (_IFS, "ip address <addr> <mask> [primary]", "ip_address"),
    (_CFG, "router bgp <asn> vrf default <rest...>", "bgp_inline"),
    (_CFG, "router bgp <asn> vrf default", "router_bgp"),
    (_CFG, "router bgp <asn> <rest...>", "bgp_inline"),
    (("bgp",), "router-id <id> [force]", "bgp_router_id"),
    (("bgp",), "network <prefix> <len>", "bgp_network"),
    (("bgp",), "no network <prefix> <len>", "bgp_no_network"),
]

ONYX = Platform(
    name="onyx",
    prompts={"user": "{host} [standalone: master] > ", "enable": "{host} [standalone: master] # ",
             "config": "{host} [standalone: master] (config) # ",
             "if": "{host} [standalone: master] (config interface ethernet {port}) # ",
             "svi": "{host} [standalone: master] (config interface vlan {svi}) # ",
             "bgp": "{host} [standalone: master] (config router bgp {asn}) # ",
             "vlan": "{host} [standalone: master] (config vlan {svi}) # "},
    unknown_error='% Unrecognized command "{token}".\nType "?" for help.',
    incomplete_error="% Incomplete command.",
    json_pipe="json-print",
    interface_keyword="ethernet",
    force_for_live_port_change=True,
    banner="\nMellanox Onyx Switch Management\n\n",
    grammar=[
        *_MLNX_COMMON,
        (_ALL, "show interfaces ethernet", "show:interfaces"),
        (_ALL, "show dcb priority-flow-control", "show:pfc"),
        (_ALL, "show lldp interfaces ethernet remote", "show:lldp"),
        (_CFG, "interface ethernet <port> <rest...>", "interface_inline"),
        (_CFG, "interface ethernet <port>", "interface"),
        (("if",), "mtu <mtu> [force]", "port_mtu"),
        (("if",), "speed <speed> [no-autoneg] [force]", "port_speed"),
        (_CFG, "dcb priority-flow-control enable [force]", "pfc_global_on"),
        (_CFG, "no dcb priority-flow-control enable [force]", "pfc_global_off"),
        (_CFG, "dcb priority-flow-control priority <prio> enable", "pfc_prio_on"),
        (_CFG, "no dcb priority-flow-control priority <prio> enable", "pfc_prio_off"),
        (_CFG, "roce [lossless]", "roce_on"),
        (_CFG, "no roce", "roce_off"),
        (("if",), "dcb priority-flow-control mode on [force]", "pfc_port_on"),
        (("if",), "no dcb priority-flow-control mode [force]", "pfc_port_off"),
        *_ONYX_L3,
    ],
    shows={"interfaces": (f.onyx_interfaces, True), "pfc": (f.onyx_pfc, True), "version": (f.onyx_version, True),
           "lldp": (f.onyx_lldp_remote, True), "running": (f.mlnx_running, False),
           "config_files": (f.mlnx_config_files, False),
           "bgp_summary": (f.onyx_bgp_summary, False), "routes": (f.onyx_routes, False)},
)

MLNXOS_IB = Platform(
    name="mlnxos-ib",
    prompts={"user": "{host} [standalone: master] > ", "enable": "{host} [standalone: master] # ",
             "config": "{host} [standalone: master] (config) # ",
             "if": "{host} [standalone: master] (config interface ib {port}) # "},
    unknown_error=ONYX.unknown_error,
    incomplete_error=ONYX.incomplete_error,
    json_pipe="",
    interface_keyword="ib",
    mtu_range=(256, 4096),
    banner="\nMellanox MLNX-OS Switch Management\n\n",
    grammar=[
        *_MLNX_COMMON,
        (_ALL, "show interfaces ib", "show:interfaces"),
        (_CFG, "interface ib <port> <rest...>", "interface_inline"),
        (_CFG, "interface ib <port>", "interface"),
        (("if",), "mtu <mtu>", "ib_mtu"),
        (("if",), "speed <speed>", "ib_speed"),
    ],
    shows={"interfaces": (f.ib_interfaces, False), "version": (f.ib_version, False),
           "running": (f.mlnx_running, False), "config_files": (f.mlnx_config_files, False)},
)

# Layer 3 (l3cli.py), EOS's forms: sub-modes ``interface Vlan10`` and ``router bgp ASN``.
_EOS_L3: list[tuple[tuple[str, ...], str, str]] = [
    *_L3_COMMON,
    (("if",), "no switchport", "port_routed"),
    (("if",), "switchport", "port_switched"),
    (_IFS, "ip address <addr>", "ip_address"),
    (("bgp",), "router-id <id>", "bgp_router_id"),
    (("bgp",), "maximum-paths <n> ecmp <m>", "bgp_maximum_paths"),
]

EOS = Platform(
    name="eos",
    prompts={"user": "{host}>", "enable": "{host}#", "config": "{host}(config{session})#",
             "if": "{host}(config{session}-if-{port})#", "svi": "{host}(config{session}-if-Vl{svi})#",
             "bgp": "{host}(config{session}-router-bgp)#", "vlan": "{host}(config{session}-vlan-{svi})#"},
    unknown_error="% Invalid input (at token {index}: '{token}')",
    incomplete_error="% Incomplete command",
    json_pipe="json",
    banner="Last login: Mon Jan  1 00:00:00 2024 from 198.18.0.1\n",
    short_port_in_prompt=True,
    section_filter=True,
    save_message="Copy completed successfully.",
    missing_interface="% Interface does not exist: {text}",
    mtu_range=(68, 9214),
    grammar=[
        (_ALL, "terminal length <n>", "pagination"),
        (_ALL, "terminal width <n>", "width"),
        (_ALL, "no terminal length", "ok"),
        (("user",), "enable", "enable"),
        (("enable",), "disable", "disable"),
        (("enable",), "configure session <name>", "configure_session"),
        (("enable",), "configure [terminal]", "configure"),
        (_PRIV, "enable", "ok"),
        (_ALL, "show version", "show:version"),
        (_ALL, "show hostname", "show:hostname"),
        (_ALL, "show interfaces status", "show:status"),
        (_ALL, "show interfaces description", "show:descriptions"),
        (_ALL, "show interfaces", "show:interfaces"),
        (_ALL, "show priority-flow-control counters", "show:pfc_counters"),
        (_ALL, "show priority-flow-control", "show:pfc"),
        (_ALL, "show lldp neighbors detail", "show:lldp_detail"),
        (_ALL, "show lldp neighbors", "show:lldp"),
        (_PRIV, "show running-config diffs", "show:running_diffs"),
        (_PRIV, "show running-config all", "show:running_all"),
        (_PRIV, "show running-config", "show:running"),
        (_PRIV, "show startup-config", "show:startup"),
        (_PRIV, "show configuration sessions [detail]", "show:sessions"),
        (_PRIV, "dir [all-filesystems]", "show:dir"),
        (_CFG, "show session-config diffs", "session_diffs"),
        (_CFG, "show session-config", "session_config"),
        (_CFG, "commit", "commit"),
        (_CFG, "abort", "abort"),
        (("enable",), "write [memory]", "save"),
        (("enable",), "copy running-config startup-config", "save"),
        (_CFG, "exit", "exit"),
        (_CFG, "end", "end"),
        (("user", "enable"), "exit", "logout"),
        (("user", "enable"), "logout", "logout"),
        (_CFG, "hostname <name>", "hostname"),
        (_CFG, "interface <port>", "interface"),
        (("if",), "mtu <mtu>", "port_mtu"),
        (("if",), "l2 mtu <mtu>", "port_mtu"),
        (("if",), "description <text...>", "port_description"),
        (("if",), "no description", "port_no_description"),
        (("if",), "speed forced <speed>", "port_speed"),
        (("if",), "speed <speed>", "port_speed"),
        (("if",), "shutdown", "port_shutdown"),
        (("if",), "no shutdown", "port_no_shutdown"),
        (("if",), "priority-flow-control [mode] on", "pfc_port_on"),
        (("if",), "no priority-flow-control [mode] [on]", "pfc_port_off"),
        (("if",), "priority-flow-control priority <prio> no-drop", "pfc_port_prio_on"),
        (("if",), "no priority-flow-control priority <prio> [no-drop]", "pfc_port_prio_off"),
        *_EOS_L3,
    ],
    shows={"interfaces": (f.eos_interfaces, True), "pfc": (f.eos_pfc, True), "version": (f.eos_version, True),
           "lldp": (f.eos_lldp, True), "running": (f.eos_running, False), "status": (f.eos_status_text, False),
           "running_all": (f.eos_running_all, False), "hostname": (f.eos_hostname, True),
           "descriptions": (f.eos_descriptions, True),
           "pfc_counters": (f.eos_pfc_counters, True), "lldp_detail": (f.eos_lldp_detail, True),
           "running_diffs": (f.eos_running_diffs, False), "startup": (f.eos_startup, False),
           "sessions": (f.eos_sessions, True), "dir": (f.eos_dir, False),
           "bgp_summary": (f.eos_bgp_summary, True), "routes": (f.eos_routes, True)},
)

PLATFORMS = {p.name: p for p in (ONYX, MLNXOS_IB, EOS)}
TEXT_FORMS = {("eos", "version"): f.eos_version_text, ("eos", "hostname"): f.eos_hostname_text,
              ("eos", "descriptions"): f.eos_descriptions_text, ("eos", "pfc"): f.eos_pfc_text,
              ("eos", "sessions"): f.eos_sessions_text, ("eos", "bgp_summary"): f.eos_bgp_summary_text,
              ("eos", "routes"): f.eos_routes_text}
