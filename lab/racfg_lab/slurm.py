"""The lab's Slurm: the site's scheduler, run for real when the inventory declares one.

A site runs Slurm already and racfg never installs it; the lab stands in for that site, so it
runs Debian's Slurm 22.05 and MUNGE itself (they are in the image, disabled, see image.py):
slurmctld in one more machine on the management network, named and addressed as
``scheduler.controller`` says and reached over SSH as root with the lab's key like the hosts
(``racfg gate`` runs scontrol there), slurmd and munged in every inventory host. One slurm.conf,
rendered from the inventory, and one MUNGE key, made at ``lab up``, go into every machine's root
before it boots; the key is written 0400 to the munge user and nowhere else (``lab down``
removes it with the machines' roots), so every node can run scontrol and sinfo too.
"""

from __future__ import annotations

import ipaddress
import os
import re
import subprocess
import time
from pathlib import Path

from racfg.errors import CannotRunError
from racfg.inventory.cluster import Cluster
from racfg.inventory.partitions import default_partition, partition_hosts
from racfg_lab import fabric, machines, names
from racfg_lab.netns import create_netns
from racfg_lab.state import HostState, LabState, save_state

CONF = "etc/slurm/slurm.conf"
MUNGE_KEY = "etc/munge/munge.key"
MUNGE_KEY_BYTES = 128  # mungekey's default (1024 bits)
NODE_CHECK = "/usr/local/sbin/racfg-node-check"  # the node check deploy installs (HealthCheckProgram)
CONTROLLER_ROLE = "slurmctld"
READY_TIMEOUT = 90.0
WANTS = "etc/systemd/system/multi-user.target.wants"

# Container-friendly plugins (no cgroup in an nspawn machine), no accounting database, and short
# timeouts so that a lab comes up fast. ReturnToService=1: a node that was down only because it
# stopped answering comes back when its slurmd registers again (a lab host restarted by `lab start`);
# a drained node stays drained until someone resumes it (2 would undrain it too).
SETTINGS = (
    "AuthType=auth/munge", "CredType=cred/munge", "SlurmUser=slurm", "SlurmdUser=root",
    "SlurmctldPort=6817", "SlurmdPort=6818",
    "StateSaveLocation=/var/lib/slurm/slurmctld", "SlurmdSpoolDir=/var/lib/slurm/slurmd",
    "SlurmctldPidFile=/run/slurmctld.pid", "SlurmdPidFile=/run/slurmd.pid",
    "SlurmctldLogFile=/var/log/slurm/slurmctld.log", "SlurmdLogFile=/var/log/slurm/slurmd.log",
    "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
    "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
    "SchedulerType=sched/backfill", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
    "MpiDefault=none", "MailProg=/bin/true", "ReturnToService=1",
    "SlurmctldTimeout=30", "SlurmdTimeout=30", "MessageTimeout=10", "TCPTimeout=5", "InactiveLimit=0",
    "MinJobAge=30", "KillWait=5", "Waittime=0",
)


def render_conf(cluster: Cluster) -> str:
    """slurm.conf for the inventory's scheduler: its controller, a node per host (at its management
    address), its partitions, and the node check as HealthCheckProgram."""
    scheduler = cluster.inventory.scheduler
    if scheduler is None:
        raise ValueError(f"{cluster.display} declares no scheduler")
    ctl = scheduler.controller
    default = default_partition(cluster)
    lines = [
        f"# racfg lab: rendered from {cluster.display} by `racfg lab up`; every machine of the lab has this file.",
        f"ClusterName={cluster.name.lower()}",
        f"SlurmctldHost={ctl.name}({ctl.address})",
        *SETTINGS,
        f"HealthCheckProgram={NODE_CHECK}",
        f"HealthCheckInterval={scheduler.health_check_interval}",
        "HealthCheckNodeState=ANY",
        *(f"NodeName={host.name} NodeAddr={host.mgmt} State=UNKNOWN" for host in cluster.hosts),
        *(f"PartitionName={name} Nodes={hostlist(hosts)} Default={'YES' if name == default else 'NO'} "
          "MaxTime=INFINITE State=UP" for name, hosts in partition_hosts(cluster).items()),
    ]
    return "\n".join(lines) + "\n"


def hostlist(names: list[str]) -> str:
    """Slurm's compressed form of a node list: a run of names with one prefix and consecutive numbers
    of one width becomes ``dgx[01-96]``, so a 1,000-node partition stays one short line; order is kept."""
    runs: list[list[str]] = []  # [prefix, digits of the first, digits of the last] or [name]
    for name in names:
        match = re.fullmatch(r"(.*?)(\d+)", name)
        if match is None:
            runs.append([name])
            continue
        prefix, digits = match.groups()
        last = runs[-1] if runs else None
        if last is not None and len(last) == 3 and last[0] == prefix and len(last[2]) == len(digits) \
                and int(last[2]) + 1 == int(digits):
            last[2] = digits
        else:
            runs.append([prefix, digits, digits])
    return ",".join(r[0] if len(r) == 1 else f"{r[0]}{r[1]}" if r[1] == r[2] else f"{r[0]}[{r[1]}-{r[2]}]"
                    for r in runs)


def lab_problems(cluster: Cluster) -> list[str]:
    """What keeps the lab from running the inventory's controller: a name or address another node
    has, or an address off the management network its nodes are on."""
    scheduler = cluster.inventory.scheduler
    if scheduler is None:
        return []
    ctl = scheduler.controller
    problems = []
    if ctl.name in {h.name for h in cluster.hosts} | set(cluster.switches):
        problems.append(f"scheduler controller {ctl.name}: a host or switch has that name")
    taken = {str(h.mgmt) for h in cluster.hosts} | {sw.spec.mgmt for sw in cluster.switches.values()}
    gateway = fabric.mgmt_gateway(cluster)
    if ctl.address in taken | {str(gateway.ip)}:
        problems.append(f"scheduler controller {ctl.name}: address {ctl.address} is another node's")
    elif ipaddress.IPv4Address(ctl.address) not in gateway.network:
        problems.append(f"scheduler controller {ctl.name}: {ctl.address} is not in the management network "
                        f"{gateway.network}")
    return problems


def add_controller(cluster: Cluster, state: LabState, directory: Path, image_root: Path, pubkey: str,
                   prefixlen: int) -> str:
    """Make the controller machine (namespace, management NIC, root) like a host's; it boots with
    the hosts. Returns its SSH host key line for the lab's known_hosts."""
    scheduler = cluster.inventory.scheduler
    assert scheduler is not None
    ctl = scheduler.controller
    ns = names.netns(cluster.name, ctl.name)
    hdir = machines.host_dir(directory, ctl.name)
    state.controller = HostState(ctl.name, CONTROLLER_ROLE, ns, ctl.address, str(hdir / "root"))
    create_netns(ns)
    fabric.attach_mgmt(cluster.name, ctl.name, ns, ctl.address, prefixlen)
    root = machines.mount_root(image_root, hdir)
    machines.mount_netns_sysfs(ns, hdir)
    return machines.prepare_root(root, ctl.name, pubkey)


def add_to_lab(cluster: Cluster, state: LabState, directory: Path, image_root: Path, pubkey: str,
               prefixlen: int) -> dict[str, str]:
    """When the inventory declares a scheduler: its controller machine, and Slurm's configuration in
    every machine's root (before they boot). Returns the controller's SSH host key line by name."""
    scheduler = cluster.inventory.scheduler
    if scheduler is None:
        return {}
    key_line = add_controller(cluster, state, directory, image_root, pubkey, prefixlen)
    save_state(state)
    configure(cluster, state, image_root)
    return {scheduler.controller.name: key_line}


def configure(cluster: Cluster, state: LabState, image_root: Path) -> None:
    """Write slurm.conf and one new MUNGE key into every machine's root and enable the daemons:
    munged everywhere, slurmctld in the controller, slurmd in the hosts."""
    assert state.controller is not None
    conf = render_conf(cluster)
    key = os.urandom(MUNGE_KEY_BYTES)
    munge = _ids(image_root, "munge")
    etc_hosts = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n" + "".join(
        f"{m.mgmt}\t{m.name}\n" for m in state.machines())
    for machine in state.machines():
        root = Path(machine.root)
        (root / CONF).write_text(conf)
        _write_key(root / MUNGE_KEY, key, munge)
        daemon = "slurmctld.service" if machine is state.controller else "slurmd.service"
        for unit in ("munge.service", daemon):
            link = root / WANTS / unit
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.is_symlink():
                link.symlink_to(f"/lib/systemd/system/{unit}")
    # srun on the controller tells the nodes where to answer by its host name: a name that
    # resolves to 127.0.1.1 there would send them to themselves.
    (Path(state.controller.root) / "etc/hosts").write_text(etc_hosts)


def _ids(image_root: Path, user: str) -> tuple[int, int]:
    """The uid and gid of ``user`` in the image (every machine's /etc/passwd is the image's)."""
    for line in (image_root / "etc/passwd").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == user:
            return int(fields[2]), int(fields[3])
    raise CannotRunError(f"the lab image has no {user} user", hint="remove the lab image to rebuild it")


def _write_key(path: Path, key: bytes, owner: tuple[int, int]) -> None:
    """The MUNGE key, created 0400 and handed to munge before a byte is written (never readable by others)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400)
    try:
        os.fchown(fd, *owner)
        os.write(fd, key)
    finally:
        os.close(fd)


def _controller_argv(state: LabState, argv: list[str]) -> list[str] | None:
    if state.controller is None or not machines.is_running(state.controller.pid):
        return None
    return machines.exec_argv(state.controller, argv)


def node_states(state: LabState, timeout: float = 10.0) -> dict[str, str] | None:
    """Each node's state as slurmctld has it (``idle``, ``drained (reason)``, ``down*``), read with
    sinfo on the controller; None when there is no controller or it does not answer."""
    argv = _controller_argv(state, ["sinfo", "--noheader", "--Node", "--format=%N|%T|%E"])
    if argv is None:
        return None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        return None
    return parse_sinfo(proc.stdout)


def parse_sinfo(text: str) -> dict[str, str]:
    """``sinfo -N -h -o %N|%T|%E`` lines (a node once per partition) as node -> state [(reason)]."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.strip().split("|", 2)
        if len(parts) < 2 or not parts[0]:
            continue
        reason = parts[2].strip() if len(parts) == 3 and parts[2].strip() not in ("", "none") else ""
        out[parts[0]] = parts[1] + (f" ({reason})" if reason else "")
    return out


def wait_ready(state: LabState, log_dir: Path, timeout: float = READY_TIMEOUT) -> None:
    """Wait until slurmctld knows every host as idle (at once when the lab runs no Slurm); name the
    ones that are not, with their state."""
    if state.controller is None:
        return
    expected = set(state.hosts)
    deadline = time.monotonic() + timeout
    seen: dict[str, str] | None = None
    while time.monotonic() < deadline:
        seen = node_states(state)
        if seen is not None and all(seen.get(name) == "idle" for name in expected):
            return
        time.sleep(0.5)
    assert state.controller is not None
    if seen is None:
        detail = f"slurmctld on {state.controller.name} does not answer sinfo"
    else:
        detail = ", ".join(f"{n} {seen.get(n, 'unknown to slurmctld')}" for n in sorted(expected)
                           if seen.get(n) != "idle")
    raise CannotRunError(f"Slurm not ready after {timeout:.0f} s: {detail}",
                         hint=f"see /var/log/slurm/ in the machines (racfg lab exec {state.controller.name} "
                              f"cat /var/log/slurm/slurmctld.log) and {log_dir}")
