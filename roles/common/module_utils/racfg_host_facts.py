"""The baseline facts racfg keeps and drift compares (``host_facts``): identity, packages, OFED, the data
NICs' data plane, drives and GPU, as the host's own tools report them. A module_utils of its own because
it is one concept apart from the probe's "what differs" reads: racfg_probe reads it for playbooks/facts.yml
and for the common role's probe of a ``racfg deploy`` run (Ansible ships it as
``ansible.module_utils.racfg_host_facts``). Also the read-only command runner both share.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess


def run_command(argv: list[str]) -> tuple[int, str, str]:
    """A read-only command's exit status, stdout and stderr; one that cannot start exits 127."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, "", str(exc)
    return proc.returncode, proc.stdout, proc.stderr


def run(argv: list[str]) -> tuple[int, str]:
    rc, out, _err = run_command(argv)
    return rc, out


def installed_packages() -> dict[str, str]:
    """Every installed package and its version: dpkg-query, or rpm where there is no dpkg."""
    rc, out = run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev}\t${Package}\t${Version}\n"])
    if rc == 0:
        rows = [line.split("\t") for line in out.splitlines()]
        return {r[1].split(":")[0]: r[2] for r in rows if len(r) == 3 and r[0].startswith("ii")}
    rc, out = run(["rpm", "-qa", "--qf", "%{NAME}\t%{VERSION}-%{RELEASE}\n"])
    return dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line) if rc == 0 else {}


def nic_facts(name: str, links: dict[str, dict], routes: list[dict] | None = None,
              neigh: list[dict] | None = None) -> dict | None:
    """A data NIC's MTU, addresses, driver and firmware, and the data plane the fabric role owns on it:
    admin state, the main table's routes through it or into its subnets, static neighbour entries
    for its subnets (drift names a blackhole or a permanent entry added since the baseline)."""
    link = links.get(name)
    if link is None:
        return None
    addresses = [f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", []) if a.get("family") == "inet"]
    info: dict[str, str] = {}
    rc, out = run(["ethtool", "-i", name])
    for line in out.splitlines() if rc == 0 else []:
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    nets = [ipaddress.ip_interface(a).network for a in addresses]

    def inside(dst: object) -> bool:
        try:
            net = ipaddress.ip_network("0.0.0.0/0" if dst == "default" else str(dst), strict=False)
        except ValueError:
            return False
        return any(net.version == n.version and net.subnet_of(n) for n in nets)

    route_texts = [" ".join(str(x) for x in ([r["type"]] if r.get("type", "unicast") != "unicast" else [])
                            + [r.get("dst")] + (["via", r["gateway"]] if r.get("gateway") else [])
                            + (["dev", r["dev"]] if r.get("dev") else []))
                   for r in routes or [] if r.get("dev") == name or inside(r.get("dst"))]
    static = [f"{e.get('dst')} lladdr {e.get('lladdr')} dev {e.get('dev')}" for e in neigh or []
              if inside(e.get("dst")) and {"PERMANENT", "NOARP"} & set(e.get("state") or [])]
    return {"mtu": link.get("mtu"), "addresses": sorted(addresses), "driver": info.get("driver") or None,
            "firmware": info.get("firmware-version") or None,
            "admin": "up" if "UP" in (link.get("flags") or []) else "down",
            "routes": sorted(route_texts), "neighbours": sorted(static)}


def drive_facts(paths: list[str]) -> list[dict]:
    """Each declared drive path by the device it resolves to, then every other NVMe disk."""
    out = []
    for path in paths:
        if not os.path.exists(path):
            continue
        rc, text = run(["lsblk", "-J", "-b", "-d", "-o", "NAME,TYPE,SIZE,MODEL,SERIAL", path])
        if rc != 0:
            continue
        for dev in json.loads(text).get("blockdevices", [])[:1]:
            out.append({"path": path, **{k: dev.get(k) for k in ("name", "size", "model", "serial")}})
    rc, text = run(["lsblk", "-J", "-b", "-d", "-e", "7", "-o", "NAME,PATH,TYPE,SIZE,MODEL,SERIAL"])
    known = {d["path"] for d in out}
    for dev in json.loads(text).get("blockdevices", []) if rc == 0 else []:
        if dev.get("type") == "disk" and dev.get("path") not in known and "nvme" in str(dev.get("name")):
            out.append({k: dev.get(k) for k in ("path", "name", "size", "model", "serial")})
    return out


def gpu_facts() -> dict | None:
    rc, out = run(["nvidia-smi", "--query-gpu=driver_version,vbios_version", "--format=csv,noheader"])
    if rc != 0 or not out.strip():
        return None
    rows = [[c.strip() for c in line.split(",")] for line in out.strip().splitlines()]
    return {"driver": rows[0][0], "vbios": ", ".join(sorted({r[1] for r in rows if len(r) > 1}))}


def identity(given: dict, facts: dict | None) -> dict:
    """The baseline's identity: kernel and OS as the inventory's spec gives them (facts.yml, after a
    gathering play), else from ``facts`` (a run that gathered none), in the same form."""
    if not facts:
        return given
    found = {"kernel": facts.get("kernel"),
             "os": f"{facts.get('distribution')} {facts.get('distribution_version')}"}
    return {**given, **{key: value for key, value in found.items() if not given.get(key)}}


IP_ADDR = ["ip", "-j", "addr", "show"]
IP_ROUTE = ["ip", "-4", "-j", "route", "show", "table", "all"]
IP_NEIGH = ["ip", "-4", "-j", "neigh", "show"]


def _json_list(rc: int, text: str) -> list[dict]:
    return json.loads(text) if rc == 0 and text.strip() else []


def host_facts(spec: dict, facts: dict | None = None, read: dict[str, str] | None = None) -> dict:
    """The baseline document racfg keeps and drift compares: identity (host, kernel, OS, as Ansible's
    facts know them) with what the host's own tools say. ``read``: the outputs this module run has
    already (command line -> stdout; the common role's probe reads ip's addresses, routes and
    neighbours for the fabric role), so none of those commands runs twice."""
    def output(argv: list[str]) -> tuple[int, str]:
        given = (read or {}).get(" ".join(argv))
        return (0, given) if given is not None else run(argv)

    links = {link["ifname"]: link for link in _json_list(*output(IP_ADDR))}
    rc, ofed = run(["ofed_info", "-s"])
    # the main table's routes (in table all's output, a main-table route names no table)
    routes = [r for r in _json_list(*output(IP_ROUTE)) if r.get("table", "main") == "main"]
    neigh = _json_list(*output(IP_NEIGH))
    return {
        **identity(spec.get("identity") or {}, facts),
        "packages": installed_packages(),
        "ofed": ofed.strip().rstrip(":") if rc == 0 and ofed.strip() else None,
        "nics": {name: nic_facts(name, links, routes, neigh) for name in spec.get("nics") or []},
        "drives": drive_facts(list(spec.get("drives") or [])),
        "gpu": gpu_facts(),
    }
