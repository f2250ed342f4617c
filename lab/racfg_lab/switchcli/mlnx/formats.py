"""Onyx's show output (``| json-print`` objects as Onyx 3.6 prints them, MTU string and all) and the
running-config text Onyx and MLNX-OS InfiniBand share."""

from __future__ import annotations

import time
from typing import Any

from racfg.catalog import IB_MTUS, ib_speed_name
from racfg.switches.ports import device_port
from racfg_lab.switchcli import lldp
from racfg_lab.switchcli.formats.common import _ports, _uptime
from racfg_lab.switchcli.mlnx.route_formats import onyx_l3_lines
from racfg_lab.switchcli.state import DEFAULT_MTU, SwitchConfig
from racfg_lab.switchcli.switch import EmulatedSwitch


# --- Onyx ---------------------------------------------------------------------------------
def onyx_interfaces(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    out = []
    for i, port in enumerate(_ports(sw, config), start=1):
        st = sw.status(port, config)
        c = st.counters
        out.append({
            "Fec": "auto", "Mac address": sw.mac(i), "Actual speed": f"{st.speed_gbps:g} Gbps",
            "MTU": f"{st.mtu} bytes(Maximum packet size {st.mtu + 22} bytes)", "header": f"Eth{port}",
            "Description": st.description or "N\\A", "Admin state": "Enabled" if st.admin_up else "Disabled",
            "Operational state": "Up" if st.oper_up else "Down", "Flow-control": "receive off send off",
            "Switchport mode": "access",
            "Rx": {"packets": str(c["rx_packets"]), "bytes": str(c["rx_bytes"]), "error packets": str(c["rx_errors"]),
                   "discard packets": str(c["rx_dropped"]), "multicast packets": str(c["multicast"])},
            "Tx": {"packets": str(c["tx_packets"]), "bytes": str(c["tx_bytes"]), "error packets": str(c["tx_errors"]),
                   "discard packets": str(c["tx_dropped"])},
        })
    return out


def onyx_pfc(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    prios = config.pfc_priorities
    return [
        {"PFC": "enabled" if config.pfc else "disabled", "Priority Enabled List": " ".join(map(str, prios)),
         "Interfaces Enabled": " ".join(f"Eth{p}" for p in _ports(sw, config) if config.ports[p].pfc)},
        {f"Priority {p}": [{"Enabled": "Enabled" if p in prios else "Disabled"}] for p in range(8)},
        {f"Eth{p}": [{"PFC admin": "on" if config.ports[p].pfc else "Auto",
                      "PFC oper": "Enabled" if config.ports[p].pfc and config.pfc else "Disabled"}]
         for p in _ports(sw, config)},
    ]


def onyx_version(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    return {
        "Product name": "Onyx", "Product release": sw.version, "Build ID": "#1-dev",
        "Product model": "x86onie", "Target arch": "x86_64", "Uptime": f"{_uptime(sw):.3f}s",
        "Version summary": f"X86_64 {sw.version} 2019-01-01 00:00:00 x86_64", "Host ID": "racfglab",
        "System serial num": f"LAB{sw.cfg.name.upper()}",
    }


_ONYX_ID_SUBTYPE = {"mac": "Mac Address", "ifname": "Interface Name", "local": "Local", "ip": "Network Address",
                    "ifalias": "Interface Alias"}
_ONYX_CAPS = {"Bridge": "B", "Wlan": "W", "Router": "R", "Station": "S", "Repeater": "P", "Telephone": "T",
              "Docsis": "C", "Other": "O"}


def onyx_lldp_remote(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    out: dict[str, Any] = {}
    for port, neighbors in lldp.heard_by_port(sw, config):
        out[device_port("onyx", port)] = [{
            "Remote Index": str(index), "Remote chassis id": n.chassis_id or "N\\A",
            "chassis id subtype": _ONYX_ID_SUBTYPE.get(n.chassis_id_type, n.chassis_id_type or "N\\A"),
            "Remote port-id": n.port_id, "port id subtype": _ONYX_ID_SUBTYPE.get(n.port_id_type, n.port_id_type),
            "Remote port description": n.port_description or "N\\A", "Remote system name": n.system_name,
            "Remote system description": n.system_description or "N\\A",
            "Remote system capabilities supported": ",".join(_ONYX_CAPS.get(c, "O") for c in n.capabilities) or "N\\A",
            "Remote system capabilities enabled":
                ",".join(_ONYX_CAPS.get(c, "O") for c, on in n.capabilities.items() if on) or "N\\A",
        } for index, n in enumerate(neighbors, start=1)]
    return out


def mlnx_config_files(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    """``show configuration files``: the saved files and whether the running config has unsaved changes."""
    startup = sw.store.load() or sw.factory
    unsaved = _config_body(mlnx_running(sw, config)) != _config_body(mlnx_running(sw, startup))
    return ("initial (active)\ninitial.bak\n\nActive configuration: initial\n"
            f"Unsaved changes: {'yes' if unsaved else 'no'}\n")


def _config_body(text: str) -> list[str]:
    """A running-config without its comment header (which carries the time it was generated)."""
    return [line for line in text.splitlines() if not line.startswith("##")]


def mlnx_running(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    keyword = "ethernet" if sw.cfg.platform == "onyx" else "ib"
    default_mtu = DEFAULT_MTU[sw.cfg.platform]
    lines = ["##", '## Running database "initial"', f"## Generated at {time.strftime('%Y/%m/%d %H:%M:%S')}",
             "##", "## Interface configuration", "##"]
    for port in _ports(sw, config):
        pc = config.ports[port]
        ctx = f"   interface {keyword} {port}"
        if pc.mtu != default_mtu:
            mtu = IB_MTUS.get(pc.mtu, str(pc.mtu)) if keyword == "ib" else f"{pc.mtu} force"
            lines.append(f"{ctx} mtu {mtu}")
        if pc.speed_gbps != sw.cfg.default_speed_gbps:
            speed = f"{pc.speed_gbps:g}G force"
            if keyword == "ib":
                speed = ib_speed_name(pc.speed_gbps) or f"{pc.speed_gbps:g}G"
            lines.append(f"{ctx} speed {speed}")
        if pc.description:
            lines.append(f"{ctx} description {pc.description}")
        if not pc.admin_up:
            lines.append(f"{ctx} shutdown")
        if pc.pfc:
            lines.append(f"{ctx} dcb priority-flow-control mode on force")
    if config.pfc or config.pfc_priorities:
        lines += ["##", "## DCB PFC configuration", "##"]
        if config.pfc:
            lines.append("   dcb priority-flow-control enable force")
        lines += [f"   dcb priority-flow-control priority {p} enable" for p in config.pfc_priorities]
    if config.roce:
        lines += ["##", "## RoCE configuration", "##", "   roce"]
    lines += onyx_l3_lines(config.l3)
    lines += ["##", "## Network management configuration", "##", f"   hostname {config.hostname}", "##"]
    return "\n".join(lines)
