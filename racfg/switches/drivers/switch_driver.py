"""The one shape every switch platform has: show commands + parsers, command builders, the
intended-vs-observed plan, Jinja2 rendering and how changes are pushed.

A platform is a small subclass that fills in its table (commands, prompts, syntax); the logic
here is shared, so Onyx, EOS and MLNX-OS IB cannot drift apart in behaviour.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from netmiko import ConnectHandler

from racfg.errors import UsageError
from racfg.switches import routed
from racfg.switches.facts import BgpFacts, ConfigLine, PfcFacts, PortFacts, RouteFacts, SwitchFacts
from racfg.switches.intent import IntendedSwitch
from racfg.switches.parsers import running
from racfg.switches.ports import device_port, interface_command, port_sort_key

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(TEMPLATES)), trim_blocks=True, lstrip_blocks=True,
    undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
)


_LINE_BREAKERS = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Change:
    """One config line to push, in its mode (``context``), with the line that undoes it.

    Each is typed at the switch's CLI as one line: a control character (a newline, a carriage
    return) would end it early and type the rest as a command of its own, so none is accepted here,
    whatever the variables the line was built from (the schema constrains every value that reaches
    a line: names, ports, numbers and addresses)."""

    context: str | None
    line: str
    undo: str | None
    what: str  # for people: "1/1 mtu 1500 -> 9000"

    def __post_init__(self) -> None:
        for text in (self.context, self.line, self.undo):
            if text is not None and _LINE_BREAKERS.search(text):
                raise UsageError(f"a switch CLI line may not hold a control character: {text!r}",
                                 hint="switch ports, names and descriptions are one line of text")


class SwitchDriver:
    """Base driver. Subclasses set the class attributes and the few syntax methods."""

    platform: str = ""
    device_type: str = ""  # netmiko driver
    template: str = ""
    show: dict[str, str] = {}  # facts name -> show command
    # A routing switch's state (read after ``show`` where the running config has a BGP process):
    # "bgp" -> the BGP summary, "routes" -> the IPv4 route table; empty: the platform does not route.
    routing_show: dict[str, str] = {}
    config_command: str = "configure terminal"
    config_prompt: str = r"\(config[^)]*\) ?#\s*$"
    enable_prompt: str = r"#\s*$"
    error_re = re.compile(r"^%.*$", re.M)
    save_command: str = ""
    flat_config: bool = True  # Onyx style "interface ethernet 1/1 mtu 9000 force" in running-config

    parse_interfaces: Callable[..., dict[str, PortFacts]]
    parse_version: Callable[..., str]
    parse_lldp: Callable[..., dict[str, Any]]
    parse_bgp: Callable[[str], BgpFacts]
    parse_routes: Callable[[str], RouteFacts]
    # The routing settings of ``show["running"]`` (EOS's nested layout unless the platform says otherwise)
    parse_config_lines: Callable[[str], tuple[ConfigLine, ...]] = staticmethod(running.parse_nested)
    # Routed fabrics: global lines a routing switch needs; whether an interface's address must be removed
    # before another is set (Onyx cannot change a primary address in place)
    routing_globals: tuple[str, ...] = ("ip routing",)
    readdress_needs_removal: bool = False

    # --- session ----------------------------------------------------------------------------
    def open_connection(self, **params: Any) -> Any:
        """A logged-in netmiko connection of this platform's ``device_type``."""
        return ConnectHandler(device_type=self.device_type, **params)

    # --- syntax -----------------------------------------------------------------------------
    def mtu(self, mtu: int) -> str:
        return f"mtu {mtu}"

    def speed(self, gbps: float) -> str:
        return f"speed {int(gbps)}G"

    def description(self, text: str) -> str:
        return f"description {text}"

    def no_description(self) -> str:
        return "no description"

    def admin(self, up: bool) -> str:
        return "no shutdown" if up else "shutdown"

    def context(self, port: str) -> str:
        return interface_command(self.platform, port)

    def device_port(self, port: str) -> str:
        return device_port(self.platform, port)

    # --- routed fabrics (leaf-spine): the wording of each setting; routed.py plans them ---------------
    def vlan_context(self, vlan: int) -> str:
        return f"interface Vlan{vlan}"

    def bgp_context(self, asn: int) -> str:
        return f"router bgp {asn}"

    def routed_port(self) -> str:
        return "no switchport"

    def ip_address(self, cidr: str) -> str:
        return f"ip address {cidr}"

    def router_id(self, address: str) -> str:
        return f"router-id {address}"

    def maximum_paths(self, paths: int) -> str:
        return f"maximum-paths {paths} ecmp {paths}"

    def network(self, prefix: str) -> str:
        return f"network {prefix}"

    # --- PFC / RoCE (platform-specific) -----------------------------------------------------
    def parse_pfc(self, raw: dict[str, str]) -> PfcFacts:
        raise NotImplementedError

    def pfc_global_lines(self, pfc: PfcFacts) -> list[str]:
        """Running-config lines that the observed global PFC/RoCE state corresponds to."""
        return []

    def pfc_port_lines(self, pfc: PfcFacts, port: str) -> list[str]:
        """Running-config lines (inside the port) that the observed per-port PFC state corresponds to."""
        return []

    def pfc_removal(self, pfc: PfcFacts) -> list[Change]:
        """Commands that turn priority flow control off (globally and on every port)."""
        return []

    def lossless_removal(self, pfc: PfcFacts) -> list[Change]:
        """Commands that remove RoCE / lossless (no-drop) priorities, wherever the switch keeps them."""
        return []

    # --- facts ------------------------------------------------------------------------------
    def facts_from_raw(self, name: str, raw: dict[str, str]) -> SwitchFacts:
        """Parse the raw outputs of ``self.show`` (keyed like it) into SwitchFacts."""
        return SwitchFacts(
            name=name,
            platform=self.platform,
            version=self.parse_version(raw["version"]),
            interfaces=self.parse_interfaces(raw["interfaces"]),
            pfc=self.parse_pfc(raw),
            lldp=self.parse_lldp(raw["lldp"]),
            config_saved=self.parse_saved(raw["saved"]) if "saved" in raw else None,
            config_lines=self.parse_config_lines(raw["running"]) if "running" in raw else None,
        )

    def parse_saved(self, text: str) -> bool | None:
        """Whether the running config is saved, from ``show["saved"]``'s output (None: cannot tell)."""
        return None

    def routing_commands(self, facts: SwitchFacts) -> dict[str, str]:
        """The routing show commands to read next on this switch: none unless the platform routes and
        the running config (already in ``facts``) holds a BGP process."""
        return dict(self.routing_show) if facts.routes_traffic else {}

    def with_routing(self, facts: SwitchFacts, raw: dict[str, str]) -> SwitchFacts:
        """``facts`` with the BGP and route tables parsed from the outputs of ``routing_show``."""
        from dataclasses import replace

        return replace(facts, bgp=self.parse_bgp(raw["bgp"]) if "bgp" in raw else None,
                       routes=self.parse_routes(raw["routes"]) if "routes" in raw else None)

    # --- plan -------------------------------------------------------------------------------
    def plan(self, intended: IntendedSwitch, facts: SwitchFacts) -> list[Change]:
        """The minimal changes that turn the observed switch into the intended one."""
        from racfg.switches.switch_errors import SwitchConfigError

        changes: list[Change] = []
        # PFC and RoCE are independent intents: each one not wanted is removed on its own.
        if not intended.roce:
            changes += self.lossless_removal(facts.pfc)
        if not intended.pfc:
            changes += self.pfc_removal(facts.pfc)
        for port in sorted(intended.managed_ports(set(facts.interfaces)), key=port_sort_key):
            want = intended.wanted(port)
            have = facts.interfaces.get(port)
            if want is None:
                continue
            if have is None:
                raise SwitchConfigError(
                    f"{intended.name}: port {self.device_port(port)} does not exist on the switch "
                    f"({len(facts.interfaces)} ports reported)"
                )
            ctx = self.context(port)
            if want.description and have.description != want.description:
                undo = self.description(have.description) if have.description else self.no_description()
                changes.append(Change(ctx, self.description(want.description), undo,
                                      f"{port} description {have.description!r} -> {want.description!r}"))
            if want.mtu and have.mtu != want.mtu:
                changes.append(Change(ctx, self.mtu(want.mtu), self.mtu(have.mtu),
                                      f"{port} mtu {have.mtu} -> {want.mtu}"))
            if want.speed_gbps and have.speed_gbps is not None and abs(have.speed_gbps - want.speed_gbps) > 1e-6:
                changes.append(Change(ctx, self.speed(want.speed_gbps), self.speed(have.speed_gbps),
                                      f"{port} speed {have.speed_gbps:g}G -> {want.speed_gbps:g}G"))
            if have.admin_up != want.admin_up:
                changes.append(Change(ctx, self.admin(want.admin_up), self.admin(have.admin_up),
                                      f"{port} {'up' if want.admin_up else 'shutdown'}"))
        return changes + [Change(*c) for c in routed.plan_routed(self, intended, facts.config_lines)]

    def unmet(self, intended: IntendedSwitch, facts: SwitchFacts) -> list[str]:
        """The intent, compared with facts read back from the switch: what does not hold, as
        "Expected: ... Actual: ..." lines. The postcondition of an apply: judged on the state the
        switch reports, not on whether the planner would plan again."""
        problems = []
        pfc = facts.pfc
        if not intended.pfc and (pfc.enabled or any(pfc.ports.values())):
            on = sorted((p for p, v in pfc.ports.items() if v), key=port_sort_key)
            problems.append(f"PFC: Expected: off Actual: on{' (global)' if pfc.enabled else ''}"
                            f"{' on ' + ', '.join(on) if on else ''}")
        if not intended.roce and (pfc.roce or pfc.lossless_priorities or any(pfc.port_priorities.values())):
            where = sorted((p for p, v in pfc.port_priorities.items() if v), key=port_sort_key)
            per_port = "; ".join(f"{p} no-drop {list(pfc.port_priorities[p])}" for p in where)
            problems.append(f"lossless/RoCE: Expected: none Actual: priorities {list(pfc.lossless_priorities)}"
                            f"{' on ' + per_port if per_port else ''}"
                            f"{' and roce' if pfc.roce and self.platform != 'eos' else ''}")
        if not intended.pfc and not intended.roce and pfc.any_enabled and not problems:
            problems.append("PFC/RoCE: Expected: nothing enabled Actual: some PFC state remains")
        for port in sorted(intended.managed_ports(set(facts.interfaces)), key=port_sort_key):
            want, have = intended.wanted(port), facts.interfaces.get(port)
            if want is None:
                continue
            if have is None:
                problems.append(f"{port}: Expected: present Actual: not reported by the switch")
                continue
            if want.mtu and have.mtu != want.mtu:
                problems.append(f"{port} mtu: Expected: {want.mtu} Actual: {have.mtu}")
            if have.admin_up != want.admin_up:
                problems.append(f"{port} admin state: Expected: {'up' if want.admin_up else 'shutdown'} "
                                f"Actual: {'up' if have.admin_up else 'shutdown'}")
            if want.description and have.description != want.description:
                problems.append(f"{port} description: Expected: {want.description!r} Actual: {have.description!r}")
        return problems + routed.unmet_routed(self, intended, facts.config_lines)

    @staticmethod
    def commands(changes: list[Change]) -> list[str]:
        """Changes as the CLI lines to type, entering each mode once."""
        lines: list[str] = []
        current: str | None = None
        for change in changes:
            if change.context != current:
                if current is not None:
                    lines.append("exit")
                if change.context is not None:
                    lines.append(change.context)
                current = change.context
            lines.append(change.line)
        if current is not None:
            lines.append("exit")
        return lines

    # --- rendering --------------------------------------------------------------------------
    def render(self, intended: IntendedSwitch, facts: SwitchFacts | None = None) -> str:
        """Config text of the managed part: intended (facts=None) or as observed (facts given)."""
        ports = []
        observed = set(facts.interfaces) if facts else None
        for port in sorted(intended.managed_ports(observed), key=port_sort_key):
            want = intended.wanted(port)
            if want is None:
                continue
            if facts is None:
                ports.append({"context": self.context(port), "description": want.description, "mtu": want.mtu,
                              "speed_gbps": want.speed_gbps, "admin_up": want.admin_up, "extra": []})
                continue
            have = facts.interfaces.get(port)
            if have is None:
                continue
            speed = have.speed_gbps if want.speed_gbps else None
            ports.append({"context": self.context(port), "description": have.description if want.description else "",
                          "mtu": have.mtu if want.mtu else 0, "speed_gbps": speed, "admin_up": have.admin_up,
                          "extra": self.pfc_port_lines(facts.pfc, port)})
        global_lines = self.pfc_global_lines(facts.pfc) if facts else []
        blocks = routed.routed_blocks(self, intended, None if facts is None else facts.config_lines or ())
        global_lines += blocks.pop(None, [])
        for p in ports:
            p["extra"] += blocks.pop(p["context"], [])
        if facts:
            for port in sorted({*facts.pfc.ports, *facts.pfc.port_priorities}, key=port_sort_key):
                if self.pfc_port_lines(facts.pfc, port) and not any(p["context"] == self.context(port) for p in ports):
                    global_lines += [f"{self.context(port)} {line}" if self.flat_config else line
                                     for line in self.pfc_port_lines(facts.pfc, port)]
        return _ENV.get_template(self.template).render(
            name=intended.name, platform=self.platform, ports=ports, global_lines=global_lines, cmd=self,
            blocks=blocks,
        )
