"""The data plane the fabric role owns beyond MTU and address, declared once: each data NIC admin up,
the routes racfg's intent implies (the connected route of each NIC's subnet, and on a leaf-spine site
the routes to the other data networks via the leaf's gateway with their metric, in the main table and
in the NIC's source-routing table), and nothing that overrides them: a blackhole, unreachable or
prohibit route, a route into a data network that racfg did not plan (more specific, or through
another interface), a static (permanent) neighbour entry for an address of a data network.

One function, :func:`dataplane_state`, reads the host's ``ip -j addr show``, ``ip -j route show table
all`` and ``ip -j neigh show`` and returns one item per difference, each with how the role repairs
it. The role's tasks (tasks/dataplane.yml) run the repairs, its read pass (``fabric_verdict``) reports
the lines, and validate's checks (validators/test_network.py, through racfg.validate.dataplane)
report the same items: the one declaration every reader uses, so the read pass cannot miss what
validate finds. Pure, unit-tested on real ``ip -j`` output (tests/roles/test_fabric_dataplane.py).

An item: ``{"nic", "kind", "line", and "argv" (the command that repairs it) or "reconfigure": true
(the NIC's configuration is applied again: a planned route missing) or "refused" (the reason it is
left alone)}``. Kinds: ``admin`` (set down), ``route_missing``, ``route_stray``, ``neighbour``.
"""

from __future__ import annotations

import ipaddress
from typing import Any

Item = dict[str, Any]
OVERRIDING_TYPES = ("blackhole", "unreachable", "prohibit", "throw")
STATIC_STATES = ("PERMANENT", "NOARP")


def _net(text: str) -> ipaddress.IPv4Network | None:
    try:
        net = ipaddress.ip_network("0.0.0.0/0" if text == "default" else text, strict=False)
    except ValueError:
        return None
    return net if net.version == 4 else None


def _planned(nics: list[dict[str, Any]], routing: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every route racfg's intent implies: ``{table, dst, dev, via, metric}`` (via/metric None: any)."""
    out = []
    for nic in nics:
        subnet = ipaddress.ip_interface(nic["address"]).network
        out.append({"table": "main", "dst": subnet, "dev": nic["name"], "via": None, "metric": None})
    for route in (routing or {}).get("routes") or []:
        for to in route.get("to") or []:
            out.append({"table": "main", "dst": ipaddress.ip_network(to), "dev": route["nic"],
                        "via": route["via"], "metric": int(route["metric"])})
            if route.get("table"):
                out.append({"table": str(route["table"]), "dst": ipaddress.ip_network(to), "dev": route["nic"],
                            "via": route["via"], "metric": None})
        if route.get("table"):
            out.append({"table": str(route["table"]), "dst": ipaddress.ip_network(route["subnet"]),
                        "dev": route["nic"], "via": None, "metric": None})
    return out


def _matches(route: dict[str, Any], plan: dict[str, Any]) -> bool:
    return (str(route.get("table", "main")) == plan["table"] and _net(str(route.get("dst"))) == plan["dst"]
            and route.get("type", "unicast") == "unicast" and route.get("dev") == plan["dev"]
            and (plan["via"] is None or route.get("gateway") == plan["via"])
            and (plan["metric"] is None or int(route.get("metric") or 0) == plan["metric"]))


def _route_text(route: dict[str, Any]) -> str:
    kind = route.get("type", "unicast")
    parts = [] if kind == "unicast" else [kind]
    parts.append(str(route.get("dst")))
    parts += [f"via {route['gateway']}"] if route.get("gateway") else []
    parts += [f"dev {route['dev']}"] if route.get("dev") else []
    parts += [f"metric {route['metric']}"] if route.get("metric") is not None else []
    table = str(route.get("table", "main"))
    return " ".join(parts) + ("" if table == "main" else f" table {table}")


def _delete_route(route: dict[str, Any]) -> list[str]:
    kind = route.get("type", "unicast")
    argv = ["ip", "route", "del"] + ([] if kind == "unicast" else [kind]) + [str(_net(str(route["dst"])))]
    argv += ["via", route["gateway"]] if route.get("gateway") else []
    argv += ["dev", route["dev"]] if route.get("dev") else []
    argv += ["metric", str(route["metric"])] if route.get("metric") is not None else []
    return [*argv, "table", str(route.get("table", "main"))]


def _owner(dst: ipaddress.IPv4Network, plans: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The planned route a route to ``dst`` overrides: the most specific plan containing it."""
    inside = [p for p in plans if dst.subnet_of(p["dst"])]
    return max(inside, key=lambda p: p["dst"].prefixlen) if inside else None


def _routes(plans: list[dict[str, Any]], routes: list[dict[str, Any]], mgmt: str, down: set[str]) -> list[Item]:
    """Planned routes missing (not on a NIC set down: the kernel drops its routes, and bringing it up
    restores them), and routes into a data network that are not planned."""
    out: list[Item] = []
    tables = {p["table"] for p in plans}
    for plan in plans:
        if plan["dev"] not in down and not any(_matches(r, plan) for r in routes):
            where = "" if plan["table"] == "main" else f" table {plan['table']}"
            via = f" via {plan['via']}" if plan["via"] else f" dev {plan['dev']}"
            metric = f" metric {plan['metric']}" if plan["metric"] is not None else ""
            out.append({"nic": plan["dev"], "kind": "route_missing", "reconfigure": True,
                        "line": f"{plan['dev']}: no route {plan['dst']}{via}{metric}{where}"})
    for route in routes:
        dst = _net(str(route.get("dst", "")))
        if dst is None or str(route.get("table", "main")) not in tables or any(_matches(route, p) for p in plans):
            continue
        plan = _owner(dst, [p for p in plans if p["table"] == str(route.get("table", "main"))])
        if plan is None:
            continue
        why = "" if route.get("type", "unicast") in OVERRIDING_TYPES else "unplanned route "
        line = f"{plan['dev']}: {why}{_route_text(route)} overrides {plan['dst']} dev {plan['dev']}"
        item: Item = {"nic": plan["dev"], "kind": "route_stray", "line": line}
        if mgmt and ipaddress.ip_address(mgmt) in dst:
            item["refused"] = f"{line}: it covers the management address {mgmt}; left alone"
        else:
            item["argv"] = _delete_route(route)
        out.append(item)
    return out


def _neighbours(plans: list[dict[str, Any]], neigh: list[dict[str, Any]]) -> list[Item]:
    out: list[Item] = []
    for entry in neigh:
        dst = _net(str(entry.get("dst", "")))
        state = [s for s in entry.get("state") or [] if s in STATIC_STATES]
        plan = _owner(dst, plans) if dst is not None else None
        if plan is None or not state:
            continue
        mac = entry.get("lladdr", "no MAC")
        out.append({"nic": plan["dev"], "kind": "neighbour", "dst": str(dst.network_address), "mac": mac,
                    "dev": entry.get("dev"),
                    "line": f"{plan['dev']}: static neighbour entry {dst.network_address} lladdr {mac} "
                            f"dev {entry.get('dev')} ({state[0].lower()}; racfg writes none)",
                    "argv": ["ip", "neigh", "del", str(dst.network_address), "dev", str(entry.get("dev"))]})
    return out


def dataplane_state(nics: list[dict[str, Any]], links: list[dict[str, Any]], routes: list[dict[str, Any]],
                    neigh: list[dict[str, Any]], routing: dict[str, Any] | None = None, mgmt: str = "") -> list[Item]:
    """What differs on the data plane from racfg's intent, one item per difference (see the module's
    docstring). A data NIC absent from ``links`` is the guard's (nic_refusals), not an item here."""
    present = {link.get("ifname"): link for link in links}
    ours = [n for n in nics if n["name"] in present]
    out: list[Item] = []
    down = {n["name"] for n in ours if "UP" not in (present[n["name"]].get("flags") or [])}
    for nic in ours:
        if nic["name"] in down:
            out.append({"nic": nic["name"], "kind": "admin", "line": f"{nic['name']}: set down (admin down)",
                        "argv": ["ip", "link", "set", "dev", nic["name"], "up"]})
    plans = _planned(ours, routing)
    return out + _routes(plans, routes, mgmt, down) + _neighbours(plans, neigh)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"fabric_dataplane_state": dataplane_state}
