"""Small leaf-spine sites for the suites that accept a two-tier fabric (deploy, validate, drift, smoke).

The issues' small form: 2 leaves, 2 spines, one link per leaf-spine pair, one GPU server and one
storage node on each leaf, so half of the dgx -> storage paths stay on a leaf and half cross the
spines. Each suite asks for a site of its own (``site``, a management /24 and an even data /23, the
first /24 on leaf1 and the second on leaf2), so the suites run beside each other and beside the
other labs; the platform is Onyx or EOS throughout (the examples' two variants).

``deployed_leafspine`` builds it fresh, deploys it as a user does (sitelab.DeployedSite: racfg in a
subprocess with its own state directory) and always removes it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import labsupport
import sitelab
import yaml

_PORTS = {"onyx": ("1/{}", "SN2700"), "eos": ("Ethernet{}", "7060CX-32S")}
ISL_MTU = {"onyx": 9216, "eos": 9214}
LEAF_UPLINK_PORT = 31  # leaf ports 31 (to spine1) and 32 (to spine2); spine port N goes to leaf N


def small_leafspine(site: str, mgmt: str, data: str, platform: str = "onyx", *,
                    dual_homed: bool = False, spine_password_env: bool = False) -> dict[str, Any]:
    """The inventory (as data) of a small leaf-spine site: ``mgmt`` a /24 (``198.18.82.0/24``), ``data`` an
    even /23 (``198.19.102.0/23``).

    ``dual_homed``: the first storage node also has its second port (``data1``, the RA's HA port) on
    the other leaf, an address in that leaf's subnet (``.31``), so it gets one route per NIC with
    source routing; leaf2 then carries three host ports on two uplinks (oversubscription 1.5, allowed).
    ``spine_password_env``: the spines' credentials name one environment variable (``spine_password_var``),
    as an operator's site does, instead of ``lab: true`` (the lab gives both spines one password, and
    sitelab.DeployedSite exports it into that variable)."""
    port, model = _PORTS[platform]
    mgmt_net = ipaddress.ip_network(mgmt)
    data_net = ipaddress.ip_network(data)
    leaf_nets = list(data_net.subnets(new_prefix=24))
    m = mgmt_net.network_address

    def switch(name: str, role: str, last: int) -> dict[str, Any]:
        credentials: dict[str, Any] = {"username": "admin", "lab": True}
        if role == "spine" and spine_password_env:
            credentials = {"username": "admin", "password_env": spine_password_var(site)}
        return {"name": name, "role": role, "platform": platform, "model": model, "mgmt": str(m + last),
                "credentials": credentials}

    def host(name: str, role: str, last: int, leaf: int, leaf_port: int) -> dict[str, Any]:
        address = f"{leaf_nets[leaf - 1].network_address + last}/24"
        nic = {"name": "data0", "address": address, "switch": f"{site}-leaf{leaf}", "port": port.format(leaf_port)}
        out: dict[str, Any] = {"name": name, "role": role, "mgmt": str(m + last), "nics": [nic]}
        if role == "storage":
            out |= {"model": "lab-nvme-node", "drives": [{"path": "/dev/nvme[0:1]n1", "size": "1G"}]}
        return out

    hosts = [host(f"{site}-dgx1", "dgx", 11, 1, 1), host(f"{site}-dgx2", "dgx", 12, 2, 1),
             host(f"{site}-st1", "storage", 21, 1, 17), host(f"{site}-st2", "storage", 22, 2, 17)]
    fabric: dict[str, Any] = {}
    if dual_homed:
        hosts[2]["nics"].append({"name": "data1", "address": f"{leaf_nets[1].network_address + 31}/24",
                                 "switch": f"{site}-leaf2", "port": port.format(18)})
        fabric["max_oversubscription"] = 1.5
    return {
        "site": {"name": site, "time_sources": [str(m + 1)]},
        "fabric": {"type": "ethernet", "speed": "100G", "host_mtu": 9000, "switch_mtu": 9000, "roce": False,
                   "pfc": False, "data_subnets": [str(data_net)], "mgmt_subnet": str(mgmt_net),
                   "design": "leaf-spine", "isl_mtu": ISL_MTU[platform], "p2p_pool": "198.18.254.0/24",
                   "spine_asn": 65100, "leaf_asn_first": 65101, **fabric},
        "switches": [switch(f"{site}-leaf1", "leaf", 2), switch(f"{site}-leaf2", "leaf", 3),
                     switch(f"{site}-spine1", "spine", 6), switch(f"{site}-spine2", "spine", 7)],
        "links": [{"leaves": f"{site}-leaf[1:2]", "spines": f"{site}-spine[1:2]", "count": 1,
                   "leaf_port": port.format(LEAF_UPLINK_PORT), "spine_port": port.format(1)}],
        "defaults": {"all": {"ssh_user": "root"}, "dgx": {"model": "DGX-1", "gpus": 8}},
        "hosts": hosts,
        "software": {"os": {"release": "12"}, "ofed": {"flavor": "inbox"}},
    }


def spine_password_var(site: str) -> str:
    return f"RACFG_{site.upper()}_SPINE_PASSWORD"


def write_small_leafspine(directory: Path, site: str, mgmt: str, data: str, platform: str = "onyx", *,
                          dual_homed: bool = False, spine_password_env: bool = False) -> Path:
    path = directory / f"{site}.yaml"
    path.write_text(yaml.safe_dump(small_leafspine(site, mgmt, data, platform, dual_homed=dual_homed,
                                                   spine_password_env=spine_password_env), sort_keys=False))
    return path


@contextmanager
def deployed_leafspine(inventory: Path, state_dir: Path) -> Iterator[sitelab.DeployedSite]:
    """The site of ``inventory`` built fresh and deployed once (racfg as a user runs it, every process's
    argv sampled meanwhile: secretscan); removed afterwards."""
    with labsupport.running_lab(inventory) as handle:
        site = sitelab.DeployedSite(handle, state_dir, inventory)
        site.deploy(sample_argv=True)
        yield site
