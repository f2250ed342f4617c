"""MLNX-OS InfiniBand's show output: text blocks, as the IB switches print them."""

from __future__ import annotations

from racfg.catalog import ib_speed_name
from racfg_lab.switchcli.formats.common import _ports, _uptime
from racfg_lab.switchcli.state import SwitchConfig
from racfg_lab.switchcli.switch import EmulatedSwitch


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
