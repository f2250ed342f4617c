"""Mellanox drivers: Onyx (Ethernet, SN series) and MLNX-OS InfiniBand (SB series).

Both speak the same CLI family (netmiko ``mellanox_mlnxos``), flat running-config lines and
``configuration write``; Onyx has JSON output and DCB, the IB CLI has text output and no PFC.
"""

from __future__ import annotations

import re
from typing import Any

from netmiko.mellanox.mellanox_mlnxos_ssh import MellanoxMlnxosSSH

from racfg.catalog import IB_MTUS, ib_speed_name
from racfg.switches.drivers.switch_driver import Change, SwitchDriver
from racfg.switches.facts import PfcFacts
from racfg.switches.parsers import mlnxos_ib, onyx, running


class MellanoxDriver(SwitchDriver):
    """What Onyx and MLNX-OS IB share: netmiko driver, flat config template, save command."""

    device_type = "mellanox_mlnxos"
    template = "mlnx_flat.j2"
    save_command = "configuration write"
    parse_config_lines = staticmethod(running.parse_flat)
    # The first prompt after login, user or enable mode: "sw1 [standalone: master] > "
    login_prompt = r"[>#]\s*$"

    def open_connection(self, **params: Any) -> Any:
        """netmiko's MLNX-OS connection, starting its session the way netmiko's base class says a
        driver should: read until the first prompt.

        Why: netmiko's ``mellanox_mlnxos`` driver has no session start of its own, so it inherits
        the generic one (``_test_channel_read`` without a pattern), which sleeps a second and then
        reads until the channel has been quiet for two more, on a real switch as on the lab's: the
        time is waiting, not the switch answering (ktbyers/netmiko#1882 reports the same for
        IOS-XR), and every switch read logs in. bench/switch_login.py measures it against netmiko's
        driver as shipped. Everything else (prompts, enable, paging, config mode, save) is netmiko's.
        """
        prompt = self.login_prompt

        class MlnxosConnection(MellanoxMlnxosSSH):
            def session_preparation(self) -> None:
                self._test_channel_read(pattern=prompt)
                self.set_base_prompt()
                self.set_terminal_width()
                self.disable_paging()

        return MlnxosConnection(device_type=self.device_type, **params)

    def parse_saved(self, text: str) -> bool | None:
        """``show configuration files`` ends with ``Unsaved changes: yes|no``."""
        match = re.search(r"^Unsaved changes:\s*(yes|no)\s*$", text, re.M | re.I)
        return None if match is None else match.group(1).lower() == "no"


class OnyxDriver(MellanoxDriver):
    platform = "onyx"
    show = {
        "interfaces": "show interfaces ethernet | json-print",
        "pfc": "show dcb priority-flow-control | json-print",
        "version": "show version | json-print",
        "lldp": "show lldp interfaces ethernet remote | json-print",
        "running": "show running-config",
        "saved": "show configuration files",
    }
    routing_show = {"bgp": "show ip bgp summary", "routes": "show ip route"}  # text: Onyx has no json-print of them
    parse_interfaces = staticmethod(onyx.parse_interfaces)
    parse_version = staticmethod(onyx.parse_version)
    parse_lldp = staticmethod(onyx.parse_lldp)
    parse_bgp = staticmethod(onyx.parse_bgp_summary)
    parse_routes = staticmethod(onyx.parse_routes)
    routing_globals = ("protocol bgp",)  # Onyx routes by default; BGP is a protocol to enable first
    readdress_needs_removal = True

    def mtu(self, mtu: int) -> str:
        return f"mtu {mtu} force"

    def vlan_context(self, vlan: int) -> str:
        return f"interface vlan {vlan}"

    def bgp_context(self, asn: int) -> str:
        return f"router bgp {asn} vrf default"

    def routed_port(self) -> str:
        return "no switchport force"

    def ip_address(self, cidr: str) -> str:
        return f"ip address {cidr} primary"

    def router_id(self, address: str) -> str:
        return f"router-id {address} force"

    def maximum_paths(self, paths: int) -> str:
        return f"maximum-paths {paths}"

    def network(self, prefix: str) -> str:
        address, length = prefix.split("/")
        return f"network {address} /{length}"

    def speed(self, gbps: float) -> str:
        return f"speed {gbps:g}G force"

    def parse_pfc(self, raw: dict[str, str]) -> PfcFacts:
        return onyx.parse_pfc(raw["pfc"], raw.get("running"))

    def pfc_global_lines(self, pfc: PfcFacts) -> list[str]:
        lines = ["dcb priority-flow-control enable force"] if pfc.enabled else []
        lines += [f"dcb priority-flow-control priority {p} enable" for p in pfc.lossless_priorities]
        return lines + (["roce"] if pfc.roce else [])

    def pfc_port_lines(self, pfc: PfcFacts, port: str) -> list[str]:
        return ["dcb priority-flow-control mode on force"] if pfc.ports.get(port) else []

    def lossless_removal(self, pfc: PfcFacts) -> list[Change]:
        changes = []
        if pfc.roce:
            changes.append(Change(None, "no roce", "roce", "RoCE off"))
        for prio in pfc.lossless_priorities:
            changes.append(Change(None, f"no dcb priority-flow-control priority {prio} enable",
                                  f"dcb priority-flow-control priority {prio} enable", f"PFC priority {prio} off"))
        return changes

    def pfc_removal(self, pfc: PfcFacts) -> list[Change]:
        changes = []
        for port in sorted(p for p, on in pfc.ports.items() if on):
            changes.append(Change(self.context(port), "no dcb priority-flow-control mode force",
                                  "dcb priority-flow-control mode on force", f"{port} PFC off"))
        if pfc.enabled:
            changes.append(Change(None, "no dcb priority-flow-control enable force",
                                  "dcb priority-flow-control enable force", "PFC off (global)"))
        return changes


class MlnxosIbDriver(MellanoxDriver):
    platform = "mlnxos-ib"
    show = {
        "interfaces": "show interfaces ib",
        "version": "show version",
        "running": "show running-config",
        "saved": "show configuration files",
    }
    parse_interfaces = staticmethod(mlnxos_ib.parse_interfaces)
    parse_version = staticmethod(mlnxos_ib.parse_version)
    parse_lldp = staticmethod(mlnxos_ib.parse_lldp)

    def facts_from_raw(self, name: str, raw: dict[str, str]):  # type: ignore[override]
        raw = {**raw, "lldp": raw.get("lldp", "")}
        return super().facts_from_raw(name, raw)

    def mtu(self, mtu: int) -> str:
        return f"mtu {IB_MTUS.get(mtu, str(mtu))}"

    def speed(self, gbps: float) -> str:
        return f"speed {ib_speed_name(gbps) or f'{gbps:g}G'}"

    def parse_pfc(self, raw: dict[str, str]) -> PfcFacts:
        return mlnxos_ib.parse_pfc()
