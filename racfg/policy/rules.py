"""The reference-architecture rules, one small function each.

A rule reads the expanded Cluster and yields Findings; it never raises for a bad inventory.
The rules encode the RA's facts (docs/architecture.md): MTU 9000 on Ethernet and 4096 on InfiniBand, no RoCE,
no PFC, every node on one flat fabric with one cable per data NIC, at least 8 Weka nodes.
"""

from __future__ import annotations

import ipaddress
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from racfg.catalog import ETHERNET_PLATFORMS, IB_PLATFORMS, SWITCH_MODELS
from racfg.inventory.cluster import Cluster
from racfg.policy.findings import Finding

RA_ETHERNET_MTU = 9000
RA_IB_MTU = 4096
IPOIB_DATAGRAM_MAX = 4092
IPOIB_CONNECTED_MAX = 65520

RuleFn = Callable[[Cluster], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    name: str
    summary: str
    fn: RuleFn


RULES: list[Rule] = []


def rule(name: str, summary: str) -> Callable[[RuleFn], RuleFn]:
    """Register a rule; ``summary`` documents it in `racfg rules` and the docs site (docs/rules.md)."""

    def register(fn: RuleFn) -> RuleFn:
        RULES.append(Rule(name, summary, fn))
        return fn

    return register


@rule("fabric-mtu", "Host MTU per fabric: 9000 on Ethernet; IB link MTU 4096, IPoIB 4092 datagram / <=65520 connected")
def fabric_mtu(c: Cluster) -> Iterator[Finding]:
    f = c.fabric
    if f.type == "ethernet":
        for key in ("ib_mtu", "ipoib_mode"):
            if getattr(f, key) is not None:
                yield Finding("error", "fabric-mtu", ("fabric", key), f"'{key}' applies to InfiniBand only",
                              "remove it, or set fabric.type: infiniband")
        mtu = f.effective_host_mtu
        if mtu < RA_ETHERNET_MTU:
            yield Finding("error", "fabric-mtu", ("fabric", "host_mtu"),
                          "host MTU below the RA's jumbo frames on Ethernet",
                          "set host_mtu: 9000", expected=str(RA_ETHERNET_MTU), actual=str(mtu))
        elif mtu > RA_ETHERNET_MTU:
            yield Finding("warning", "fabric-mtu", ("fabric", "host_mtu"),
                          "host MTU above the RA's 9000; every NIC and switch port must carry it",
                          expected=str(RA_ETHERNET_MTU), actual=str(mtu))
        return
    if f.effective_ib_mtu != RA_IB_MTU:
        yield Finding("error", "fabric-mtu", ("fabric", "ib_mtu"), "InfiniBand link MTU is not the RA's 4096",
                      "set ib_mtu: 4096", expected=str(RA_IB_MTU), actual=str(f.effective_ib_mtu))
    mtu = f.effective_host_mtu
    limit = IPOIB_DATAGRAM_MAX if f.effective_ipoib_mode == "datagram" else IPOIB_CONNECTED_MAX
    if mtu > limit:
        yield Finding("error", "fabric-mtu", ("fabric", "host_mtu"),
                      f"IPoIB {f.effective_ipoib_mode} mode carries at most MTU {limit}",
                      "InfiniBand uses ib_mtu 4096 and IPoIB 4092 (datagram) or up to 65520 (connected); "
                      "9000 is an Ethernet value",
                      expected=f"<= {limit}", actual=str(mtu))
    elif f.effective_ipoib_mode == "datagram" and mtu < IPOIB_DATAGRAM_MAX:
        yield Finding("warning", "fabric-mtu", ("fabric", "host_mtu"), "IPoIB MTU below 4092 wastes the 4K IB MTU",
                      expected=str(IPOIB_DATAGRAM_MAX), actual=str(mtu))


@rule("switch-mtu", "Switch port MTU >= every host NIC MTU (jumbo frames end to end)")
def switch_mtu(c: Cluster) -> Iterator[Finding]:
    f = c.fabric
    sw_mtu = f.effective_switch_mtu
    if f.type == "infiniband":
        if sw_mtu not in (256, 512, 1024, 2048, 4096):
            yield Finding("error", "switch-mtu", ("fabric", "switch_mtu"),
                          "an InfiniBand switch MTU is an IB MTU (256..4096)", "set switch_mtu: 4096 or remove it",
                          expected="4096", actual=str(sw_mtu))
        elif sw_mtu < f.effective_ib_mtu:
            yield Finding("error", "switch-mtu", ("fabric", "switch_mtu"), "switch MTU below the IB link MTU",
                          expected=f">= {f.effective_ib_mtu}", actual=str(sw_mtu))
        return
    if sw_mtu < RA_ETHERNET_MTU:
        yield Finding("error", "switch-mtu", ("fabric", "switch_mtu"),
                      "switch port MTU must be >= 9000 on an Ethernet fabric",
                      "jumbo frames are dropped by a port with a smaller MTU",
                      expected=">= 9000", actual=str(sw_mtu))
    seen: set[tuple[object, ...]] = set()
    for host in c.hosts:
        for nic in host.nics:
            if nic.mtu > sw_mtu and nic.src not in seen:
                seen.add(nic.src)
                yield Finding("error", "switch-mtu", (*nic.src, "mtu"),
                              "NIC MTU above the switch port MTU: large frames would be dropped",
                              f"raise fabric.switch_mtu to >= {nic.mtu}", subject=host.name,
                              expected=f"<= {sw_mtu}", actual=str(nic.mtu))
            elif nic.mtu != f.effective_host_mtu and nic.src not in seen:
                seen.add(nic.src)
                yield Finding("warning", "switch-mtu", (*nic.src, "mtu"),
                              "NIC MTU differs from the fabric's host MTU", subject=host.name,
                              expected=str(f.effective_host_mtu), actual=str(nic.mtu))


@rule("no-roce", "RoCE is off: the RA runs plain TCP/IP on Ethernet and native IB, no RoCE")
def no_roce(c: Cluster) -> Iterator[Finding]:
    if c.fabric.roce:
        yield Finding("error", "no-roce", ("fabric", "roce"), "RoCE is not part of the reference architecture",
                      "set roce: false; the RA needs no lossless Ethernet", expected="false", actual="true")


@rule("no-pfc", "PFC is off on every switch: the RA needs no lossless configuration")
def no_pfc(c: Cluster) -> Iterator[Finding]:
    if c.fabric.pfc:
        yield Finding("error", "no-pfc", ("fabric", "pfc"), "priority flow control is not part of the RA",
                      "set pfc: false (racfg removes PFC from the switches)", expected="false", actual="true")


@rule("platform", "Switch platform matches the fabric and the model; unknown models give their port count")
def platform(c: Cluster) -> Iterator[Finding]:
    allowed = ETHERNET_PLATFORMS if c.fabric.type == "ethernet" else IB_PLATFORMS
    for sw in c.switches.values():
        if sw.platform not in allowed:
            yield Finding("error", "platform", (*sw.src, "platform"),
                          f"platform {sw.platform} cannot serve an {c.fabric.type} fabric",
                          f"use one of: {', '.join(allowed)}", subject=sw.name,
                          expected=" | ".join(allowed), actual=sw.platform)
        known = SWITCH_MODELS.get(sw.spec.model)
        if known is None and sw.spec.ports is None:
            yield Finding("error", "platform", (*sw.src, "model"),
                          f"unknown switch model {sw.spec.model!r} and no port count",
                          f"add ports: N, or use a known model ({', '.join(sorted(SWITCH_MODELS))})",
                          subject=sw.name)
        elif known is not None and known.platform != sw.platform:
            yield Finding("error", "platform", (*sw.src, "platform"),
                          f"model {known.name} runs {known.platform}, not {sw.platform}", subject=sw.name,
                          expected=known.platform, actual=sw.platform)
        elif known is not None and sw.spec.ports is not None and sw.spec.ports != known.ports:
            yield Finding("warning", "platform", (*sw.src, "ports"),
                          f"model {known.name} has {known.ports} ports", subject=sw.name,
                          expected=str(known.ports), actual=str(sw.spec.ports))


@rule("cabling", "Every data NIC is cabled to an existing switch, on a port that exists, used once")
def cabling(c: Cluster) -> Iterator[Finding]:
    used: dict[tuple[str, str], str] = {}
    physical: dict[tuple[str, int], list[tuple[str, int | None]]] = {}
    reported: set[tuple[object, ...]] = set()
    for host in c.hosts:
        if not host.nics:
            yield Finding("error", "cabling", (*host.src, "nics"), "host has no data NIC on the fabric",
                          "every RA node has at least one data NIC cabled to a switch", subject=host.name)
        for nic in host.nics:
            sw = c.switches.get(nic.switch)
            where = f"{host.name}:{nic.name}"
            if sw is None:
                if (nic.src, "switch") not in reported:
                    reported.add((nic.src, "switch"))
                    yield Finding("error", "cabling", (*nic.src, "switch"), f"switch '{nic.switch}' is not defined",
                                  f"defined switches: {', '.join(c.switches) or 'none'}", subject=host.name)
                continue
            if nic.port is None or nic.port_index is None:
                if (nic.src, "port") not in reported:
                    reported.add((nic.src, "port"))
                    yield Finding("error", "cabling", (*nic.src, "port"), nic.port_error or "invalid port",
                                  subject=host.name)
                continue
            if not 1 <= nic.port_index <= sw.model.ports:
                yield Finding("error", "cabling", (*nic.src, "port"),
                              f"port {nic.port} is outside switch {sw.name} ({sw.model.name}, "
                              f"{sw.model.ports} ports)",
                              "a range advances the port per host; check the first port and port_stride",
                              subject=host.name, expected=f"1..{sw.model.ports}", actual=str(nic.port_index))
                continue
            key = (sw.name, nic.port)
            if key in used:
                yield Finding("error", "cabling", (*nic.src, "port"),
                              f"port {sw.name} {nic.port} is already cabled to {used[key]}", subject=host.name,
                              actual=where)
                continue
            used[key] = where
            lanes = physical.setdefault((sw.name, nic.port_index), [])
            if lanes and (nic.lane is None or any(lane is None for _, lane in lanes)):
                yield Finding("error", "cabling", (*nic.src, "port"),
                              f"port {sw.name} {nic.port} shares its physical port with {lanes[0][0]} "
                              "(a split port's lanes and the whole port cannot both be cabled)",
                              subject=host.name)
            lanes.append((where, nic.lane))


@rule("link-speed", "NIC speeds match the fabric speed and do not exceed the switch model's ports")
def link_speed(c: Cluster) -> Iterator[Finding]:
    seen: set[tuple[object, ...]] = set()
    for host in c.hosts:
        for nic in host.nics:
            if nic.src in seen:
                continue
            sw = c.switches.get(nic.switch)
            if sw is not None and nic.speed_gbps > sw.model.speed_gbps:
                seen.add(nic.src)
                yield Finding("error", "link-speed", (*nic.src, "speed"),
                              f"{nic.speed_gbps:g}G NIC on a {sw.model.speed_gbps:g}G switch port ({sw.model.name})",
                              subject=host.name, expected=f"<= {sw.model.speed_gbps:g}G",
                              actual=f"{nic.speed_gbps:g}G")
            elif nic.speed_gbps != c.fabric.speed_gbps:
                seen.add(nic.src)
                yield Finding("warning", "link-speed", (*nic.src, "speed"),
                              "NIC speed differs from the fabric speed: throughput will not scale evenly",
                              subject=host.name, expected=f"{c.fabric.speed_gbps:g}G", actual=f"{nic.speed_gbps:g}G")


@rule("unique", "Host and switch names, management addresses and data addresses are unique")
def unique(c: Cluster) -> Iterator[Finding]:
    names: dict[str, str] = {}
    mgmt: dict[str, str] = {}
    data: dict[str, str] = {}
    for index, spec in enumerate(c.inventory.switches):
        if spec.name in names:
            yield Finding("error", "unique", ("switches", index, "name"), f"switch name '{spec.name}' is used twice")
        if spec.mgmt in mgmt:
            yield Finding("error", "unique", ("switches", index, "mgmt"),
                          f"management address {spec.mgmt} is already used by {mgmt[spec.mgmt]}")
        names.setdefault(spec.name, f"switch {spec.name}")
        mgmt.setdefault(spec.mgmt, f"switch {spec.name}")
    for host in c.hosts:
        if host.name in names:
            yield Finding("error", "unique", (*host.src, "name"), f"name '{host.name}' is already used by "
                          f"{names[host.name]}", subject=host.name)
        names.setdefault(host.name, f"host {host.name}")
        ip = str(host.mgmt)
        if ip in mgmt:
            yield Finding("error", "unique", (*host.src, "mgmt"),
                          f"management address {ip} is already used by {mgmt[ip]}", subject=host.name)
        mgmt.setdefault(ip, f"host {host.name}")
        nic_names: set[str] = set()
        for nic in host.nics:
            if nic.name in nic_names:
                yield Finding("error", "unique", (*nic.src, "name"), f"NIC name {nic.name} repeats on {host.name}",
                              subject=host.name)
            nic_names.add(nic.name)
            addr = str(nic.address.ip)
            if addr in data or addr in mgmt:
                other = data.get(addr) or mgmt.get(addr)
                yield Finding("error", "unique", (*nic.src, "address"),
                              f"data address {addr} is already used by {other}", subject=host.name)
            data.setdefault(addr, f"{host.name}:{nic.name}")


@rule("addressing", "Data addresses lie in the data subnets, management addresses in the management subnet")
def addressing(c: Cluster) -> Iterator[Finding]:
    f = c.fabric
    subnets = [ipaddress.IPv4Network(s) for s in f.data_subnets]
    mgmt_net = ipaddress.IPv4Network(f.mgmt_subnet) if f.mgmt_subnet else None
    for sw in c.switches.values():
        if mgmt_net and ipaddress.IPv4Address(sw.spec.mgmt) not in mgmt_net:
            yield Finding("error", "addressing", (*sw.src, "mgmt"), f"{sw.spec.mgmt} is outside mgmt_subnet",
                          subject=sw.name, expected=str(mgmt_net), actual=sw.spec.mgmt)
    for host in c.hosts:
        if mgmt_net and host.mgmt not in mgmt_net:
            yield Finding("error", "addressing", (*host.src, "mgmt"), f"{host.mgmt} is outside mgmt_subnet",
                          subject=host.name, expected=str(mgmt_net), actual=str(host.mgmt))
        for nic in host.nics:
            net = nic.address.network
            if nic.address.ip in (net.network_address, net.broadcast_address) and net.prefixlen < 31:
                yield Finding("error", "addressing", (*nic.src, "address"),
                              f"{nic.address.ip} is the network or broadcast address of {net}",
                              "a range advanced past the end of the subnet?", subject=host.name)
            elif subnets and not any(nic.address.ip in s for s in subnets):
                yield Finding("error", "addressing", (*nic.src, "address"),
                              f"{nic.address.ip} is outside the data subnets", subject=host.name,
                              expected=", ".join(map(str, subnets)), actual=str(nic.address.ip))
            elif mgmt_net and nic.address.ip in mgmt_net:
                yield Finding("error", "addressing", (*nic.src, "address"),
                              "data address inside the management subnet: storage traffic would take the "
                              "management network", subject=host.name)


@rule("software", "Software pins the roles need are present: OFED flavor (mlnx: version + source), Weka version")
def software(c: Cluster) -> Iterator[Finding]:
    sw = c.inventory.software
    if sw.ofed is None:
        yield Finding("error", "software", ("software",), "no OFED pin: the ofed role needs software.ofed",
                      "software: {ofed: {flavor: inbox}} or {flavor: mlnx, version: 4.5-1.0.1.0, source: ...}")
    elif sw.ofed.flavor == "mlnx":
        for key in ("version", "source"):
            if not getattr(sw.ofed, key):
                yield Finding("error", "software", ("software", "ofed", key), f"flavor mlnx needs ofed.{key}",
                              "RA: MLNX_OFED 4.5-1.0.1.0, from the vendor's .tgz (a path or an https URL, with its "
                              "sha256) or a signed apt repository")
    if sw.weka is not None and not sw.weka.dist:
        yield Finding("warning", "software", ("software", "weka"),
                      f"Weka {sw.weka.version or ''} is declared without a distribution: deploy would install "
                      "nothing (the weka role reports a skip on every host)".replace("Weka  is", "Weka is"),
                      "set software.weka.dist to the Weka tarball (path on this machine or URL), or remove "
                      "software.weka")
    if sw.weka is not None and sw.weka.dist and not sw.weka.version:
        yield Finding("error", "software", ("software", "weka", "version"), "a Weka distribution needs its version",
                      "the role checks the installed version against it")


@rule("secrets", "Switch password files are readable by their owner only (0600)")
def secrets(c: Cluster) -> Iterator[Finding]:
    for sw in c.switches.values():
        name = sw.spec.credentials.password_file
        if not name:
            continue
        path = Path(os.path.expanduser(name))
        if not path.is_absolute():
            path = c.path.parent / path
        if path.exists() and stat.S_IMODE(path.stat().st_mode) & 0o077:
            yield Finding("error", "secrets", (*sw.src, "credentials", "password_file"),
                          f"{name} is readable by group or others", f"chmod 600 {name}", subject=sw.name,
                          expected="0600", actual=oct(stat.S_IMODE(path.stat().st_mode)))


def evaluate(cluster: Cluster) -> list[Finding]:
    """Run every rule; findings sorted by file line, errors first within a line."""
    findings = [finding for r in RULES for finding in r.fn(cluster)]
    return sorted(findings, key=lambda f: (cluster.line(f.loc), f.severity != "error", f.path, f.subject or ""))
