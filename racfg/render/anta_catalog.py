"""An ANTA test catalog (``anta-catalog.yml``) for the inventory's EOS switches.

EOS shops validate switches with ANTA; as Arista AVD derives ANTA tests from its fabric intent,
racfg derives them from the inventory, from the same intended state (racfg.switches.intent) that
deploy pushes and ``racfg validate`` checks, so both tools agree on what "correct" means:

- VerifyL2MTU: the intended MTU on every cabled port (uncabled ports are not racfg's business
  and are ignored, with ANTA's own default ignore list kept);
- VerifyInterfacesStatus: cabled ports up (unused ports admin-down when ``shutdown_unused``);
- VerifyLLDPNeighbors: on every cabled port the host and NIC the inventory cables there;
- VerifyInterfacesPFCCounters: no PFC frame sent or received on a cabled port (the RA runs no PFC);
- VerifyRunningConfigDiffs: the running config is saved;
- VerifyEOSVersion: the switch's ``os_version`` pin, when the inventory gives one.

Each test is limited to its switch with ``filters: tags: [<switch name>]`` (ANTA tags every device
with its name), so one catalog serves a site with several EOS switches. Test names and inputs are
those of ANTA 1.x. Pure: same inventory, same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from racfg.inventory.cluster import Cluster, ClusterSwitch
from racfg.render.ansible_inventory import switch_ports
from racfg.switches.intent import intended_for
from racfg.switches.ports import port_sort_key

CATALOG_FILE = "anta-catalog.yml"
# ANTA's VerifyL2MTU default ignore list, kept when racfg adds the uncabled ports to it.
ANTA_L2MTU_IGNORED = ["Dps", "Fabric", "Loopback", "Management", "Recirc-Channel", "Tunnel", "Vlan", "Vxlan"]
HEADER = ("# ANTA catalog rendered by racfg from {source}: the intended state of its EOS switches.\n"
          "# Run: anta nrfu -i <anta inventory> -c {file} (one device per switch, named as the switch).\n")


def switch_tests(cluster: Cluster, switch: ClusterSwitch) -> dict[str, list[dict[str, Any]]]:
    """The ANTA tests of one EOS switch, by ANTA module."""
    intended = intended_for(cluster, switch.name)
    cabled = switch_ports(cluster, switch)
    ports = sorted(intended.ports, key=port_sort_key)
    unused = [p for p in intended.panel_ports() if p not in intended.ports]

    def filters() -> dict[str, Any]:
        """A fresh mapping per test: YAML would write a shared one as an anchor and aliases."""
        return {"filters": {"tags": [switch.name]}}

    mtus = [{port: intended.ports[port].mtu} for port in ports]
    default_mtu = max((intended.ports[p].mtu for p in ports), default=cluster.fabric.effective_switch_mtu)
    status = [{"name": port, "status": "up" if intended.ports[port].admin_up else "adminDown"} for port in ports]
    if intended.shutdown_unused:
        status += [{"name": port, "status": "adminDown"} for port in unused]
    neighbors = [{"port": row["port"], "neighbor_device": row["host"], "neighbor_port": row["nic"]}
                 for row in sorted(cabled, key=lambda r: port_sort_key(r["port"]))]

    tests: dict[str, list[dict[str, Any]]] = {
        "anta.tests.interfaces": [
            {"VerifyL2MTU": {"mtu": default_mtu, "specific_mtu": mtus,
                             "ignored_interfaces": [*ANTA_L2MTU_IGNORED, *unused], **filters()}},
            {"VerifyInterfacesStatus": {"interfaces": status, **filters()}},
            {"VerifyInterfacesPFCCounters": {"interfaces": ports, "counters_threshold": 0, **filters()}},
        ],
        "anta.tests.connectivity": [
            {"VerifyLLDPNeighbors": {"neighbors": neighbors, "require_fqdn": False, **filters()}},
        ],
        "anta.tests.configuration": [{"VerifyRunningConfigDiffs": filters()}],
    }
    if switch.spec.os_version:
        tests["anta.tests.software"] = [{"VerifyEOSVersion": {"versions": [switch.spec.os_version], **filters()}}]
    return tests


def anta_catalog(cluster: Cluster) -> str | None:
    """The catalog text, or None when the inventory has no EOS switch."""
    catalog: dict[str, list[dict[str, Any]]] = {}
    for switch in sorted(cluster.switches.values(), key=lambda s: s.name):
        if switch.platform != "eos":
            continue
        for module, tests in switch_tests(cluster, switch).items():
            catalog.setdefault(module, []).extend(tests)
    if not catalog:
        return None
    body = yaml.safe_dump(dict(sorted(catalog.items())), sort_keys=False, default_flow_style=False, width=120)
    return HEADER.format(source=Path(cluster.display).name, file=CATALOG_FILE) + body


def anta_catalog_files(cluster: Cluster) -> dict[str, str]:
    """``{"anta-catalog.yml": text}`` for render_files, or {} without EOS switches."""
    text = anta_catalog(cluster)
    return {CATALOG_FILE: text} if text is not None else {}
