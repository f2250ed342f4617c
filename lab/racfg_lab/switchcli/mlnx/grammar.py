"""Onyx (Mellanox Ethernet) and MLNX-OS InfiniBand: prompts, errors and command grammar, and the
formatter of each show command (mlnx/formats.py, mlnx/ib.py, mlnx/route_formats.py). The two share
MLNX-OS's session, paging and save commands, as racfg.switches.drivers.mlnx serves both."""

from __future__ import annotations

from racfg_lab.switchcli.grammar import _ALL, _CFG, _IFS, _L3_COMMON, Platform
from racfg_lab.switchcli.mlnx import formats as f
from racfg_lab.switchcli.mlnx import ib, route_formats

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
           "bgp_summary": (route_formats.onyx_bgp_summary, False), "routes": (route_formats.onyx_routes, False)},
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
    shows={"interfaces": (ib.ib_interfaces, False), "version": (ib.ib_version, False),
           "running": (f.mlnx_running, False), "config_files": (f.mlnx_config_files, False)},
)
