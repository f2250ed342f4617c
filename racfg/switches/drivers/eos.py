"""Arista EOS driver (netmiko ``arista_eos``): JSON show output, nested running-config, changes
pushed through a config session so they are atomic and their diff is the switch's own."""

from __future__ import annotations

import time

from racfg.switches.drivers.switch_driver import Change, SwitchDriver
from racfg.switches.facts import BgpFacts, PfcFacts
from racfg.switches.parsers import eos_json
from racfg.switches.ports import port_sort_key


class EosDriver(SwitchDriver):
    platform = "eos"
    device_type = "arista_eos"
    template = "eos_nested.j2"
    show = {
        "interfaces": "show interfaces | json",
        "pfc": "show priority-flow-control | json",
        "version": "show version | json",
        "lldp": "show lldp neighbors | json",
        "saved": "show running-config diffs",
        "running": "show running-config",  # routing settings (routed ISLs, VLAN interfaces, BGP)
    }
    routing_show = {"bgp": "show ip bgp summary | json", "routes": "show ip route | json"}
    config_prompt = r"\(config[^)]*\)#\s*$"
    save_command = "write memory"
    flat_config = False
    parse_interfaces = staticmethod(eos_json.parse_interfaces)
    parse_version = staticmethod(eos_json.parse_version)
    parse_lldp = staticmethod(eos_json.parse_lldp)
    parse_routes = staticmethod(eos_json.parse_routes)

    def parse_bgp(self, raw: str) -> BgpFacts:
        """EOS gives the epoch of each session's last change; the uptime is counted from now."""
        return eos_json.parse_bgp_summary(raw, now=time.time())

    def parse_saved(self, text: str) -> bool | None:
        """``show running-config diffs`` prints nothing when running equals startup."""
        return not text.strip()

    def speed(self, gbps: float) -> str:
        return f"speed forced {gbps:g}gfull"

    def parse_pfc(self, raw: dict[str, str]) -> PfcFacts:
        return eos_json.parse_pfc(raw["pfc"])

    def pfc_port_lines(self, pfc: PfcFacts, port: str) -> list[str]:
        lines = ["priority-flow-control on"] if pfc.ports.get(port) else []
        return lines + [f"priority-flow-control priority {p} no-drop" for p in pfc.port_priorities.get(port, ())]

    def pfc_removal(self, pfc: PfcFacts) -> list[Change]:
        return [Change(self.context(port), "no priority-flow-control", "priority-flow-control on", f"{port} PFC off")
                for port in sorted((p for p, on in pfc.ports.items() if on), key=port_sort_key)]

    def lossless_removal(self, pfc: PfcFacts) -> list[Change]:
        """Every port's no-drop priorities, whether PFC is on there or not (EOS keeps them per port)."""
        return [Change(self.context(port), f"no priority-flow-control priority {prio} no-drop",
                       f"priority-flow-control priority {prio} no-drop", f"{port} priority {prio} lossy")
                for port in sorted(pfc.port_priorities, key=port_sort_key) for prio in pfc.port_priorities[port]]
