"""Render the Ansible inventory and variables the roles read.

The variable names here are the contract between racfg and its roles (``racfg_*``); the roles'
``defaults/main.yml`` document them. Passwords never appear: switches carry a credentials
*reference* that the switch module resolves at run time.
"""

from __future__ import annotations

from typing import Any

from racfg.intent import site_intent
from racfg.inventory.cluster import HOST_READ_PREFIXES, Cluster, ClusterHost, ClusterSwitch
from racfg.render.node_check import node_check_intent
from racfg.render.routing import host_routing, switch_routing
from racfg.render.unsafe import Template


def fabric_vars(cluster: Cluster) -> dict[str, Any]:
    f = cluster.fabric
    return {
        "type": f.type,
        "speed_gbps": f.speed_gbps,
        "host_mtu": f.effective_host_mtu,
        "switch_mtu": f.effective_switch_mtu,
        "ib_mtu": f.effective_ib_mtu if f.type == "infiniband" else None,
        "ipoib_mode": f.effective_ipoib_mode if f.type == "infiniband" else None,
        "roce": f.roce,
        "pfc": f.pfc,
        "data_subnets": list(f.data_subnets),
    }


def group_vars(cluster: Cluster) -> dict[str, Any]:
    """Variables every host and switch sees (group_vars/all.yml)."""
    sw = cluster.inventory.software
    return {
        "racfg_site": cluster.name,
        "racfg_fabric": fabric_vars(cluster),
        "racfg_time_sources": list(cluster.inventory.site.time_sources),
        "racfg_dns_domain": cluster.inventory.site.dns_domain,
        "racfg_cluster_hosts": [
            {
                "name": h.name,
                "role": h.role,
                "mgmt": str(h.mgmt),
                "data": [str(n.address.ip) for n in h.nics],
            }
            for h in cluster.hosts
        ],
        "racfg_ofed": ofed_vars(cluster),
        "racfg_weka": weka_vars(cluster),
        "racfg_array": cluster.inventory.array.model_dump(mode="json") if cluster.inventory.array else None,
        "racfg_nvidia_driver": sw.nvidia_driver,
        "racfg_os": sw.os.model_dump(mode="json", exclude_none=True) if sw.os else None,
        "racfg_tuning": sw.tuning.model_dump(mode="json"),
        "racfg_allow_reboot": False,
        # the site's known_hosts (absolute): the switch role's module and validate read it as deploy's OpenSSH does
        **({"racfg_known_hosts": str(cluster.known_hosts_file)} if cluster.known_hosts_file else {}),
    }


def ofed_vars(cluster: Cluster) -> dict[str, Any] | None:
    """software.ofed for the role, with a controller path made absolute (the role copies it from
    the controller, where a path relative to the inventory file means nothing to Ansible)."""
    ofed = cluster.inventory.software.ofed
    if ofed is None:
        return None
    out = ofed.model_dump(mode="json")
    source = cluster.ofed_source_on_controller()
    if source is not None:
        out["source"] = str(source)
    if ofed.signed_by:
        out["signed_by"] = str(cluster.on_controller(ofed.signed_by))
    return out


def weka_vars(cluster: Cluster) -> dict[str, Any] | None:
    """software.weka for the role, with a dist on the controller made absolute (as ofed_vars)."""
    weka = cluster.inventory.software.weka
    if weka is None:
        return None
    out = weka.model_dump(mode="json")
    if weka.dist and not weka.dist.startswith(HOST_READ_PREFIXES):
        out["dist"] = str(cluster.on_controller(weka.dist))
    return out


# The hosts' Python: every supported OS (DGX OS, Ubuntu, Debian) has it there. Named rather than
# discovered: discovery costs each host one more SSH command on every run (issue 40); a host whose
# Python lives elsewhere names it in the inventory (``python``, an absolute path: ``vars`` cannot set
# ansible_* variables).
HOST_PYTHON = "/usr/bin/python3"


def host_vars(cluster: Cluster, host: ClusterHost) -> dict[str, Any]:
    """Connection and per-host variables (host_vars/<host>.yml)."""
    out: dict[str, Any] = {
        "ansible_host": str(host.mgmt),
        "ansible_user": host.ssh_user,
        "ansible_port": host.ssh_port,
        "ansible_python_interpreter": host.python or HOST_PYTHON,
    }
    if host.ssh_key:
        out["ansible_ssh_private_key_file"] = host.ssh_key
    out.update(
        {
            "racfg_role": host.role,
            "racfg_model": host.model,
            "racfg_mgmt": str(host.mgmt),
            "racfg_gpus": host.gpus,
            "racfg_gpu_model": host.gpu_model,  # the GPU checks judge against it (racfg.catalog.host_gpu)
            # a dgx host that the inventory gives GPUs must show them: the gpu role fails otherwise
            # (only a lab run lifts this, see racfg.deploy.deploy_run.provider_extravars)
            "racfg_gpu_required": host.role == "dgx" and bool(host.gpus),
            "racfg_nics": [
                {
                    "name": n.name,
                    "address": str(n.address),
                    "mtu": n.mtu,
                    "switch": n.switch,
                    "port": n.port,
                    "speed_gbps": n.speed_gbps,
                }
                for n in host.nics
            ],
            "racfg_drives": [{"path": d.path, "model": d.model, "size": d.size} for d in host.drives],
            "racfg_wipe_drives": host.wipe_drives,
        }
    )
    routing = host_routing(cluster, host)
    if routing is not None:  # leaf-spine Ethernet: the gateway and routes through the host's leaves
        out["racfg_routing"] = routing
    check = node_check_intent(cluster, host, routing)
    if check is not None:  # a node of the site's scheduler: the healthcheck role installs its node check
        out["racfg_node_check"] = check
    out.update(host.vars)
    return out


def switch_ports(cluster: Cluster, switch: ClusterSwitch) -> list[dict[str, Any]]:
    """The cabled ports of one switch, in port order, as the switch role configures them."""
    return [{"port": p.port, "description": p.description, "mtu": p.mtu, "speed_gbps": p.speed_gbps,
             "host": p.host, "nic": p.nic} for p in site_intent(cluster).switches[switch.name].ports]


def switch_vars(cluster: Cluster, switch: ClusterSwitch) -> dict[str, Any]:
    spec = switch.spec
    creds = spec.credentials.model_dump(mode="json", exclude_none=True, exclude={"password", "username"})
    if not creds.get("lab"):
        creds.pop("lab", None)
    routing = switch_routing(cluster, switch.name)
    extra = {"racfg_switch_routing": routing} if routing is not None else {}
    return {
        **extra,
        "ansible_connection": "local",
        "ansible_python_interpreter": Template("{{ ansible_playbook_python }}"),  # racfg's own template
        "racfg_switch": {
            "name": spec.name,
            "site": cluster.name,
            "platform": spec.platform,
            "model": switch.model.name,
            "ports_count": switch.model.ports,
            "ports_per_slot": switch.model.ports_per_slot,
            "mgmt": spec.mgmt,
            "ssh_port": spec.ssh_port,
            "username": spec.credentials.username,
            "credentials": creds,
            "os_version": spec.os_version,
            "shutdown_unused": spec.shutdown_unused,
        },
        "racfg_switch_ports": switch_ports(cluster, switch),
    }


def inventory_tree(cluster: Cluster) -> dict[str, Any]:
    """hosts.yml: groups dgx, storage, cluster (= dgx + storage) and switches."""
    def hosts_of(role: str) -> dict[str, None]:
        return {h.name: None for h in cluster.hosts if h.role == role}

    return {
        "all": {
            "children": {
                "cluster": {
                    "children": {
                        "dgx": {"hosts": hosts_of("dgx")},
                        "storage": {"hosts": hosts_of("storage")},
                    }
                },
                "switches": {"hosts": {name: None for name in cluster.switches}},
            }
        }
    }
