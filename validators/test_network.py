"""Every data NIC: present, carrier up, MTU, IPv4 address/prefix, speed, driver and firmware, and no
route or static neighbour entry overriding its routes (the fabric role's declaration of what it owns,
racfg.validate.dataplane: the read pass and the repair use the same); on a
leaf-spine site each NIC's route to the data networks via its leaf's gateway and, on a host with NICs on
several leaves, its source-routing table and rule (racfg.render.routing: what the fabric role configures)."""

from __future__ import annotations

import ipaddress
import shlex

import pytest

FIX_TAGS = "fabric"


def COMMANDS(hv, gv, sysctl_keys):
    """The sections these checks read (also read by test_consistency): links, and per data NIC ethtool."""
    from racfg.validate.dataplane import NEIGH_COMMAND, ROUTE_COMMAND

    # the routes and neighbour entries the fabric role owns (racfg.validate.dataplane), every site
    commands = {"ip_addr": "ip -j addr show", "ip_route": ROUTE_COMMAND, "ip_neigh": NEIGH_COMMAND}
    if hv.get("racfg_routing"):  # leaf-spine: source routing's rules
        commands |= {"ip_rule": "ip -j rule show"}
    for nic in hv.get("racfg_nics", []):
        name = shlex.quote(nic["name"])
        commands[f"ethtool_i:{nic['name']}"] = f"ethtool -i {name}"
        commands[f"ethtool:{nic['name']}"] = f"ethtool {name}"
    return commands


def _link(probe, nic):
    """The NIC as ``ip -j addr`` shows it (racfg.hostfacts.ip), or None when the host has no such interface."""
    from racfg.hostfacts.ip import parse_ip_json

    return parse_ip_json(probe.section("ip_addr").out).get(nic.name)


def _present(probe, nic, verdict):
    link = _link(probe, nic)
    if link is None:
        verdict.expect(f"{nic.name} present", f"no interface {nic.name}", ok=False,
                       fix=f"check the NIC and its driver on {nic.target} (the inventory names {nic.name})")
    return link


def test_present(nic, probe, verdict):
    _present(probe, nic, verdict)
    verdict.note(f"{nic.name} present")


def test_carrier(nic, probe, verdict):
    link = _present(probe, nic, verdict)
    state = "up" if link.carrier else ("admin down" if not link.admin_up else "no carrier")
    verdict.expect("up", state, fix=f"check the cable and switch port of {nic.target}:{nic.name} "
                                    f"({nic.nic.get('switch')} {nic.nic.get('port')})" if link.admin_up else None)


def test_mtu(nic, probe, verdict):
    link = _present(probe, nic, verdict)
    verdict.expect(int(nic.nic["mtu"]), link.mtu)


def test_address(nic, probe, verdict):
    link = _present(probe, nic, verdict)
    want = str(ipaddress.ip_interface(nic.nic["address"]))
    have = [str(ipaddress.ip_interface(a)) for a in link.ipv4]
    verdict.expect(want, ", ".join(have) or "(none)", ok=want in have)


def test_speed(nic, probe, verdict):
    from racfg.hostfacts.ethtool import parse_driver_info, parse_link_settings

    _present(probe, nic, verdict)
    info = parse_driver_info(probe.section(f"ethtool_i:{nic.name}").out)
    if info.driver in VIRTUAL_DRIVERS:
        pytest.skip(f"{nic.name} is a virtual NIC (driver {info.driver}): it has no physical line rate to check")
    settings = parse_link_settings(probe.section(f"ethtool:{nic.name}", allow_fail=True).out)
    want = float(nic.nic["speed_gbps"])
    have = settings.speed_gbps
    verdict.expect(f"{want:g}G", f"{have:g}G" if have else "unknown", ok=have is not None and abs(have - want) < 0.5,
                   fix=f"check the cable/transceiver and switch port speed of {nic.target}:{nic.name}")


def test_driver_firmware(nic, probe, verdict):
    from racfg.hostfacts.ethtool import parse_driver_info

    _present(probe, nic, verdict)
    info = parse_driver_info(probe.section(f"ethtool_i:{nic.name}").out)
    verdict.info(f"driver {info.driver} {info.version or ''}, firmware {info.firmware_version or '(none)'}".strip())


VIRTUAL_DRIVERS = {"veth", "bridge", "dummy", "tun", "macvlan", "ipvlan", "vxlan"}


def _shown(route) -> str:
    return f"{route.dst} via {route.gateway or '-'} dev {route.dev}" + (
        f" metric {route.metric}" if route.metric is not None else "")


def test_route(route, probe, verdict):
    """The main table routes the data network through the NIC's leaf, with the planned metric."""
    from racfg.hostfacts.routes import parse_routes

    plan = route.value
    have = [r for r in parse_routes(probe.section("ip_route").out) if r.table == "main" and r.dst == plan["to"]]
    want = f"{plan['to']} via {plan['via']} dev {plan['nic']} metric {plan['metric']}"
    verdict.expect(want, "; ".join(_shown(r) for r in have) or "no route",
                   ok=any(r.gateway == plan["via"] and r.dev == plan["nic"] and r.metric == plan["metric"]
                          for r in have))


def test_source_route(source_route, probe, verdict):
    """Replies leave by the NIC the request came in on: the NIC's table routes the data networks via
    its leaf, and a rule sends its address's traffic to that table."""
    from racfg.hostfacts.routes import parse_routes, parse_rules

    plan, table = source_route.value, str(source_route.value["table"])
    routes = [r for r in parse_routes(probe.section("ip_route").out) if r.table == table]
    missing = [to for to in plan["to"] if not any(r.dst == to and r.gateway == plan["via"] for r in routes)]
    rule = any(r.source == f"{plan['source']}/32" and r.table == table
               for r in parse_rules(probe.section("ip_rule").out))
    want = f"table {table}: {', '.join(plan['to'])} via {plan['via']}; rule from {plan['source']} lookup {table}"
    have = (f"table {table}: " + (f"no route to {', '.join(missing)}" if missing else "routes as planned")
            + ("; rule present" if rule else f"; no rule from {plan['source']}"))
    verdict.expect(want, have, ok=not missing and rule)


def test_nothing_overrides(nic, probe, verdict, ctx):
    """No route or static neighbour entry overrides the NIC's routes (a blackhole, a more-specific route
    through another interface, a permanent neighbour entry), and the routes racfg plans are there: what
    the fabric role owns (racfg.validate.dataplane), compared as its read pass compares it. A static
    entry's MAC is checked against the MAC the address's owner really has."""
    from racfg.validate import dataplane

    hv = ctx.host_vars(nic.target)
    found = [i for i in dataplane.items(hv, probe.section("ip_addr").out, probe.section("ip_route").out,
                                        probe.section("ip_neigh").out)
             if i["nic"] == nic.name and i["kind"] != "admin"]  # set down: test_carrier's, as nic_admin
    owners = ctx.data_ends() if any(i["kind"] == "neighbour" for i in found) else {}  # every host's MACs
    lines = []
    for i in found:
        owner = owners.get(i.get("dst", ""))
        wrong = i["kind"] == "neighbour" and dataplane.wrong_neighbour(
            {(i["dst"], i["dev"]): (i["mac"], "permanent")}, i["dst"], i["dev"], owner)
        lines.append(i.get("refused") or (f"{i['line']}, but {owner.host}:{owner.nic} has {owner.mac}"
                                          if wrong and owner else i["line"]))
    refused = [i for i in found if "refused" in i]
    fix = (f"on {nic.target}: remove it by hand ({'; '.join(i['refused'] for i in refused)})" if refused else None)
    verdict.expect(f"{nic.name}'s routes as planned, nothing overriding them", "; ".join(lines) or "as planned",
                   ok=not found, fix=fix)
