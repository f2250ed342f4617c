"""Show-command output in each platform's own formats: Onyx ``| json-print`` objects (as Onyx
3.6 prints them, MTU string and all), EOS ``| json``, MLNX-OS IB text blocks, and each
platform's running-config text. The racfg parsers read exactly these, and real switches."""

from __future__ import annotations

import json
import time
from typing import Any

from racfg.catalog import IB_MTUS, ib_speed_name
from racfg.lab.switchcli import lldp
from racfg.lab.switchcli.state import DEFAULT_MTU, SwitchConfig
from racfg.lab.switchcli.switch import EmulatedSwitch
from racfg.switches.ports import device_port, port_sort_key


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
            f"    Speed                        : {ib_speed_name(st.speed_gbps) or 'edr'}",
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
    return {"mfgName": "Arista", "modelName": eos_model_name(sw), "hardwareRevision": "11.00",
            "version": sw.version, "internalVersion": sw.version, "architecture": "x86_64",
            "serialNumber": f"LAB{sw.cfg.name.upper()}", "systemMacAddress": sw.mac(0),
            "hwMacAddress": sw.mac(0), "configMacAddress": "00:00:00:00:00:00", "imageFormatVersion": "1.0",
            "uptime": _uptime(sw), "bootupTimestamp": sw.boot_time, "memTotal": 8099732, "memFree": 5433320,
            "isIntlVersion": False}


def eos_lldp(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    neighbors = [
        {"port": device_port("eos", port), "neighborDevice": n.system_name, "neighborPort": n.port_id,
         "ttl": n.ttl if n.ttl is not None else 120}
        for port, heard in lldp.heard_by_port(sw, config) for n in heard
    ]
    return {"lldpNeighbors": neighbors, "tablesInserts": len(neighbors), "tablesDeletes": 0, "tablesDrops": 0,
            "tablesAgeOuts": 0}


def eos_running_all(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    """``show running-config all``: defaults spelled out too (pyeapi reads ``no shutdown`` from it)."""
    return eos_running(sw, config, defaults=True)


def eos_running(sw: EmulatedSwitch, config: SwitchConfig, defaults: bool = False) -> str:
    lines = ["! Command: show running-config", f"! device: {config.hostname} ({sw.cfg.model}, EOS-{sw.version})",
             "!", f"hostname {config.hostname}", "!"]
    for port in _ports(sw, config):
        pc = config.ports[port]
        lines.append(f"interface {port}")
        if pc.description:
            lines.append(f"   description {pc.description}")
        if pc.mtu != 1500 or defaults:
            lines.append(f"   mtu {pc.mtu}")
        if pc.speed_gbps != sw.cfg.default_speed_gbps:
            lines.append(f"   speed forced {pc.speed_gbps:g}gfull")
        if pc.pfc:
            lines.append("   priority-flow-control on")
        lines += [f"   priority-flow-control priority {p} no-drop" for p in pc.pfc_priorities]
        if not pc.admin_up or defaults:
            lines.append("   shutdown" if not pc.admin_up else "   no shutdown")
        lines.append("!")
    lines.append("end")
    return "\n".join(lines)


def eos_version_text(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    return (f"Arista {eos_model_name(sw)}\nHardware version: 11.00\nSerial number: LAB{sw.cfg.name.upper()}\n"
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


# --- EOS: what arista.eos, pyeapi and ANTA read -----------------------------------------------
def eos_model_name(sw: EmulatedSwitch) -> str:
    """EOS reports the orderable model (``DCS-7060CX-32S``), virtual switches ``vEOS-lab``; ANTA
    picks its platform checks from it (and skips hardware counters on virtual platforms)."""
    model = sw.cfg.model
    return "vEOS-lab" if model.lower().startswith("veos") else f"DCS-{model}"


def eos_hostname(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    return {"hostname": config.hostname, "fqdn": config.hostname}


def eos_hostname_text(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    return f"Hostname: {config.hostname}\nFQDN:     {config.hostname}"


def _eos_status(st: Any) -> tuple[str, str]:
    """(interfaceStatus, lineProtocolStatus) as ``show interfaces description`` prints them."""
    if not st.admin_up:
        return "adminDown", "down"
    return ("up", "up") if st.oper_up else ("down", "lowerLayerDown")


def eos_descriptions(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    out = {}
    for port in _ports(sw, config):
        st = sw.status(port, config)
        status, proto = _eos_status(st)
        out[port] = {"description": st.description, "interfaceStatus": status, "lineProtocolStatus": proto}
    return {"interfaceDescriptions": out}


def eos_descriptions_text(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    rows = [f"{'Interface':<30} {'Status':<14} {'Protocol':<18} Description"]
    for port, entry in eos_descriptions(sw, config)["interfaceDescriptions"].items():
        status = "admin down" if entry["interfaceStatus"] == "adminDown" else entry["interfaceStatus"]
        rows.append(f"{device_port('eos', port, short=True):<30} {status:<14} {entry['lineProtocolStatus']:<18} "
                    f"{entry['description']}".rstrip())
    return "\n".join(rows)


def eos_lldp_detail(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    """``show lldp neighbors detail``, built from the same neighbour table as ``show lldp neighbors``
    (eos_lldp), so the two can never disagree."""
    detail: dict[str, Any] = {port: {"lldpNeighborInfo": []} for port in _ports(sw, config)}
    for n in eos_lldp(sw, config)["lldpNeighbors"]:
        detail.setdefault(n["port"], {"lldpNeighborInfo": []})["lldpNeighborInfo"].append({
            "chassisIdType": "macAddress", "chassisId": "", "systemName": n["neighborDevice"], "ttl": n["ttl"],
            "neighborDiscoveryTime": sw.boot_time, "lastChangeTime": sw.boot_time,
            "neighborInterfaceInfo": {
                "interfaceIdType": "interfaceName", "interfaceId": f'"{n["neighborPort"]}"',
                "interfaceId_v2": n["neighborPort"], "interfaceDescription": n["neighborPort"],
            },
        })
    return {"lldpNeighbors": detail}


def eos_pfc_text(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    """``show priority-flow-control``: one line per port, E(nabled)/A(ctive) and its no-drop priorities."""
    rows = ["The hardware supports PFC on priorities 0 1 2 3 4 5 6 7", "",
            "E: PFC Enabled, D: PFC Disabled, A: PFC Active, W: PFC Watchdog Enabled",
            f"{'Port':<10} {'Status':<7} {'Priorities':<11} {'Action':<6} Note",
            "-" * 50]
    for port in _ports(sw, config):
        pc = config.ports[port]
        if not pc.pfc and not pc.pfc_priorities:
            continue
        status = "E A" if pc.pfc else "D"
        prios = ",".join(map(str, pc.pfc_priorities)) or "-"
        rows.append(f"{device_port('eos', port, short=True):<10} {status:<7} {prios:<11} {'-':<6} DCBX disabled")
    return "\n".join(rows)


def eos_pfc_counters(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    """PFC frames sent/received per port: zero, as on any port of the lab (nothing there sends pause frames)."""
    return {"interfaceCounters": {p: {"rxFrames": 0, "txFrames": 0} for p in _ports(sw, config)}}


def eos_startup(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    return eos_running(sw, sw.store.load() or sw.factory)


def eos_running_diffs(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    """``show running-config diffs``: startup -> running as a unified diff, empty when saved."""
    import difflib

    before, after = eos_startup(sw, config).splitlines(), eos_running(sw, config).splitlines()
    return "\n".join(difflib.unified_diff(before, after, "flash:/startup-config", "system:/running-config",
                                          lineterm=""))


def eos_sessions(sw: EmulatedSwitch, config: SwitchConfig) -> Any:
    return {"maxSavedSessions": 1, "maxOpenSessions": 5,
            "sessions": {name: {"state": "pending", "completedTime": 0, "commitUser": "", "description": "",
                                "instances": {}} for name in sorted(sw.sessions)}}


def eos_sessions_text(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    rows = ["Maximum number of completed sessions: 1", "Maximum number of pending sessions: 5", "",
            "  Name       State         User    Terminal", "  ---------- ------------- ------- --------"]
    rows += [f"  {name:<10} pending" for name in sorted(sw.sessions)]
    return "\n".join(rows)


def eos_dir(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    return ("Directory of flash:/\n\n       -rw-        1024  Jan  1 00:00  startup-config\n\n"
            "3440504832 bytes total (2847588352 bytes free)\n\n"
            "Directory of file:/\n\n       dr-x           0  Jan  1 00:00  mnt\n")


def eos_running_section(text: str, pattern: str) -> str:
    """``| section REGEX`` as EOS filters a nested config: a top-level block whose first line matches is
    kept whole; otherwise only its matching child lines are kept, under their parent."""
    import re

    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith(" ") and blocks:
            blocks[-1].append(line)
        elif line and not line.startswith("!"):
            blocks.append([line])
    out: list[str] = []
    for block in blocks:
        if re.search(pattern, block[0]):
            out += block
        elif children := [c for c in block[1:] if re.search(pattern, c)]:
            out += [block[0], *children]
    return "\n".join(out)
