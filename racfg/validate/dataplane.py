"""The data plane as validate reads it: the fabric role's one declaration of what it owns on a data NIC
(roles/fabric/filter_plugins/fabric_dataplane.py: admin up, the planned routes, nothing overriding them)
applied to a host's probe, and the facts a failing path is explained by: whose data address a
destination is, and the MAC that host's NIC really has (a neighbour entry is wrong against it).

Why the role's file and not a copy here: validate, the read pass and the role's repair must agree on
what "owned" means; a second implementation would drift from the first. The filter is a pure module
with no Ansible import, loaded by path (the roles ship with racfg: racfg.paths.roles_dir).
"""

from __future__ import annotations

import importlib.util
import ipaddress
import json
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from racfg.paths import roles_dir

NEIGH_COMMAND = "ip -4 -j neigh show"
ROUTE_COMMAND = "ip -4 -j route show table all"


@cache
def _declaration() -> ModuleType:
    path = roles_dir() / "fabric" / "filter_plugins" / "fabric_dataplane.py"
    spec = importlib.util.spec_from_file_location("racfg_fabric_dataplane", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: the fabric role's data-plane declaration is missing")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def items(hv: dict[str, Any], ip_addr: str, ip_route: str, ip_neigh: str) -> list[dict[str, Any]]:
    """What differs on the host's data plane (one item per difference, as the fabric role sees it)."""
    nics = [{"name": n["name"], "address": n["address"], "mtu": n.get("mtu")} for n in hv.get("racfg_nics") or []]
    mgmt = str(hv.get("racfg_mgmt") or hv.get("ansible_host") or "")
    return list(_declaration().dataplane_state(nics, json.loads(ip_addr or "[]"), json.loads(ip_route or "[]"),
                                               json.loads(ip_neigh or "[]"), hv.get("racfg_routing"), mgmt))


@dataclass(frozen=True)
class DataEnd:
    """A data address of the site: the host and NIC the inventory gives it, and its MAC as read (None
    where that host was not probed)."""

    host: str
    nic: str
    mac: str | None


def data_ends(hosts: dict[str, dict[str, Any]], macs: dict[tuple[str, str], str | None]) -> dict[str, DataEnd]:
    """Data address -> its owner, from the rendered hosts and the MACs read (``(host, nic) -> MAC``)."""
    return {str(ipaddress.ip_interface(n["address"]).ip): DataEnd(host, n["name"], macs.get((host, n["name"])))
            for host, hv in hosts.items() for n in hv.get("racfg_nics") or []}


def neighbour_entries(ip_neigh: str) -> dict[tuple[str, str], tuple[str | None, str]]:
    """``ip -j neigh show`` -> (address, dev) -> (MAC or None, state in lower case)."""
    out = {}
    for entry in json.loads(ip_neigh or "[]"):
        state = ",".join(entry.get("state") or []).lower() or "none"
        out[(str(entry.get("dst")), str(entry.get("dev")))] = (entry.get("lladdr"), state)
    return out


def wrong_neighbour(entries: dict[tuple[str, str], tuple[str | None, str]], address: str, dev: str,
                    owner: DataEnd | None) -> str | None:
    """Why the host's neighbour entry for ``address`` on ``dev`` sends frames to nobody: its MAC is
    not the one the address's owner has (None: no entry, the owner's MAC unknown, or it matches)."""
    mac, state = entries.get((address, dev), (None, ""))
    if mac is None or owner is None or owner.mac is None or mac.lower() == owner.mac.lower():
        return None
    return (f"neighbour entry {address} lladdr {mac} dev {dev} ({state}), but {owner.host}:{owner.nic} "
            f"has {owner.mac}")
