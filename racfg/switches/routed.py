"""Routed fabrics (leaf-spine) on a switch: the settings a leaf or spine needs (routed ISLs with their
/31, the host subnets' VLANs and VLAN interfaces, the host ports in them, BGP), planned against the
routing settings of the running config as the minimal changes, and checked after an apply.

Platform-neutral: the wording of every line is the driver's (``SwitchDriver.routed_port`` ...), the
keys are the running-config parser's (``setting_key``), so what racfg types is what it reads back and
a second apply finds nothing to do. What the intent no longer holds is removed where racfg owns it
alone: BGP neighbours and networks of its BGP process, and a BGP process under another ASN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

from racfg.switches.facts import ConfigLine
from racfg.switches.intent import IntendedSwitch
from racfg.switches.parsers.running import setting_key


class SwitchDriver(Protocol):
    """The driver's wording of the routing settings (drivers/switch_driver.py; a Protocol here because the
    drivers import this module)."""

    routing_globals: tuple[str, ...]
    readdress_needs_removal: bool

    def context(self, port: str) -> str: ...
    def vlan_context(self, vlan: int) -> str: ...
    def bgp_context(self, asn: int) -> str: ...
    def routed_port(self) -> str: ...
    def ip_address(self, cidr: str) -> str: ...
    def router_id(self, address: str) -> str: ...
    def maximum_paths(self, paths: int) -> str: ...
    def network(self, prefix: str) -> str: ...


class Change(NamedTuple):
    """The fields of drivers.switch_driver.Change, which the driver builds from these."""

    context: str | None
    line: str
    undo: str | None
    what: str

# Settings of racfg's BGP process that it owns alone: configured ones the intent does not hold are removed
# (list items not in the intent; maximum-paths when the intent is the platforms' default of one path,
# which a running config does not print).
_OWNED = ("neighbor ", "network ", "maximum-paths")


@dataclass(frozen=True)
class Setting:
    """A wanted routing setting: the line in its mode, its key, and the line that removes it."""

    context: str | None
    key: str
    line: str
    negate: str


def _setting(context: str | None, line: str, negate: str) -> Setting:
    key = setting_key(context, line)
    if key is None:  # a driver's wording the running-config parser would not read back: a bug here
        raise ValueError(f"routing line {line!r} in {context!r} is not one the running-config parser reads")
    return Setting(context, key, line, negate)


def vlan_name(vlan: int) -> str:
    return f"racfg-hosts-{vlan}"


def wanted_settings(driver: SwitchDriver, intended: IntendedSwitch) -> list[Setting]:
    """Every routing setting of the switch, in the order a switch accepts them (VLAN before its
    interface and its ports, BGP after the addresses it peers from)."""
    routing = intended.routing
    if routing is None:
        return []
    out = [_setting(None, line, f"no {line}") for line in driver.routing_globals]
    for isl in routing.routed_ports:
        ctx = driver.context(isl.port)
        out += [_setting(ctx, driver.routed_port(), "switchport"),
                _setting(ctx, driver.ip_address(isl.address), "no ip address")]
    for vlan in routing.vlans:
        ctx = driver.vlan_context(vlan.vlan)
        out += [_setting(f"vlan {vlan.vlan}", f"name {vlan_name(vlan.vlan)}", "no name"),
                _setting(ctx, f"mtu {vlan.mtu}", "no mtu"),
                _setting(ctx, driver.ip_address(vlan.gateway), "no ip address")]
        out += [_setting(driver.context(port), f"switchport access vlan {vlan.vlan}", "no switchport access vlan")
                for port in vlan.ports]
    bgp = driver.bgp_context(routing.asn)
    out.append(_setting(bgp, driver.router_id(routing.router_id), "no router-id"))
    if routing.maximum_paths > 1:
        out.append(_setting(bgp, driver.maximum_paths(routing.maximum_paths), "no maximum-paths"))
    out += [_setting(bgp, f"neighbor {address} remote-as {asn}", f"no neighbor {address}")
            for address, asn in routing.neighbors]
    out += [_setting(bgp, driver.network(vlan.subnet), f"no {driver.network(vlan.subnet)}") for vlan in routing.vlans]
    return out


def _where(context: str | None) -> str:
    return context or "global"


def _extras(driver: SwitchDriver, intended: IntendedSwitch, have: tuple[ConfigLine, ...]) -> list[ConfigLine]:
    """Configured settings racfg owns that the intent does not hold: a BGP process under another ASN,
    neighbours and networks of its own process that are not in the intent."""
    if intended.routing is None:
        return []
    bgp = driver.bgp_context(intended.routing.asn)
    wanted = {(s.context, s.key) for s in wanted_settings(driver, intended)}
    return [c for c in have
            if (c.key == "router bgp" and c.line != bgp)
            or (c.context == bgp and c.key.startswith(_OWNED) and (c.context, c.key) not in wanted)]


def plan_routed(driver: SwitchDriver, intended: IntendedSwitch, have: tuple[ConfigLine, ...] | None) -> list[Change]:
    """The minimal changes from the configured routing settings ``have`` to the intended ones."""
    if intended.routing is None:
        return []
    now = {(c.context, c.key): c.line for c in have or ()}
    changes = []
    for extra in _extras(driver, intended, have or ()):
        if extra.key == "router bgp":  # its settings go with it; undo cannot rebuild them
            changes.append(Change(None, f"no {extra.line}", None, f"BGP process {extra.line!r} removed"))
        else:
            undo = f"no {extra.key}" if extra.key.startswith(("neighbor", "maximum-paths")) else f"no {extra.line}"
            changes.append(Change(extra.context, undo, extra.line, f"{extra.context}: {extra.line!r} removed"))
    for want in wanted_settings(driver, intended):
        old = now.get((want.context, want.key))
        if old == want.line:
            continue
        what = f"{_where(want.context)}: {old!r} -> {want.line!r}" if old else f"{_where(want.context)}: {want.line}"
        if old is not None and want.key == "ip address" and driver.readdress_needs_removal:
            changes.append(Change(want.context, "no ip address", old, f"{_where(want.context)}: {old!r} removed"))
            changes.append(Change(want.context, want.line, want.negate, what))
        else:
            changes.append(Change(want.context, want.line, old if old is not None else want.negate, what))
    return changes


def unmet_routed(driver: SwitchDriver, intended: IntendedSwitch, have: tuple[ConfigLine, ...] | None) -> list[str]:
    """The routing intent against the running config read back: what does not hold."""
    if intended.routing is None:
        return []
    if have is None:
        return ["routing: Expected: the running config read Actual: not read from the switch"]
    now = {(c.context, c.key): c.line for c in have}
    problems = [f"{_where(w.context)} {w.key}: Expected: {w.line!r} Actual: {now.get((w.context, w.key))!r}"
                for w in wanted_settings(driver, intended) if now.get((w.context, w.key)) != w.line]
    return problems + [f"{_where(e.context)}: Expected: absent Actual: {e.line!r}"
                       for e in _extras(driver, intended, have)]


def routed_blocks(driver: SwitchDriver, intended: IntendedSwitch, have: tuple[ConfigLine, ...] | None
                  ) -> dict[str | None, list[str]]:
    """The routing part of the managed config, mode by mode: intended (have=None) or as configured
    (the configured lines of every wanted setting, and the extras racfg would remove)."""
    blocks: dict[str | None, list[str]] = {}
    if have is None:
        for want in wanted_settings(driver, intended):
            blocks.setdefault(want.context, []).append(want.line)
        return blocks
    now = {(c.context, c.key): c.line for c in have}
    for want in wanted_settings(driver, intended):
        line = now.get((want.context, want.key))
        if line is not None:
            blocks.setdefault(want.context, []).append(line)
    for extra in _extras(driver, intended, have):
        blocks.setdefault(extra.context, []).append(extra.line)
    return blocks
