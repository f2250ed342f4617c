"""racfg's validators as a pytest plugin: parametrised from the rendered inventory.

``racfg validate SITE.yaml`` runs this directory through pytest's API with its context already
built (connection overrides of the lab, filters, progress). By hand::

    racfg render site.yaml --out rendered/
    pytest validators/ --rendered rendered/ [--hosts dgx01,stor01] [--ssh-key KEY] [--known-hosts FILE]

Fixtures the validators use: ``node`` / ``nic`` / ``drive`` / ``sysctl`` / ``package`` /
``attribute`` (hosts and their parts), ``switch`` / ``port``, ``probe`` (the host's captured
command outputs), ``host`` (testinfra's host API on the same connection, for what the probe
does not capture), ``facts`` (the switch's facts), ``ctx`` (the context) and ``verdict`` (how a
test states expected and actual). Each test is one check; its id is ``target/module/test[label]``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError, RacfgError
from racfg.results import expected_actual
from racfg.validate.context import RenderedSite, ValidateContext, find_context
from racfg.validate.expectations import expected_packages
from racfg.validate.probe import Commands, HostProbe, collect_commands
from racfg.validate.subjects import (
    DriveSubject,
    HostSubject,
    NicSubject,
    PortSubject,
    SettingSubject,
    Subject,
    SwitchSubject,
)

CTX = pytest.StashKey[ValidateContext]()
DECLARED = pytest.StashKey[list[tuple[str, Commands]]]()
# What must be the same across the hosts of one role (and which roles have it).
CONSISTENT = {"kernel": ("dgx", "storage"), "ofed": ("dgx", "storage"), "nic_firmware": ("dgx", "storage"),
              "nic_mtu": ("dgx", "storage"), "drives": ("storage",), "gpu_driver": ("dgx",)}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("racfg", "racfg validators")
    group.addoption("--rendered", help="directory written by `racfg render SITE.yaml --out DIR`")
    group.addoption("--ssh-key", help="SSH private key for hosts whose inventory entry names none")
    group.addoption("--known-hosts", help="known_hosts file to check host keys against besides the site's "
                                          "(site.known_hosts) or ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts; "
                                          "an unknown or changed key is refused")


def pytest_configure(config: pytest.Config) -> None:
    ctx = find_context(config)
    if ctx is None:
        rendered = config.getoption("rendered", None)
        if not rendered:
            raise pytest.UsageError("give --rendered DIR (from `racfg render SITE.yaml --out DIR`), "
                                    "or run `racfg validate SITE.yaml`")
        overrides = ConnectionOverrides(
            provider="command line",
            ssh_key=Path(config.getoption("ssh_key")) if config.getoption("ssh_key") else None,
            known_hosts=Path(config.getoption("known_hosts")) if config.getoption("known_hosts") else None,
        )
        site = RenderedSite.load(Path(rendered))
        wanted = [h for h in (config.getoption("hosts", None) or "").split(",") if h]
        ctx = ValidateContext(site, inventory_display=f"{site.group_vars.get('racfg_site', 'site')}.yaml",
                              overrides=overrides, hosts_selected=[h for h in wanted if h in site.hosts] or None,
                              switches_selected=[h for h in wanted if h in site.switches] if wanted else None)
    config.stash[CTX] = ctx


def pytest_unconfigure(config: pytest.Config) -> None:
    """The session's SSH connections end with it (one per host, opened by the first check that needed it)."""
    ctx = config.stash.get(CTX, None)
    if ctx is not None:
        ctx.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """Note each validators module's ``COMMANDS`` (the sections its checks read) as pytest imports
    it, every module collected, whatever --check or --category deselects later: the commands a host
    runs do not depend on which checks were asked for."""
    outcome = yield
    if isinstance(collector, pytest.Module) and outcome.get_result().passed:
        declared = getattr(collector.obj, "COMMANDS", None)
        if declared is None:
            raise pytest.UsageError(f"{collector.path.name}: declares no COMMANDS (the sections its checks read)")
        collector.config.stash.setdefault(DECLARED, []).append((collector.path.stem, declared))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Hand the modules' declarations to the context, then read every host and switch once, in
    parallel, before the first check runs."""
    declared = sorted(session.config.stash.get(DECLARED, []), key=lambda d: d[0])
    session.config.stash[CTX].commands = partial(collect_commands, declared)
    if session.items:
        session.config.stash[CTX].prefetch()


def _roles(metafunc: pytest.Metafunc) -> set[str] | None:
    marker = metafunc.definition.get_closest_marker("roles")
    return set(marker.args) if marker else None


def _applies(metafunc: pytest.Metafunc, group_vars: dict) -> bool:
    """``applies(fabric=..., not_fabric=..., declared=...)``: a check that cannot apply to the site
    (InfiniBand checks on an Ethernet fabric, array checks with no array) is not generated at all:
    a skip per host would be noise that says nothing about the site."""
    marker = metafunc.definition.get_closest_marker("applies")
    if marker is None:
        return True
    fabric = (group_vars.get("racfg_fabric") or {}).get("type")
    want, never, declared = (marker.kwargs.get(k) for k in ("fabric", "not_fabric", "declared"))
    return (not want or fabric == want) and (not never or fabric != never) and (not declared or
                                                                              bool(group_vars.get(declared)))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    ctx = metafunc.config.stash[CTX]
    roles = _roles(metafunc)
    hosts = [(n, ctx.host_vars(n)) for n in ctx.host_names]
    hosts = [(n, hv) for n, hv in hosts if roles is None or hv.get("racfg_role") in roles]
    if not _applies(metafunc, ctx.site.group_vars):
        hosts = []
    subjects: list[Subject] | None = None
    name = next((f for f in ("node", "nic", "drive", "sysctl", "package", "attribute", "switch", "port", "route",
                             "source_route") if f in metafunc.fixturenames), None)
    if name == "node":
        subjects = [HostSubject(n, role=hv.get("racfg_role", ""), vars=hv) for n, hv in hosts]
    elif name == "nic":
        subjects = [NicSubject(n, nic["name"], role=hv.get("racfg_role", ""), nic=nic)
                    for n, hv in hosts for nic in hv.get("racfg_nics", [])]
    elif name == "drive":
        subjects = [DriveSubject(n, d["path"], drive=d) for n, hv in hosts for d in hv.get("racfg_drives", [])]
    elif name == "sysctl":
        subjects = [SettingSubject(n, key, value=value) for n, _ in hosts
                    for key, value in sorted(ctx.sysctl_expected(n).items())]
    elif name == "package":
        subjects = [SettingSubject(n, pkg, value=role) for n, hv in hosts
                    for pkg, role in sorted(expected_packages(ctx.site.group_vars, hv, "").items())]
    elif name == "attribute":
        subjects = [SettingSubject(n, attr, role=hv.get("racfg_role", "")) for n, hv in hosts
                    for attr, attr_roles in CONSISTENT.items() if hv.get("racfg_role") in attr_roles]
    elif name in ("route", "source_route"):  # leaf-spine hosts: racfg_routing (racfg.render.routing)
        subjects = _routes(hosts, sources=name == "source_route")
    elif name == "switch":
        subjects = [SwitchSubject(s, vars=ctx.site.switches[s]) for s in ctx.switch_names]
    elif name == "port":
        subjects = [PortSubject(s, p["port"], port=p) for s in ctx.switch_names
                    for p in ctx.site.switches[s].get("racfg_switch_ports", [])]
    if name is not None and subjects is not None:
        metafunc.parametrize(name, subjects, ids=[s.label or s.target for s in subjects])


def _routes(hosts: list[tuple[str, dict]], sources: bool) -> list[Subject]:
    """One subject per route to a data network (``data0:10.0.0.0/16``), or per NIC with a source-routing
    table (``data1:table 102``); none on a site whose hosts are not routed."""
    routes = [(n, r) for n, hv in hosts for r in (hv.get("racfg_routing") or {}).get("routes", [])]
    if sources:
        return [SettingSubject(n, f"{r['nic']}:table {r['table']}", value=r) for n, r in routes if r.get("table")]
    return [SettingSubject(n, f"{r['nic']}:{to}", value={**r, "to": to}) for n, r in routes for to in r["to"]]


def _subject(request: pytest.FixtureRequest) -> Subject:
    for value in request.node.callspec.params.values():
        if isinstance(value, Subject):
            return value
    raise LookupError(f"{request.node.nodeid} has no host or switch parameter")


@pytest.fixture
def ctx(request: pytest.FixtureRequest) -> ValidateContext:
    return request.config.stash[CTX]


@pytest.fixture
def probe(request: pytest.FixtureRequest, ctx: ValidateContext) -> HostProbe:
    """The captured outputs of the subject's host; an unreachable host makes its checks errors."""
    name = _subject(request).target
    result = ctx.probes()[name]
    if result.error:
        raise CannotRunError(result.error, hint=result.fix)
    return result


@pytest.fixture
def host(request: pytest.FixtureRequest, ctx: ValidateContext) -> Any:
    """testinfra's ``host`` for the subject's host, on the run's one SSH connection to it (racfg.ssh.host_sessions)."""
    return ctx.host(_subject(request).target)


@pytest.fixture
def facts(request: pytest.FixtureRequest, ctx: ValidateContext) -> Any:
    """The subject switch's SwitchFacts; an unreachable switch makes its checks errors."""
    name = _subject(request).target
    result = ctx.switch_facts()[name]
    if isinstance(result, RacfgError):
        raise CannotRunError(result.message, hint=result.hint)
    if isinstance(result, Exception):
        raise CannotRunError(str(result))
    return result


class Verdict:
    """How a check states its outcome: ``verdict.expect(9000, 1500)`` records both and fails."""

    def __init__(self, item: pytest.Item, default_fix: str | None) -> None:
        self.item = item
        self.default_fix = default_fix

    def _record(self, key: str, value: object) -> None:
        self.item.user_properties = [(k, v) for k, v in self.item.user_properties if k != key]
        self.item.user_properties.append((key, value))

    def expect(self, expected: object, actual: object, *, ok: bool | None = None, fix: str | None = None,
               message: str | None = None) -> None:
        """Record expected/actual and fail with ``Expected: X Actual: Y`` (plus ``message``) unless ok."""
        self._record("expected", _show(expected))
        self._record("actual", _show(actual))
        self._record("fix", fix or self.default_fix)
        passed = (expected == actual) if ok is None else ok
        if message and passed:
            self._record("message", message)
        assert passed, expected_actual(_show(expected), _show(actual)) + (f" ({message})" if message else "")

    def note(self, message: str) -> None:
        """A passing check's remark (e.g. the NIC firmware it recorded)."""
        self._record("message", message)

    def info(self, reading: str) -> None:
        """A reading with nothing to compare it with (no pin): recorded as ``info``, never as a pass."""
        self._record("message", reading)
        self._record("info", True)


def _show(value: object) -> object:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


@pytest.fixture
def verdict(request: pytest.FixtureRequest, ctx: ValidateContext) -> Verdict:
    subject = _subject(request)
    tags = getattr(request.module, "FIX_TAGS", None)
    fix = None
    if tags:
        fix = f"racfg deploy {ctx.inventory_display} --limit {subject.target} --tags {tags}"
    fix = getattr(request.module, "FIX", fix)
    return Verdict(request.node, fix)
