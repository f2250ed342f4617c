"""A deployed lab shared by the acceptance suites (validate, drift): tests/vallab.yaml, 3 dgx +
3 storage on one Onyx switch, its own site and subnets, deployed once per session.

``DeployedSite`` runs racfg as a user does (a subprocess with its own state directory) and
plants faults the way an operator would: over SSH on hosts, through the switch's CLI, by moving
cables and pulling drives. Waits poll real conditions with bounded deadlines.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

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

    inventory = INVENTORY

    def __init__(self, handle, state_dir: Path) -> None:
        self.lab = handle
        self.state_dir = state_dir
        self.env = {**os.environ, "RACFG_STATE_DIR": str(state_dir), "RACFG_PLAIN": "1"}

    def racfg(self, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*RACFG, *args], capture_output=True, text=True, env=self.env, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def json_command(self, command: str, *args: str) -> tuple[int, dict]:
        proc = self.racfg(command, str(INVENTORY), "--format", "json", *args)
        assert proc.returncode in (0, 1, 3), proc.stdout[-2000:] + proc.stderr[-3000:]
        return proc.returncode, json.loads(proc.stdout)

    def validate(self, *args: str) -> tuple[int, dict]:
        return self.json_command("validate", *args)

    def drift(self, *args: str) -> tuple[int, dict]:
        return self.json_command("drift", *args)

    def deploy(self, *args: str) -> None:
        proc = self.racfg("deploy", str(INVENTORY), "--yes", *args)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]

    @property
    def switch(self) -> SwitchTarget:
        sw = self.lab.cluster.switches["sw1"].spec
        return SwitchTarget("sw1", sw.platform, sw.mgmt, username="admin",
                            password=self.lab.overrides.switch_passwords["sw1"])

    def switch_cli(self, lines: list[str], save: bool = True) -> None:
        """Configure the switch as an operator would, over its SSH CLI."""
        with SwitchSession(self.switch) as session:
            session.conn.send_config_set([*lines, *(["configuration write"] if save else [])])

    def lldp_is(self, expected: dict[str, str]) -> bool:
        """The switch's LLDP table (port -> host) is as given."""
        lldp = read_facts(self.switch).lldp
        return all(p in lldp and lldp[p].system_name == host for p, host in expected.items())

    def synchronised(self, host: str) -> bool:
        out = self.lab.ssh(host, "chronyc -n tracking", check=False).stdout
        return "Leap status     : Normal" in out

    def settled(self) -> None:
        """Wait until time sync and LLDP have converged after a (re)start: both take seconds."""
        for host in self.lab.hosts():
            wait_for(f"chrony on {host.name} to synchronise", lambda h=host.name: self.synchronised(h))
        wanted = {n.port: h.name for h in self.lab.hosts() for n in h.nics}
        wait_for("the switch to hear every host over LLDP", lambda: self.lldp_is(wanted))

    def plant_faults(self) -> None:
        """The faults an operator makes, one on each target, the same for validate and drift."""
        from racfg.lab import api

        lab = self.lab
        lab.ssh("dgx01", "ip link set data0 mtu 1500")  # host NIC MTU
        self.switch_cli(["interface ethernet 1/2", "mtu 1500 force", "exit"])  # switch port MTU (saved)
        self.switch_cli(["interface ethernet 1/17", "dcb priority-flow-control mode on force", "exit",
                         "dcb priority-flow-control priority 3 enable"])  # PFC on a port, a lossless priority
        api.swap_cables(lab.site, ("dgx03", "data0"), ("stor02", "data0"))  # two cables swapped
        lab.ssh("stor03", "sysctl -w net.ipv4.tcp_mtu_probing=0 && rm /etc/sysctl.d/90-racfg.conf")
        lab.ssh("dgx02", "systemctl stop chrony")
        lab.ssh("stor01", "dpkg -r --force-depends ibverbs-utils >/dev/null")  # a package the roles install
        # a drive pulled: the lab's drive is a bind-mounted block device; unmounting it leaves an empty
        # placeholder, so the host no longer has that block device
        lab.ssh("stor02", "umount /dev/nvme1n1")
        self.switch_cli(["interface ethernet 1/30", "shutdown", "exit"], save=False)  # changed, not saved
        wait_for("LLDP to see the swapped cables", lambda: self.lldp_is({"1/3": "stor02", "1/18": "dgx03"}))

    def repair_by_hand(self) -> None:
        """What deploy cannot do: cables back, the drive re-inserted (a power cycle of the lab host binds
        its drives again), the unmanaged port as it was. Deploy does the rest."""
        from racfg.lab import api

        api.unswap_cables(self.lab.site, ("dgx03", "data0"), ("stor02", "data0"))
        api.stop_host(self.lab.site, "stor02")
        api.start_host(self.lab.site, "stor02")
        self.switch_cli(["interface ethernet 1/30", "no shutdown", "exit"])

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
