"""Show-command output in each platform's own formats: Onyx ``| json-print`` objects (as Onyx
3.6 prints them, MTU string and all), EOS ``| json``, MLNX-OS IB text blocks, and each
platform's running-config text. The racfg parsers read exactly these, and real switches."""

from __future__ import annotations

import json
import time
from typing import Any

from racfg.lab.switchcli.state import DEFAULT_MTU, SwitchConfig
from racfg.lab.switchcli.switch import EmulatedSwitch
from racfg.switches.ports import device_port, port_sort_key

_IB_SPEED = {10.0: "sdr", 20.0: "ddr", 40.0: "qdr", 56.0: "fdr", 100.0: "edr", 200.0: "hdr", 400.0: "ndr"}
_IB_MTU = {256: "256", 512: "512", 1024: "1K", 2048: "2K", 4096: "4K"}


def _ports(sw: EmulatedSwitch, config: SwitchConfig) -> list[str]:
    return sorted(config.ports, key=port_sort_key)


def _uptime(sw: EmulatedSwitch) -> float:
    return time.time() - sw.boot_time


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


def onyx_lldp_remote(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    out: dict[str, Any] = {}
    for port, cabled in sorted(sw.cfg.ports.items(), key=lambda kv: port_sort_key(kv[0])):
        if not sw.status(port, config).oper_up:
            continue
        out[f"Eth{port}"] = [{
            "Remote Index": "1", "Remote chassis id": cabled.peer_mac or "N\\A", "chassis id subtype": "Mac Address",
            "Remote port-id": cabled.peer_nic, "port id subtype": "Interface Name",
            "Remote port description": cabled.peer_nic, "Remote system name": cabled.peer_host,
            "Remote system description": "Debian GNU/Linux", "Remote system capabilities supported": "B,W,R,S",
        }]
    return out


def mlnx_running(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    keyword = "ethernet" if sw.cfg.platform == "onyx" else "ib"
    default_mtu = DEFAULT_MTU[sw.cfg.platform]
    lines = ["##", '## Running database "initial"', f"## Generated at {time.strftime('%Y/%m/%d %H:%M:%S')}",
             "##", "## Interface configuration", "##"]
    for port in _ports(sw, config):
        pc = config.ports[port]
        ctx = f"   interface {keyword} {port}"
        if pc.mtu != default_mtu:
            mtu = _IB_MTU.get(pc.mtu, str(pc.mtu)) if keyword == "ib" else f"{pc.mtu} force"
            lines.append(f"{ctx} mtu {mtu}")
        if pc.speed_gbps != sw.cfg.default_speed_gbps:
            speed = f"{pc.speed_gbps:g}G force"
            if keyword == "ib":
                speed = _IB_SPEED.get(pc.speed_gbps, f"{pc.speed_gbps:g}G")
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
    lines += ["##", "## Network management configuration", "##", f"   hostname {config.hostname}", "##"]
    return "\n".join(lines)


# --- MLNX-OS InfiniBand ---------------------------------------------------------------------
def ib_interfaces(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    blocks = []
    for port in _ports(sw, config):
        st = sw.status(port, config)
        c = st.counters
        blocks.append("\n".join([
            f"IB{port} state:",
            f"    Admin state                  : {'Enabled' if st.admin_up else 'Disabled'}",
            f"    Logical port state           : {'Active' if st.oper_up else 'Down'}",
            f"    Physical port state          : {'LinkUp' if st.oper_up else 'Polling'}",
            f"    Current line rate            : {f'{st.speed_gbps:.1f} Gbps' if st.oper_up else 'N/A'}",
            f"    Speed                        : {_IB_SPEED.get(st.speed_gbps, 'edr')}",
            "    Width                        : 4X",
            "    Max supported MTUs           : 4096",
            f"    MTU                          : {st.mtu}",
            f"    Description                  : {st.description or 'N/A'}",
            "",
            "Rx:",
            f"    {c['rx_packets']:<20} packets",
            f"    {c['rx_bytes']:<20} bytes",
            f"    {c['rx_errors']:<20} error packets",
            "Tx:",
            f"    {c['tx_packets']:<20} packets",
            f"    {c['tx_bytes']:<20} bytes",
            f"    {c['tx_dropped']:<20} discard packets",
        ]))
    return "\n\n".join(blocks)


def ib_version(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    return "\n".join([
        "Product name:      MLNX-OS", f"Product release:   {sw.version}", "Build ID:          #1-dev",
        "Product model:     x86onie", "Target arch:       x86_64", f"Uptime:            {_uptime(sw):.0f}s",
        f"Version summary:   X86_64 {sw.version} 2019-01-01 00:00:00 x86_64",
    ])


# --- EOS ------------------------------------------------------------------------------------
def eos_interfaces(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    out: dict[str, Any] = {}
    for i, port in enumerate(_ports(sw, config), start=1):
        st = sw.status(port, config)
        c = st.counters
        status = "connected" if st.oper_up else ("disabled" if not st.admin_up else "notconnect")
        out[port] = {
            "name": port, "interfaceStatus": status, "lineProtocolStatus": "up" if st.oper_up else "down",
            "mtu": st.mtu, "bandwidth": int(st.speed_gbps * 1e9), "description": st.description,
            "hardware": "ethernet", "duplex": "duplexFull", "forwardingModel": "bridged",
            "physicalAddress": sw.mac(i), "burnedInAddress": sw.mac(i), "interfaceAddress": [],
            "interfaceCounters": {"inOctets": c["rx_bytes"], "outOctets": c["tx_bytes"],
                                  "inUcastPkts": c["rx_packets"], "outUcastPkts": c["tx_packets"],
                                  "totalInErrors": c["rx_errors"], "totalOutErrors": c["tx_errors"],
                                  "inDiscards": c["rx_dropped"], "outDiscards": c["tx_dropped"],
                                  "inMulticastPkts": c["multicast"]},
        }
    return {"interfaces": out}


def eos_pfc(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    return {"interfaceStatuses": {
        p: {"enabled": config.ports[p].pfc, "active": config.ports[p].pfc, "priorities": config.ports[p].pfc_priorities}
        for p in _ports(sw, config)}}


def eos_version(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    return {"mfgName": "Arista", "modelName": sw.cfg.model, "version": sw.version, "architecture": "x86_64",
            "serialNumber": f"LAB{sw.cfg.name.upper()}", "systemMacAddress": sw.mac(0),
            "uptime": _uptime(sw), "bootupTimestamp": sw.boot_time, "isIntlVersion": False}


def eos_lldp(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    neighbors = [
        {"port": port, "neighborDevice": c.peer_host, "neighborPort": c.peer_nic, "ttl": 120}
        for port, c in sorted(sw.cfg.ports.items(), key=lambda kv: port_sort_key(kv[0]))
        if sw.status(port, config).oper_up
    ]
    return {"lldpNeighbors": neighbors, "tablesInserts": len(neighbors), "tablesDeletes": 0, "tablesDrops": 0,
            "tablesAgeOuts": 0}


def eos_running(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    lines = ["! Command: show running-config", f"! device: {config.hostname} ({sw.cfg.model}, EOS-{sw.version})",
             "!", f"hostname {config.hostname}", "!"]
    for port in _ports(sw, config):
        pc = config.ports[port]
        lines.append(f"interface {port}")
        if pc.description:
            lines.append(f"   description {pc.description}")
        if pc.mtu != 1500:
            lines.append(f"   mtu {pc.mtu}")
        if pc.speed_gbps != sw.cfg.default_speed_gbps:
            lines.append(f"   speed forced {pc.speed_gbps:g}gfull")
        if pc.pfc:
            lines.append("   priority-flow-control on")
        lines += [f"   priority-flow-control priority {p} no-drop" for p in pc.pfc_priorities]
        if not pc.admin_up:
            lines.append("   shutdown")
        lines.append("!")
    lines.append("end")
    return "\n".join(lines)


def eos_version_text(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    return (f"Arista {sw.cfg.model}\nHardware version: 11.00\nSerial number: LAB{sw.cfg.name.upper()}\n"
            f"System MAC address: {sw.mac(0)}\n\nSoftware image version: {sw.version}\nArchitecture: x86_64\n")


def eos_status_text(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    rows = ["Port       Name                    Status       Vlan     Duplex Speed  Type"]
    for port in _ports(sw, config):
        st = sw.status(port, config)
        state = "connected" if st.oper_up else ("disabled" if not st.admin_up else "notconnect")
        rows.append(f"{device_port('eos', port, short=True):<10} {st.description[:23]:<23} {state:<12} 1"
                    f"        full   {st.speed_gbps:g}G  100GBASE-CR4")
    return "\n".join(rows)


def to_json(data: Any) -> str:
    return json.dumps(data, indent=4)
