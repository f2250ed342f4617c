"""Issue 52's two tables on one deployed lab of inventory/lab.yaml (the session ``lab``, shared with
tests/deploy/test_deploy_lab.py and tests/lab/test_lab_integration.py; conftest.SHARED_LAB_MODULES).

MUTATIONS: the converged verdict cannot miss a role's change. Each row changes one item a role owns by
hand, as a person or a stray tool would on a deployed host; the read pass (playbooks/read.yml, which a
deploy runs first and drift's config layer reports) must name it, and one `racfg deploy` must repair it
(the read is clean again and the item is back). All rows are planted at once on separate items, read by
one `racfg drift` and repaired by one deploy: every row's item is named on its own line of the read (a
role runs when any of its lines differs), so one run for all rows proves what one per row would, at a
fraction of the time. A row whose item the read does not name fails alone (one test per row).

FIXES: every fix validate prints works. Each row plants one fault of a problem kind the diagnosis can
name, runs `racfg validate`, takes its problem's fix from the JSON output and runs it verbatim (the
confirmation is RACFG_YES, as an operator's automation gives it); validate is clean afterwards. Where no
command can repair the fault (a cable), the fix says what a person does and offers no deploy; the test
then does that part by hand and validate is clean.

Not here: the leaf-spine kinds (isl_admin, isl_cabling,
isl_mtu, bgp, a planned route deleted) are planted and repaired by their own fix in
tests/faults/test_leafspine_faults_lab.py
(and isl_carrier); nfs_client and weka own nothing on lab.yaml (no array; no
Weka distribution), and their reads are not_read where they do run (their tasks run every deploy).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from labsupport import LabHandle
from sitelab import _PFC_OFF, _PFC_ON, DeployedSite, by_status, cable_swap, wait_for

from racfg_lab import api

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
INVENTORY = REPO / "inventory" / "lab.yaml"
RACFG_BIN = Path(sys.executable).parent / "racfg"
SYSCTL_FILE = "/etc/sysctl.d/90-racfg.conf"
LLDPD_CONF = "/etc/lldpd.d/racfg.conf"
UDEV_RULE = "/etc/udev/rules.d/60-racfg-nvme-scheduler.rules"
DRIVES_RECORD = "/var/lib/racfg/drives.json"
DROP_IN = "/etc/systemd/system/chrony.service.d/racfg-no-clock-control.conf"
BOGUS_MAC = "02:00:de:ad:be:ef"  # a MAC no NIC of the lab has


@pytest.fixture(scope="module")
def site(lab: LabHandle, tmp_path_factory: pytest.TempPathFactory) -> DeployedSite:
    """lab.yaml deployed once for the module (a no-change run where test_deploy_lab converged it first)."""
    deployed = DeployedSite(lab, tmp_path_factory.mktemp("owned-state"), inventory=INVENTORY)
    deployed.deploy()
    deployed.settled()
    return deployed


# --- point 1: the mutation table --------------------------------------------------------------------

@dataclass(frozen=True)
class Mutation:
    """One owned item changed by hand: on ``host`` (a lab host, or sw1 through its CLI), ``plant`` is the
    shell command (host) or the config lines (switch); the read must name ``item`` (a regular expression)
    for ``role`` there; after the deploy ``repaired`` holds (a shell test on the host; on a switch,
    these validate checks pass) and the read names nothing on the host."""

    role: str
    host: str
    item: str
    plant: str | list[str]
    repaired: str | list[str]

    @property
    def id(self) -> str:
        return f"{self.role}:{self.host}:{self.item}"


MUTATIONS: tuple[Mutation, ...] = (
    # common: files it writes (content, mode), /etc/hosts (its block, the alias it removes), the host
    # name (live and the file), units (active, enabled), kernel parameters (live and persisted)
    Mutation("common", "dgx01", "file /etc/chrony/chrony.conf content",
             "echo 'server 192.0.2.1 iburst' >> /etc/chrony/chrony.conf",
             "! grep -q 192.0.2.1 /etc/chrony/chrony.conf"),
    Mutation("common", "dgx01", "file /etc/lldpd.d/racfg.conf mode",
             "chmod 0600 /etc/lldpd.d/racfg.conf", "test $(stat -c %a /etc/lldpd.d/racfg.conf) = 644"),
    Mutation("common", "dgx01", "/etc/hosts",
             "sed -i '/^# BEGIN racfg/,/^# END racfg/{/stor02$/d}' /etc/hosts",
             "grep -Eq '^[0-9.]+\\s+stor02$' /etc/hosts"),
    Mutation("common", "dgx01", "host name", "hostname wrong-name", "test $(hostname) = dgx01"),
    Mutation("common", "dgx02", "lldpd", "systemctl disable lldpd 2>/dev/null", "systemctl -q is-enabled lldpd"),
    Mutation("common", "dgx02", "chrony", "systemctl stop chrony", "systemctl -q is-active chrony"),
    Mutation("common", "dgx02", "net.ipv4.tcp_mtu_probing", "sysctl -q -w net.ipv4.tcp_mtu_probing=0",
             "test $(sysctl -n net.ipv4.tcp_mtu_probing) = 1"),
    Mutation("common", "dgx02", "/etc/hosts", "echo '127.0.1.1 dgx02' >> /etc/hosts",
             "! grep -q '^127.0.1.1' /etc/hosts"),
    Mutation("common", "stor01", f"file {SYSCTL_FILE} content",
             f"sed -i 's/^net.ipv4.tcp_no_metrics_save.*/net.ipv4.tcp_no_metrics_save = 0/' {SYSCTL_FILE}",
             f"grep -Eq '^net.ipv4.tcp_no_metrics_save\\s*=\\s*1$' {SYSCTL_FILE}"),
    Mutation("common", "stor01", "file /etc/systemd/system/chrony.service.d/racfg-no-clock-control.conf missing",
             f"rm {DROP_IN}", f"test -s {DROP_IN}"),
    Mutation("common", "stor02", "file /etc/hosts mode", "chmod 0600 /etc/hosts",
             "test $(stat -c %a /etc/hosts) = 644"),
    Mutation("common", "stor02", "file /etc/hostname content", "echo wrong-name > /etc/hostname",
             "test $(cat /etc/hostname) = stor02"),
    # ofed (inbox flavor): its packages
    Mutation("ofed", "stor01", "package ibverbs-utils missing", "dpkg -r --force-depends ibverbs-utils >/dev/null",
             "dpkg-query -W -f='${Status}' ibverbs-utils | grep -q 'install ok installed'"),
    # nvme_storage: the udev rule, the drives' record, their directories
    Mutation("nvme_storage", "stor01", f"file {UDEV_RULE} content", f"echo '# local' >> {UDEV_RULE}",
             f"! grep -q '# local' {UDEV_RULE}"),
    Mutation("nvme_storage", "stor02", DRIVES_RECORD, f"rm {DRIVES_RECORD}", f"test -s {DRIVES_RECORD}"),
    Mutation("nvme_storage", "stor02", f"directory {os.path.dirname(UDEV_RULE)} mode",
             f"chmod 0700 {os.path.dirname(UDEV_RULE)}", f"test $(stat -c %a {os.path.dirname(UDEV_RULE)}) = 755"),
    # switch: the ports it configures (MTU, admin state, PFC), read from the switch's facts
    Mutation("switch", "sw1", r"1/2\b", ["interface ethernet 1/2", "mtu 1500 force", "exit"],
             ["sw1/switches/port_mtu[1/2]"]),
    Mutation("switch", "sw1", r"1/1\b", ["interface ethernet 1/1", "description stray", "exit"], []),
    Mutation("switch", "sw1", r"1/18\b", ["interface ethernet 1/18", "shutdown", "exit"],
             ["sw1/switches/port_admin_up[1/18]"]),
    Mutation("switch", "sw1", r"1/17\b", _PFC_ON,
             ["sw1/switches/port_pfc_off[1/17]", "sw1/switches/no_lossless_priority"]),
    # fabric: the data plane on each data NIC (roles/fabric/filter_plugins/fabric_dataplane.py declares it
    # once for the tasks and the read): admin state, live MTU, a route or a neighbour entry overriding
    # the planned ones
    Mutation("fabric", "stor01", "data0: set down", "ip link set data0 down",
             "ip -o link show data0 | grep -q '[<,]UP[,>]'"),
    Mutation("fabric", "stor02", "live MTU or address of data0", "ip link set data0 mtu 1500",
             "ip -o link show data0 | grep -q 'mtu 9000'"),
    Mutation("fabric", "dgx01", "blackhole 198.19.0.22", "ip route add blackhole 198.19.0.22/32",
             "! ip route show type blackhole | grep -q 198.19.0.22"),
    Mutation("fabric", "dgx02", "static neighbour entry 198.19.0.21",
             f"ip neigh replace 198.19.0.21 lladdr {BOGUS_MAC} dev data0 nud permanent",
             f"! ip neigh show 198.19.0.21 dev data0 | grep -qi {BOGUS_MAC}"),
    # healthcheck (issue 55): the node check's files, on the nodes of lab.yaml's scheduler
    Mutation("healthcheck", "dgx01", "file /etc/racfg/node-check.json content",
             "echo '{}' > /etc/racfg/node-check.json", "grep -q '\"node\": \"dgx01\"' /etc/racfg/node-check.json"),
    Mutation("healthcheck", "stor01", "file /usr/local/sbin/racfg-node-check mode",
             "chmod 0700 /usr/local/sbin/racfg-node-check",
             "test $(stat -c %a /usr/local/sbin/racfg-node-check) = 755"),
)


@dataclass
class MutationRun:
    """What the one read with every mutation planted named, and what held after the one deploy."""

    planted: dict[str, str]  # row id -> why it could not be planted (none: all were)
    read: dict[str, list[str]]  # host -> the failing config checks ("HOST/config/ROLE/ITEM")
    repaired: dict[str, bool]  # row id -> its item is back
    read_after: dict[str, list[str]]
    validate_after: tuple[set[str], set[str]]  # failing, erroring checks


def _plant(site: DeployedSite, row: Mutation) -> str:
    """Why ``row`` could not be planted ("" once it is): that row fails, not the others."""
    if isinstance(row.plant, list):
        site.switch_cli(row.plant)
        return ""
    proc = site.lab.ssh(row.host, row.plant, check=False)
    return "" if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"


def _config_fails(report: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in report["results"]:
        if r["category"] == "config" and r["status"] in ("fail", "error"):
            out.setdefault(r["target"], []).append(r["check"])
    return out


@pytest.fixture(scope="module")
def mutated(site: DeployedSite) -> MutationRun:
    planted = {row.id: _plant(site, row) for row in MUTATIONS}
    _, read = site.drift()
    site.deploy()
    site.settled()
    repaired = {}
    _, after = site.validate()
    for row in MUTATIONS:
        if isinstance(row.repaired, list):
            repaired[row.id] = not (set(row.repaired) & (by_status(after, "fail") | by_status(after, "error")))
        else:
            repaired[row.id] = site.lab.ssh(row.host, row.repaired, check=False).returncode == 0
    _, read_after = site.drift()
    return MutationRun(planted, _config_fails(read), repaired, _config_fails(read_after),
                       (by_status(after, "fail"), by_status(after, "error")))


@pytest.mark.parametrize("row", MUTATIONS, ids=lambda r: r.id)
def test_the_read_names_each_owned_item_changed_by_hand_and_a_deploy_repairs_it(
        mutated: MutationRun, row: Mutation) -> None:
    assert not mutated.planted[row.id], f"could not plant {row.id}: {mutated.planted[row.id]}"
    prefix = f"{row.host}/config/{row.role}/"
    named = [c for c in mutated.read.get(row.host, []) if c.startswith(prefix) and re.search(row.item, c[len(prefix):])]
    assert named, f"the read pass does not see {row.id}; it named: {mutated.read.get(row.host, [])}"
    assert mutated.repaired[row.id], f"a deploy did not repair {row.id}"
    assert mutated.read_after.get(row.host, []) == [], mutated.read_after


def test_after_the_mutations_deploy_the_lab_validates_clean(mutated: MutationRun) -> None:
    assert mutated.validate_after == (set(), set())


# --- point 4: every fix command works ------------------------------------------------------------------

@dataclass(frozen=True)
class Fault:
    """A fault of one problem kind: how to plant it and, for a fix a person does, how to do that part
    by hand (``by_hand``; None: the printed fix is a racfg command that repairs it). ``problem``: the id
    validate gives it (None: the run's only problem), ``fix``: what the fix must start with (a
    command) or contain (a person's action). ``cause``: a word the problem's cause must say."""

    kind: str
    plant: Callable[[DeployedSite], None]
    problem: str | None
    fix: str
    undo: Callable[[DeployedSite], None]
    by_hand: Callable[[DeployedSite], None] | None = None
    cause: str = ""
    settle: bool = False  # after the repair, wait for LLDP and time sync (a link or an agent came back)
    code: int = 1  # validate's exit code with the fault: 1 a check failed, 3 only errors (could not check)


def _ssh(host: str, command: str) -> Callable[[DeployedSite], None]:
    def act(site: DeployedSite) -> None:
        site.lab.ssh(host, command)
    return act


def _cli(*lines: str) -> Callable[[DeployedSite], None]:
    return lambda site: site.switch_cli(list(lines))


def _deploy(host: str, tags: str) -> str:
    return f"racfg deploy {INVENTORY} --limit {host} --tags {tags}"


def _link(port: str, up: bool) -> Callable[[DeployedSite], None]:
    """sw1's port down (or up) on the data plane, not in its config: the cable dead, both ends admin up."""
    def act(site: DeployedSite) -> None:
        api.set_link(site.lab.site, "sw1", port, up=up)
        if up:
            wait_for(f"LLDP back on sw1 {port}", lambda: site.lldp_is({"1/18": "stor02"}))
    return act


_swap, _unswap = cable_swap(("dgx02", "data0"), ("stor01", "data0"), ("1/2", "1/17"))


def _data_address(site: DeployedSite, host: str) -> str:
    return str(site.lab.host(host).nics[0].address)


def _move_address(site: DeployedSite) -> None:
    have = _data_address(site, "stor02")
    site.lab.ssh("stor02", f"ip addr del {have} dev data0 && ip addr add {have.replace('.22/', '.29/')} dev data0")


def _move_back(site: DeployedSite) -> None:
    have = _data_address(site, "stor02")
    site.lab.ssh("stor02", f"ip addr del {have.replace('.22/', '.29/')} dev data0 2>/dev/null; "
                           f"ip addr replace {have} dev data0", check=False)


def _blackhole(add: bool) -> Callable[[DeployedSite], None]:
    def act(site: DeployedSite) -> None:
        address = _data_address(site, "stor01").split("/")[0]
        site.lab.ssh("dgx01", f"ip route {'add' if add else 'del'} blackhole {address}/32", check=False)
    return act


def _stray_neighbour(add: bool) -> Callable[[DeployedSite], None]:
    def act(site: DeployedSite) -> None:
        address = _data_address(site, "stor01").split("/")[0]
        command = (f"ip neigh replace {address} lladdr {BOGUS_MAC} dev data0 nud permanent" if add
                   else f"ip neigh del {address} dev data0")
        site.lab.ssh("dgx01", command, check=False)
    return act


def _chrony_at_nowhere(site: DeployedSite) -> None:
    site.lab.ssh("stor01", "sed -i 's/^server .*/server 192.0.2.1 iburst/' /etc/chrony/chrony.conf && "
                           "systemctl restart chrony")


def _sshd(host: str, running: bool) -> Callable[[DeployedSite], None]:
    """The host's SSH server stopped (by a person, or an upgrade that left it down) or started again, at the
    machine's console (the lab's exec: no SSH needed)."""
    def act(site: DeployedSite) -> None:
        site.lab.exec(host, ["systemctl", "start" if running else "stop", "ssh"])
        if running:
            wait_for(f"{host}'s sshd", lambda: site.lab.ssh(host, "true", check=False).returncode == 0)
    return act


def _settle(host: str) -> Callable[[DeployedSite], None]:
    return lambda site: site.settled([host])


def _redeploy(host: str, tags: str, still: str) -> Callable[[DeployedSite], None]:
    """The undo of a fault the printed fix did not repair (the test failed; ``still``, a shell test on the
    host, says the fault is there): the role's own deploy of the host. Nothing when the fix repaired it."""
    def act(site: DeployedSite) -> None:
        if site.lab.ssh(host, still, check=False).returncode == 0:
            site.deploy("--limit", host, "--tags", tags)
            site.settled([host])
    return act


FAULTS = (
    Fault("port_admin", _cli("interface ethernet 1/2", "shutdown", "exit"), "port_admin:sw1:1/2",
          _deploy("sw1", "switch"), _cli("interface ethernet 1/2", "no shutdown", "exit"), settle=True),
    Fault("nic_admin", _ssh("dgx01", "ip link set data0 down"), "nic_admin:dgx01:data0",
          _deploy("dgx01", "fabric"), _ssh("dgx01", "ip link set data0 up"), settle=True),
    Fault("carrier", _link("1/18", False), "carrier:sw1:1/18", "check the cable", _link("1/18", True),
          by_hand=_link("1/18", True), settle=True),
    Fault("agent", _ssh("stor01", "systemctl stop lldpd"), "agent:stor01:lldpd", _deploy("stor01", "common"),
          _ssh("stor01", "systemctl start lldpd"), settle=True),
    Fault("agent", _ssh("stor02", "systemctl stop chrony"), "agent:stor02:chronyd", _deploy("stor02", "common"),
          _ssh("stor02", "systemctl start chrony"), settle=True),
    Fault("cabling", _swap, "cabling:sw1:1/2+1/17", "swap the cables at sw1 ports 1/2 and 1/17", _unswap,
          by_hand=_unswap),
    Fault("address", _move_address, "address:stor02:data0", _deploy("stor02", "fabric"), _move_back),
    Fault("port_mtu", _cli("interface ethernet 1/17", "mtu 1500 force", "exit"), "port_mtu:sw1:1/17",
          _deploy("sw1", "switch"), _cli("interface ethernet 1/17", "mtu 9000 force", "exit")),
    Fault("host_mtu", _ssh("dgx02", "ip link set data0 mtu 1500"), "host_mtu:dgx02:data0", _deploy("dgx02", "fabric"),
          _ssh("dgx02", "ip link set data0 mtu 9000")),
    Fault("pfc", _cli(*_PFC_ON), "pfc:sw1", _deploy("sw1", "switch"), _cli(*_PFC_OFF)),
    Fault("check", _ssh("stor01", "dpkg -r --force-depends ibverbs-utils >/dev/null"),
          "check:stor01/packages/installed[ibverbs-utils]", _deploy("stor01", "ofed"),
          _ssh("stor01", "apt-get install -y -q --no-install-recommends ibverbs-utils >/dev/null")),
    Fault("check", _ssh("dgx01", "sysctl -q -w net.ipv4.tcp_mtu_probing=0"),
          "check:dgx01/tuning/sysctl_live[net.ipv4.tcp_mtu_probing]", _deploy("dgx01", "common"),
          _ssh("dgx01", "sysctl -q -w net.ipv4.tcp_mtu_probing=1")),
    Fault("time_sources", _chrony_at_nowhere, "time_sources:stor01:chrony", _deploy("stor01", "common"),
          _redeploy("stor01", "common", "grep -q 192.0.2.1 /etc/chrony/chrony.conf"), cause="192.0.2.1",
          settle=True),
    Fault("lldpd_config", _ssh("dgx01", f"sed -i 's/^configure system hostname .*/configure system hostname dgx09/' "
                                        f"{LLDPD_CONF} && systemctl restart lldpd"),
          "lldpd_config:dgx01:lldpd", _deploy("dgx01", "common"),
          _redeploy("dgx01", "common", f"grep -q 'hostname dgx09' {LLDPD_CONF}"), cause="dgx09", settle=True),
    Fault("sysctl_file", _ssh("stor02", f"rm {SYSCTL_FILE}"), "sysctl_file:stor02:sysctl", _deploy("stor02", "common"),
          _redeploy("stor02", "common", f"test ! -e {SYSCTL_FILE}"), cause=SYSCTL_FILE),
    Fault("unreadable", _sshd("stor02", False), "unreadable:stor02", "start the SSH server on stor02",
          _sshd("stor02", True), by_hand=_sshd("stor02", True), cause="cannot reach root@", code=3),
    Fault("dataplane", _blackhole(True), "dataplane:dgx01:data0", _deploy("dgx01", "fabric"), _blackhole(False),
          cause="blackhole 198.19.0.21 overrides"),
    Fault("dataplane", _stray_neighbour(True), "dataplane:dgx01:data0", _deploy("dgx01", "fabric"),
          _stray_neighbour(False), cause=f"lladdr {BOGUS_MAC}"),
)


def _fault_id(fault: Fault) -> str:
    return f"{fault.kind}:{fault.problem or 'one problem'}" + (f":{fault.cause}" if fault.cause else "")


def run_fix(site: DeployedSite, fix: str) -> subprocess.CompletedProcess[str]:
    """The printed fix, verbatim: its words as printed, `racfg` the installed command; RACFG_YES is the
    confirmation an operator's automation gives (deploy asks for it off a terminal)."""
    argv = shlex.split(fix)
    assert argv[0] == "racfg", fix
    return subprocess.run([str(RACFG_BIN), *argv[1:]], capture_output=True, text=True, timeout=900,
                          env={**site.env, "RACFG_YES": "1"}, stdin=subprocess.DEVNULL)


def _clean(site: DeployedSite) -> tuple[int, list[str], set[str], set[str]]:
    code, report = site.validate()
    return code, [p["id"] for p in report["problems"]], by_status(report, "fail"), by_status(report, "error")


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: _fault_id(f) if isinstance(f, Fault) else None)
def test_each_problem_kind_is_repaired_by_the_fix_validate_prints(site: DeployedSite, fault: Fault) -> None:
    fault.plant(site)
    try:
        code, report = site.validate()
        problems = {p["id"]: p for p in report["problems"]}
        assert code == fault.code, f"validate exits {code} for {fault.kind}: {report['problems']}"
        if fault.problem is None:
            assert len(problems) == 1, list(problems)
            problem = next(iter(problems.values()))
        else:
            assert fault.problem in problems, list(problems)
            problem = problems[fault.problem]
        assert fault.cause in problem["cause"], problem  # the cause, not its symptom
        fix = problem["fix"] or ""
        if fault.by_hand is None:
            assert fix == fault.fix, problem
            proc = run_fix(site, fix)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        else:
            assert fault.fix in fix and "racfg deploy" not in fix, problem
            fault.by_hand(site)
        if fault.settle:
            site.settled()
        assert _clean(site) == (0, [], set(), set())
    finally:
        fault.undo(site)
