"""Arista EOS's show output: ``| json`` and text, as arista.eos, pyeapi and ANTA read it."""

from __future__ import annotations

from typing import Any

from racfg.switches.ports import device_port
from racfg_lab.switchcli import lldp
from racfg_lab.switchcli.eos.route_formats import eos_l3_lines, eos_port_l3_lines, eos_vlan_lines
from racfg_lab.switchcli.formats.common import _ports, _uptime
from racfg_lab.switchcli.state import SwitchConfig
from racfg_lab.switchcli.switch import EmulatedSwitch


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
             "!", f"hostname {config.hostname}", "!", *eos_vlan_lines(config.l3)]
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
        lines += eos_port_l3_lines(config.l3, port)
        lines.append("!")
    lines += eos_l3_lines(config.l3)
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
    """Pending sessions; ``instances``: the CLIs now in each (none: whoever opened it has gone)."""
    def instances(name: str) -> dict[str, Any]:
        return {str(index): {"user": sw.cfg.username, "terminal": terminal, "currentTerminal": False}
                for index, terminal in enumerate(sorted(sw.session_terminals.get(name, ())), start=1)}

    return {"maxSavedSessions": 1, "maxOpenSessions": 5,
            "sessions": {name: {"state": "pending", "completedTime": 0, "commitUser": "", "description": "",
                                "instances": instances(name)} for name in sorted(sw.sessions)}}


def eos_sessions_text(sw: EmulatedSwitch, config: SwitchConfig) -> str:
    rows = ["Maximum number of completed sessions: 1", "Maximum number of pending sessions: 5", "",
            "  Name       State         User    Terminal", "  ---------- ------------- ------- --------"]
    for name in sorted(sw.sessions):
        terminals = sorted(sw.session_terminals.get(name, ()))
        rows += [f"  {name:<10} pending       {sw.cfg.username:<7} {t}" for t in terminals] or [f"  {name:<10} pending"]
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
