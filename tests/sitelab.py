"""A deployed lab shared by the acceptance suites (validate, drift): tests/vallab.yaml, 3 dgx +
3 storage on one Onyx switch, its own site and subnets, deployed once per session.

``DeployedSite`` runs racfg as a user does (a subprocess with its own state directory) and
plants faults the way an operator would: over SSH on hosts, through the switch's CLI, by moving
cables and pulling drives. Waits poll real conditions with bounded deadlines.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import secretscan

from racfg.switches import SwitchSession, SwitchTarget, read_facts

INVENTORY = Path(__file__).parent / "vallab.yaml"
RACFG = [sys.executable, "-m", "racfg"]


def wait_for(what: str, condition: Callable[[], bool], timeout: float = 90.0) -> None:
    """Poll a real condition with a bounded deadline (never a bare sleep)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(1.0)


class DeployedSite:
    """The deployed lab and the commands a test runs on it."""

    def __init__(self, handle, state_dir: Path, inventory: Path = INVENTORY) -> None:
        self.inventory = inventory
        self.lab = handle
        self.state_dir = state_dir
        self.env = {**os.environ, "RACFG_STATE_DIR": str(state_dir), "RACFG_PLAIN": "1", **self.password_env()}
        self.saved_sysctl = ""  # the racfg sysctl file as deployed, while a fault has it removed
        self.argv: secretscan.ArgvSampler | None = None  # what deploy(sample_argv=True) saw

    def password_env(self) -> dict[str, str]:
        """Each ``password_env`` the inventory names, set to the lab switch's password, as an operator
        exports it (``export VAR=$(cat <the lab's password file>)``): racfg reads that variable itself."""
        passwords = self.lab.overrides.switch_passwords
        return {sw.spec.credentials.password_env: passwords[name] for name, sw in self.lab.cluster.switches.items()
                if sw.spec.credentials.password_env}

    def racfg(self, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*RACFG, *args], capture_output=True, text=True, env=self.env, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def json_command(self, command: str, *args: str) -> tuple[int, dict]:
        proc = self.racfg(command, str(self.inventory), "--format", "json", *args)
        assert proc.returncode in (0, 1, 3), proc.stdout[-2000:] + proc.stderr[-3000:]
        return proc.returncode, json.loads(proc.stdout)

    def validate(self, *args: str) -> tuple[int, dict]:
        return self.json_command("validate", *args)

    def drift(self, *args: str) -> tuple[int, dict]:
        return self.json_command("drift", *args)

    def deploy(self, *args: str, sample_argv: bool = False) -> None:
        """``racfg deploy --yes ARGS``; with ``sample_argv`` every process's argv is read while it runs
        (``self.argv``, for secretscan.assert_clean)."""
        sampler = secretscan.ArgvSampler(secretscan.lab_secrets(self.lab, self.env)) if sample_argv else None
        with sampler.running() if sampler is not None else contextlib.nullcontext():
            proc = self.racfg("deploy", str(self.inventory), "--yes", *args)
        self.argv = sampler or self.argv
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]

    def assert_no_secret(self, *other_dirs: Path) -> None:
        """No secret of this lab in any file of the state directory, ``other_dirs`` or the lab's site
        directory, nor in any argv sampled during the deploy (see secretscan)."""
        secretscan.assert_clean(self.lab, self.env, [self.state_dir], other_dirs, self.argv)

    @property
    def switch(self) -> SwitchTarget:
        return self.switch_target("sw1")

    def switch_target(self, name: str) -> SwitchTarget:
        sw = self.lab.cluster.switches[name].spec
        return SwitchTarget(name, sw.platform, sw.mgmt, username="admin",
                            password=self.lab.overrides.switch_passwords[name], known_hosts=self.lab.known_hosts)

    def switch_cli(self, lines: list[str], save: bool = True, switch: str = "sw1") -> None:
        """Configure a switch as an operator would, over its SSH CLI."""
        with SwitchSession(self.switch_target(switch)) as session:
            session.conn.send_config_set([*lines, *(["configuration write"] if save else [])])

    def lldp_is(self, expected: dict[str, str]) -> bool:
        """The switch's LLDP table (port -> host) is as given."""
        lldp = read_facts(self.switch).lldp
        return all(p in lldp and lldp[p].system_name == host for p, host in expected.items())

    def synchronised(self, host: str) -> bool:
        out = self.lab.ssh(host, "chronyc -n tracking", check=False).stdout
        return "Leap status     : Normal" in out

    def settled(self, hosts: list[str] | None = None) -> None:
        """Wait until time sync (on ``hosts``, default all) and LLDP have converged after a (re)start: both
        take seconds."""
        for name in hosts or [h.name for h in self.lab.hosts()]:
            wait_for(f"chrony on {name} to synchronise", lambda h=name: self.synchronised(h))
        wanted = {n.port: h.name for h in self.lab.hosts() for n in h.nics}
        wait_for("the switch to hear every host over LLDP", lambda: self.lldp_is(wanted))

    def plant_faults(self) -> None:
        """Every fault of ``FAULTS`` at once, the same for validate and drift."""
        for fault in FAULTS:
            fault.plant(self)

    def repair_by_hand(self) -> None:
        """What deploy cannot do (cables back, the drive re-inserted, the unmanaged port as it was, the
        downgraded package upgraded again); a deploy does the rest."""
        for fault in FAULTS:
            if fault.by_hand is not None:
                fault.by_hand(self)

    def sysctl_file(self, host: str) -> str:
        return self.lab.ssh(host, f"cat {SYSCTL_FILE}").stdout

    def fingerprint(self) -> dict[str, str]:
        """What a read-only command must leave exactly as it was: switch config and host state."""
        with SwitchSession(self.switch) as session:
            running = "\n".join(line for line in session.show("show running-config").splitlines()
                                if not line.startswith("##"))
            saved = session.show("show configuration files")
        out = {"sw1": hashlib.sha256((running + saved).encode()).hexdigest()}
        probe = ("cat /etc/sysctl.d/*.conf /etc/chrony/chrony.conf /etc/hosts 2>&1; ip -j addr; "
                 "dpkg-query -W; ls -l /dev/nvme* 2>&1; systemctl is-active chrony lldpd; "
                 "find /etc /root /var/lib/dpkg -newer /etc/hostname -type f 2>/dev/null | sort")
        for host in self.lab.hosts():
            text = self.lab.ssh(host.name, probe, check=False).stdout
            out[host.name] = hashlib.sha256(text.encode()).hexdigest()
        return out


def by_status(report: dict, status: str) -> set[str]:
    return {r["check"] for r in report["results"] if r["status"] == status}


def drift_layers(report: dict, status: str = "fail") -> set[tuple[str, str]]:
    """(target, layer) of a drift report's results with ``status``."""
    return {(r["target"], r["category"]) for r in report["results"] if r["status"] == status}


def env_checks(report: dict) -> set[str]:
    """The failing checks of a drift report's environment layer."""
    return {r["check"] for r in report["results"] if r["status"] == "fail" and r["category"] == "environment"}


# --- the faults an operator makes ------------------------------------------------------------------
# One table for the acceptance suites: the drift suite plants them in groups on separate targets
# (separate_groups), and validate and drift both read them all planted at once (tests/faults/).
# ``repair`` is the exact inverse by hand (cheaper than a deploy per fault); ``by_hand`` is the part
# of it `racfg deploy` cannot do (None: deploy repairs the fault).

SYSCTL_FILE = "/etc/sysctl.d/90-racfg.conf"
OLDER_LIBEVENT = "2.1.12-stable-8"  # the bookworm release; the lab repository holds it beside bookworm-security's
CURRENT_LIBEVENT = "2.1.12-stable-8+deb12u1"


@dataclass(frozen=True)
class Fault:
    """A fault: how to plant and undo it, and what drift must report for it alone (and nothing else).

    ``drift`` is the set of (target, layer) that drift reports failing; ``environment`` the environment
    checks among them, each named exactly; ``errors`` the (target, layer) drift could not read because of
    the fault (a role that refuses to plan a host whose declared drive is missing).
    """

    name: str
    plant: Callable[[DeployedSite], None]
    repair: Callable[[DeployedSite], None]
    drift: frozenset[tuple[str, str]]
    environment: frozenset[str] = frozenset()
    by_hand: Callable[[DeployedSite], None] | None = None
    errors: frozenset[tuple[str, str]] = frozenset()

    @property
    def targets(self) -> frozenset[str]:
        """The hosts and switches drift reports something on for this fault."""
        return frozenset(target for target, _ in self.drift | self.errors)


def separate_groups(faults: tuple[Fault, ...]) -> tuple[tuple[Fault, ...], ...]:
    """``faults`` in groups (first fit, in order) where no two share a host or switch.

    Why: a drift run is a check-mode deploy of the whole site, the slow part of the drift suite. With
    the faults of a group on separate targets, whatever drift reports on a target is put down to the
    one fault there, so one run per group checks each fault in exactly its layers and nothing on any
    other target, in four runs instead of nine. What it cannot tell apart: a fault that also showed on
    another member's target, in a layer that member reports anyway (the all-at-once reading in
    tests/faults/ has the same blind spot). Each fault here was read alone, one run each, until
    2026-11-23: none showed anywhere but on its own targets.
    """
    groups: list[list[Fault]] = []
    for fault in faults:
        group = next((g for g in groups if not any(fault.targets & other.targets for other in g)), None)
        if group is None:
            groups.append([fault])
        else:
            group.append(fault)
    return tuple(tuple(group) for group in groups)


def _layers(*pairs: tuple[str, str]) -> frozenset[tuple[str, str]]:
    return frozenset(pairs)


def _all_layers(target: str) -> frozenset[tuple[str, str]]:
    return _layers((target, "config"), (target, "state"), (target, "environment"))


_PFC_ON = ["interface ethernet 1/17", "dcb priority-flow-control mode on force", "exit",
           "dcb priority-flow-control priority 3 enable"]
_PFC_OFF = ["interface ethernet 1/17", "no dcb priority-flow-control mode force", "exit",
            "no dcb priority-flow-control priority 3 enable"]
def cable_swap(a: tuple[str, str], b: tuple[str, str], ports: tuple[str, str]) -> tuple[
        Callable[[DeployedSite], None], Callable[[DeployedSite], None]]:
    """Two hosts' cables swapped at sw1, and put back: (swap, unswap), each waiting until LLDP on sw1
    sees it. ``a`` and ``b`` are (host, NIC); ``ports`` the sw1 ports their cables are planned on."""
    def lldp(first: str, second: str) -> dict[str, str]:
        return {ports[0]: first, ports[1]: second}

    def swap(site: DeployedSite) -> None:
        from racfg_lab import api

        api.swap_cables(site.lab.site, a, b)
        wait_for("LLDP to see the swapped cables", lambda: site.lldp_is(lldp(b[0], a[0])))

    def unswap(site: DeployedSite) -> None:
        from racfg_lab import api

        api.unswap_cables(site.lab.site, a, b)
        wait_for("LLDP to see the cables back", lambda: site.lldp_is(lldp(a[0], b[0])))

    return swap, unswap


_swap, _unswap = cable_swap(("dgx03", "data0"), ("stor02", "data0"), ("1/3", "1/18"))


_SYSCTL_KEY = "net.ipv4.tcp_mtu_probing"


def _remove_sysctl(site: DeployedSite) -> None:
    site.saved_sysctl = site.sysctl_file("stor03")
    site.lab.ssh("stor03", f"sysctl -w {_SYSCTL_KEY}=0 >/dev/null && rm {SYSCTL_FILE}")


def _restore_sysctl(site: DeployedSite) -> None:
    """The file back and the one key set live again (``sysctl -p`` of the whole file fails in the lab: a
    container may not set some of its keys, e.g. net.core.rmem_max)."""
    value = next(line.split("=", 1)[1].strip() for line in site.saved_sysctl.splitlines()
                 if line.split("=", 1)[0].strip() == _SYSCTL_KEY)
    site.lab.ssh("stor03", f"printf %s {shlex.quote(site.saved_sysctl)} > {SYSCTL_FILE} && "
                           f"sysctl -q -w {_SYSCTL_KEY}={shlex.quote(value)}")


def _change_packages(site: DeployedSite) -> None:
    site.lab.ssh("stor01", "dpkg -r --force-depends ibverbs-utils >/dev/null")  # a package the roles install
    site.lab.ssh("dgx03", f"apt-get install -y -q --allow-downgrades libevent-2.1-7={OLDER_LIBEVENT} >/dev/null",
                 timeout=180)  # lldpd's library, to the older version of the lab repository


def _restore_packages(site: DeployedSite) -> None:
    site.lab.ssh("stor01", "apt-get install -y -q --no-install-recommends ibverbs-utils >/dev/null", timeout=180)
    _upgrade_libevent(site)


def _upgrade_libevent(site: DeployedSite) -> None:
    site.lab.ssh("dgx03", f"apt-get install -y -q libevent-2.1-7={CURRENT_LIBEVENT} >/dev/null", timeout=180)


def _pull_drive(site: DeployedSite) -> None:
    # the lab's drive is a bind-mounted block device; unmounting it leaves an empty placeholder, so the
    # host no longer has that block device
    site.lab.ssh("stor02", "umount /dev/nvme1n1")


def _reinsert_drive(site: DeployedSite) -> None:
    """A power cycle of the lab host binds its drives again."""
    from racfg_lab import api

    api.stop_host(site.lab.site, "stor02")
    api.start_host(site.lab.site, "stor02")
    site.settled(["stor02"])


def _restore_port30(site: DeployedSite) -> None:
    """The unmanaged port up again, and saved (the saved config is then the deployed one again)."""
    site.switch_cli(["interface ethernet 1/30", "no shutdown", "exit"])


def _start_chrony(site: DeployedSite) -> None:
    site.lab.ssh("dgx02", "systemctl start chrony")
    site.settled(["dgx02"])


FAULTS: tuple[Fault, ...] = (
    Fault("host NIC MTU",
          lambda s: s.lab.ssh("dgx01", "ip link set data0 mtu 1500"),
          lambda s: s.lab.ssh("dgx01", "ip link set data0 mtu 9000"),
          _all_layers("dgx01"), frozenset({"dgx01/environment/nics/data0/mtu"})),
    Fault("switch port MTU (saved)",
          lambda s: s.switch_cli(["interface ethernet 1/2", "mtu 1500 force", "exit"]),
          lambda s: s.switch_cli(["interface ethernet 1/2", "mtu 9000 force", "exit"]),
          _all_layers("sw1") | {("dgx02", "state")},  # jumbo frames through sw1 1/2
          frozenset({"sw1/environment/ports/1/2/mtu"})),
    Fault("PFC on a port, a lossless priority",
          lambda s: s.switch_cli(_PFC_ON), lambda s: s.switch_cli(_PFC_OFF),
          _all_layers("sw1"), frozenset({"sw1/environment/pfc/ports/1/17", "sw1/environment/pfc/lossless_priorities"})),
    Fault("two cables swapped", _swap, _unswap,
          _layers(("dgx03", "state"), ("stor02", "state"), ("sw1", "state")), by_hand=_unswap),
    Fault("a sysctl changed live and its file removed", _remove_sysctl, _restore_sysctl,
          _layers(("stor03", "config"), ("stor03", "state"))),
    Fault("a package removed, another downgraded", _change_packages, _restore_packages,
          _all_layers("stor01") | {("dgx03", "environment")},
          frozenset({"stor01/environment/packages/ibverbs-utils", "dgx03/environment/packages/libevent-2.1-7"}),
          by_hand=_upgrade_libevent),  # the roles install what is missing; a downgraded package is present
    Fault("a drive pulled", _pull_drive, _reinsert_drive,
          _layers(("stor02", "state"), ("stor02", "environment")),
          frozenset({"stor02/environment/drives//dev/nvme1n1"}), by_hand=_reinsert_drive,
          errors=_layers(("stor02", "config"))),  # nvme_storage: "Check the free drives exist, are not in use, ..."
    Fault("chrony stopped",
          lambda s: s.lab.ssh("dgx02", "systemctl stop chrony"), _start_chrony,
          _layers(("dgx02", "config"), ("dgx02", "state")),
          errors=_layers(("dgx02", "state"))),  # validate: the clock cannot be read while chronyd is down
    Fault("switch config changed, not saved",
          lambda s: s.switch_cli(["interface ethernet 1/30", "shutdown", "exit"], save=False),
          _restore_port30,
          _layers(("sw1", "state"), ("sw1", "environment")),
          frozenset({"sw1/environment/ports/1/30/admin_up"}),
          by_hand=_restore_port30),
)
