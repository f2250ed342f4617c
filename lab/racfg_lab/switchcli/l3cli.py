"""The emulated CLI's layer-3 commands: ``ip routing``, VLANs, routed ports, VLAN interfaces, BGP.

The grammar of each platform is in its folder's grammar.py (EOS: ``interface Ethernet1`` / ``no switchport`` /
``ip address A/31``, ``interface Vlan10``, ``router bgp 65001`` then ``neighbor X remote-as Y``,
``maximum-paths 2 ecmp 2``; Onyx: the one-line forms ``interface ethernet 1/29 no switchport force``,
``interface vlan 10 ip address A/24``, ``router bgp 65001 neighbor X remote-as Y``, ``network P /24``).
What a command changes lands in the running config (``SwitchConfig.l3``) and, outside a config
session, on the switch at once (``EmulatedSwitch.sync_l3``: the namespace and FRR), as on a real switch.
"""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING

from racfg_lab.switchcli.errors import CliError
from racfg_lab.switchcli.routing import BgpConfig, RoutingConfig, parse_interface_address, parse_prefix

if TYPE_CHECKING:
    from racfg_lab.switchcli.platforms import Platform
    from racfg_lab.switchcli.state import SwitchConfig
    from racfg_lab.switchcli.switch import EmulatedSwitch

_SVI_WORD = re.compile(r"vlan(\d+)", re.IGNORECASE)


class RoutingCommands:
    """Mixed into the CLI session (engine.CliSession), which provides these attributes."""

    sw: EmulatedSwitch
    p: Platform
    mode: str
    port: str | None
    svi: int | None
    session: str | None
    config: SwitchConfig

    def _run(self, action: str, args: dict[str, str], pipe: str) -> str:
        raise NotImplementedError

    def _lookup(self, command: str, words: list[tuple[str, int]]) -> tuple[str, dict[str, str]]:
        raise NotImplementedError

    @property
    def l3(self) -> RoutingConfig:
        return self.config.l3

    def _l3_changed(self) -> str:
        if self.session is None:
            error = self.sw.sync_l3()
            if error:
                return f"% Failed to apply routing config: {error}"
        return ""

    def _inline(self, mode: str, rest: str, **state: object) -> str:
        """Onyx one-line forms (``interface ethernet 1/1 mtu 9000 force``, ``router bgp 65001 neighbor ...``):
        run ``rest`` in ``mode`` and return to the mode it was typed in."""
        saved = (self.mode, self.port, self.svi)
        self.mode = mode
        for key, value in state.items():
            setattr(self, key, value)
        try:
            words = [(m.group(0), m.start()) for m in re.finditer(r"\S+", rest)]
            action, sub = self._lookup(rest, words)
            if action in ("exit", "logout"):
                raise CliError(self.p.unknown_error.format(token=words[0][0], index=3))
            return self._run(action, sub, "")
        finally:
            self.mode, self.port, self.svi = saved

    @staticmethod
    def _number(text: str, low: int, high: int, what: str) -> int:
        if not text.isdigit() or not low <= int(text) <= high:
            raise CliError(f"% Invalid {what} {text}. Valid range is {low}-{high}.")
        return int(text)

    @staticmethod
    def _address(text: str, what: str = "address") -> str:
        try:
            return str(ipaddress.IPv4Address(text))
        except ValueError:
            raise CliError(f"% Invalid {what}: {text}") from None

    # --- global -------------------------------------------------------------------------------
    def do_ip_routing_on(self, args: dict[str, str]) -> str:
        self.l3.ip_routing = True
        return self._l3_changed()

    def do_ip_routing_off(self, args: dict[str, str]) -> str:
        self.l3.ip_routing = False
        return self._l3_changed()

    def do_protocol_bgp(self, args: dict[str, str]) -> str:
        self.l3.protocol_bgp = True
        return ""

    def do_no_protocol_bgp(self, args: dict[str, str]) -> str:
        self.l3.protocol_bgp = False
        return ""

    def do_vlan(self, args: dict[str, str]) -> str:
        """``vlan N``: create it and enter its mode (``name``)."""
        vlan = self._number(args["vid"], 1, 4094, "VLAN")
        self.l3.vlans = sorted({*self.l3.vlans, vlan})
        self.mode, self.svi, self.port = "vlan", vlan, None
        return ""

    def do_vlan_inline(self, args: dict[str, str]) -> str:
        vlan = self._number(args["vid"], 1, 4094, "VLAN")
        self.l3.vlans = sorted({*self.l3.vlans, vlan})
        return self._inline("vlan", args["rest"], svi=vlan, port=None)

    def do_vlan_name(self, args: dict[str, str]) -> str:
        assert self.svi is not None
        self.l3.vlan_names[self.svi] = args["text"].strip('"')
        return ""

    def do_vlan_no_name(self, args: dict[str, str]) -> str:
        assert self.svi is not None
        self.l3.vlan_names.pop(self.svi, None)
        return ""

    def do_svi_mtu(self, args: dict[str, str]) -> str:
        """A VLAN interface's MTU (kept and shown; the lab's bridge takes its ports' MTU)."""
        assert self.svi is not None
        low, high = self.p.mtu_range
        self.l3.svi_mtu[self.svi] = self._number(args["mtu"], low, high, "MTU")
        return ""

    def do_svi_no_mtu(self, args: dict[str, str]) -> str:
        assert self.svi is not None
        self.l3.svi_mtu.pop(self.svi, None)
        return ""

    # --- VLAN interfaces ----------------------------------------------------------------------
    def enter_svi(self, text: str) -> bool:
        """``interface Vlan10`` (EOS, one word): enter the VLAN interface; False for other interfaces."""
        match = _SVI_WORD.fullmatch(text)
        if not match or self.p.name != "eos":
            return False
        self.do_svi({"vid": match.group(1)})
        return True

    def do_svi(self, args: dict[str, str]) -> str:
        vlan = self._number(args["vid"], 1, 4094, "VLAN")
        self.l3.svis.setdefault(vlan, "")
        self.mode, self.svi, self.port = "svi", vlan, None
        return ""

    def do_svi_inline(self, args: dict[str, str]) -> str:
        vlan = self._number(args["vid"], 1, 4094, "VLAN")
        self.l3.svis.setdefault(vlan, "")
        return self._inline("svi", args["rest"], svi=vlan, port=None)

    def do_no_svi(self, args: dict[str, str]) -> str:
        self.l3.svis.pop(self._number(args["vid"], 1, 4094, "VLAN"), None)
        return self._l3_changed()

    # --- ports --------------------------------------------------------------------------------
    def do_port_routed(self, args: dict[str, str]) -> str:
        assert self.port is not None
        self.l3.routed_ports.setdefault(self.port, "")
        self.l3.access_vlan.pop(self.port, None)
        return self._l3_changed()

    def do_port_switched(self, args: dict[str, str]) -> str:
        assert self.port is not None
        self.l3.routed_ports.pop(self.port, None)
        return self._l3_changed()

    def do_port_access_vlan(self, args: dict[str, str]) -> str:
        assert self.port is not None
        vlan = self._number(args["vid"], 1, 4094, "VLAN")
        if self.port in self.l3.routed_ports:
            raise CliError(f"% Interface {self.port} is a routed port: configure 'switchport' first")
        self.l3.access_vlan[self.port] = vlan
        self.l3.vlans = sorted({*self.l3.vlans, vlan})
        return self._l3_changed()

    def do_port_no_access_vlan(self, args: dict[str, str]) -> str:
        assert self.port is not None
        self.l3.access_vlan.pop(self.port, None)
        return self._l3_changed()

    def do_ip_address(self, args: dict[str, str]) -> str:
        try:
            address = parse_interface_address(args["addr"], args.get("mask"))
        except ValueError as exc:
            raise CliError(f"% Invalid IP address: {exc}") from None
        if self.mode == "svi":
            assert self.svi is not None
            self.l3.svis[self.svi] = address
        else:
            assert self.port is not None
            if self.port not in self.l3.routed_ports:
                raise CliError(f"% Interface {self.port} is not a routed port: configure 'no switchport' first")
            self.l3.routed_ports[self.port] = address
        return self._l3_changed()

    def do_no_ip_address(self, args: dict[str, str]) -> str:
        if self.mode == "svi":
            assert self.svi is not None
            self.l3.svis[self.svi] = ""
        elif self.port in self.l3.routed_ports:
            self.l3.routed_ports[self.port] = ""
        return self._l3_changed()

    # --- BGP ----------------------------------------------------------------------------------
    def _bgp(self, asn_text: str) -> BgpConfig:
        asn = self._number(asn_text, 1, 4294967295, "AS number")
        bgp = self.l3.bgp
        if bgp is not None and bgp.asn != asn:
            raise CliError(f"% BGP is already running with AS number {bgp.asn}")
        if bgp is None:
            bgp = self.l3.bgp = BgpConfig(asn)
        return bgp

    def do_router_bgp(self, args: dict[str, str]) -> str:
        self._bgp(args["asn"])
        self.mode, self.port, self.svi = "bgp", None, None
        return self._l3_changed()

    def do_bgp_inline(self, args: dict[str, str]) -> str:
        self._bgp(args["asn"])
        return self._inline("bgp", args["rest"])

    def do_no_router_bgp(self, args: dict[str, str]) -> str:
        if self.l3.bgp is not None and str(self.l3.bgp.asn) == args["asn"]:
            self.l3.bgp = None
        return self._l3_changed()

    @property
    def _router(self) -> BgpConfig:
        assert self.l3.bgp is not None
        return self.l3.bgp

    def do_bgp_router_id(self, args: dict[str, str]) -> str:
        self._router.router_id = self._address(args["id"], "router id")
        return self._l3_changed()

    def do_bgp_no_router_id(self, args: dict[str, str]) -> str:
        self._router.router_id = ""
        return self._l3_changed()

    def do_bgp_no_maximum_paths(self, args: dict[str, str]) -> str:
        self._router.maximum_paths = 1
        return self._l3_changed()

    def do_bgp_neighbor(self, args: dict[str, str]) -> str:
        peer = self._address(args["peer"], "neighbor address")
        self._router.neighbors[peer] = self._number(args["asn"], 1, 4294967295, "AS number")
        return self._l3_changed()

    def do_bgp_no_neighbor(self, args: dict[str, str]) -> str:
        self._router.neighbors.pop(self._address(args["peer"], "neighbor address"), None)
        return self._l3_changed()

    def do_bgp_maximum_paths(self, args: dict[str, str]) -> str:
        self._router.maximum_paths = self._number(args["n"], 1, 128, "maximum paths")
        return self._l3_changed()

    def do_bgp_network(self, args: dict[str, str]) -> str:
        try:
            prefix = parse_prefix(args["prefix"], args.get("len"))
        except ValueError as exc:
            raise CliError(f"% Invalid prefix: {exc}") from None
        self._router.networks = sorted({*self._router.networks, prefix})
        return self._l3_changed()

    def do_bgp_no_network(self, args: dict[str, str]) -> str:
        try:
            prefix = parse_prefix(args["prefix"], args.get("len"))
        except ValueError as exc:
            raise CliError(f"% Invalid prefix: {exc}") from None
        self._router.networks = [n for n in self._router.networks if n != prefix]
        return self._l3_changed()

    def do_bgp_redistribute_connected(self, args: dict[str, str]) -> str:
        self._router.redistribute_connected = True
        return self._l3_changed()

    def do_bgp_no_redistribute_connected(self, args: dict[str, str]) -> str:
        self._router.redistribute_connected = False
        return self._l3_changed()
