"""``lab up``: build a site's lab step by step, idempotently, and undo it all if a step fails.

Steps, in order (a failure names the step): image, repository, SSH key, management network,
switches, hosts (and the Slurm controller), cables, drives, boot, switch CLI (and each switch's lldpd),
SSH, Slurm (every node idle, when the inventory declares a scheduler). The state file
is saved after each step so that a crash at any point can still be torn down. Running ``up`` on a lab that is
already up from the same inventory changes nothing (it only restarts a stopped machine or
switch CLI, e.g. after ``lab stop``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from racfg.errors import CannotRunError, RacfgError, UsageError
from racfg.inventory.cluster import Cluster
from racfg.inventory.loader import load_cluster
from racfg.lock.local import site_lock
from racfg.paths import lab_root, private_dir
from racfg_lab import (
    drives,
    fabric,
    httpserver,
    image,
    limits,
    lldpd,
    machines,
    mlnxofed,
    names,
    prereq,
    repo,
    routed,
    slurm,
    switches,
    timeserver,
)
from racfg_lab.netns import create_netns
from racfg_lab.sh import log, run
from racfg_lab.state import (
    CableState,
    HostState,
    LabState,
    SwitchState,
    load_state,
    no_lab_running,
    save_state,
    site_dir,
)
from racfg_lab.teardown import teardown_site

SSH_TIMEOUT = 120.0
Progress = Callable[[str], None]


@dataclass
class UpResult:
    site: str
    changed: bool
    timings: dict[str, float] = field(default_factory=dict)
    state: LabState | None = None


def _inventory_hash(path: Path, scale: int) -> str:
    return hashlib.sha256(path.read_bytes() + f"\nscale={scale}".encode()).hexdigest()[:16]


def _check_labbable(cluster: Cluster) -> None:
    """What the lab cannot build is a usage error, said before anything is made."""
    problems = []
    seen: set[str] = set()
    for node in [h.name for h in cluster.hosts] + list(cluster.switches):
        if node in seen:
            problems.append(f"node name {node} is used twice")
        seen.add(node)
    for host in cluster.hosts:
        for nic in host.nics:
            if nic.switch not in cluster.switches:
                problems.append(f"{host.name} {nic.name}: unknown switch {nic.switch}")
            elif nic.port is None:
                problems.append(f"{host.name} {nic.name}: {nic.port_error}")
            if len(nic.name) > 15:
                problems.append(f"{host.name} {nic.name}: interface names are at most 15 characters")
    if not cluster.hosts:
        problems.append("the inventory has no hosts")
    if (served := mlnxofed.source_problem(cluster)) is not None:
        problems.append(served)
    problems += slurm.lab_problems(cluster)
    if problems:
        raise UsageError(f"{cluster.display}: cannot build a lab: " + "; ".join(problems),
                         hint="`racfg check` shows the inventory's problems with line numbers")


def ssh_key_path(site: str) -> Path:
    return site_dir(site) / "ssh" / "id_ed25519"


def _ensure_ssh_key(site: str) -> str:
    key = ssh_key_path(site)
    private_dir(key.parent)  # 0700 (tightened if older); ssh-keygen writes the private key 0600
    if not key.exists():
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"racfg-lab-{site}", "-f", str(key)])
    return Path(f"{key}.pub").read_text()


def up(path: str | Path, *, scale_mbit_per_100g: int | None = None, progress: Progress | None = None) -> UpResult:
    """Build (or confirm) the lab of the inventory at ``path``; ``scale_mbit_per_100g`` None: the one that
    fits the site (``fabric.fitting_scale``)."""
    say = progress or (lambda text: log.info("%s", text))
    prereq.require()
    if scale_mbit_per_100g is not None and scale_mbit_per_100g < 1:
        raise UsageError("--scale must be at least 1 Mbit/s per 100G")
    cluster = load_cluster(path)
    _check_labbable(cluster)
    if scale_mbit_per_100g is None:
        scale_mbit_per_100g = fabric.fitting_scale(cluster)
        if scale_mbit_per_100g < fabric.DEFAULT_SCALE_MBIT_PER_100G:
            say(f"line rate {scale_mbit_per_100g} Mbit/s per 100G: smoke loads up to "
                f"{fabric.smoke_load_100g(cluster):g} x 100G at once, which at "
                f"{fabric.DEFAULT_SCALE_MBIT_PER_100G} would need more than the lab carries "
                f"({fabric.LAB_CARRIES_MBIT} Mbit/s)")
    site = cluster.name
    inv_hash = _inventory_hash(Path(path), scale_mbit_per_100g)
    with site_lock(lab_root(), site, "lab"):
        existing = load_state(site)
        if existing is not None and existing.complete:
            if existing.inventory_hash != inv_hash:
                raise UsageError(
                    f"a lab of site {site} is already up from a different inventory or scale ({existing.inventory})",
                    hint=f"run `racfg lab down {existing.inventory}` first",
                )
            return _converge(existing, cluster, say)
        if existing is not None or site_dir(site).exists():
            say(f"removing the remains of an earlier lab of site {site}")
            teardown_site(site)
        # Before anything is made: a pod-size lab must not die at its 27th host on a stock machine.
        limits.ensure(len(cluster.hosts), len(cluster.switches), lab_root(), say)
        return _build(cluster, Path(path), inv_hash, scale_mbit_per_100g, say)


def _converge(state: LabState, cluster: Cluster, say: Progress) -> UpResult:
    """A lab already up: restart what was stopped, change nothing else."""
    changed = False
    directory = site_dir(state.site)
    for host in state.machines():
        if not machines.is_running(host.pid):
            say(f"starting stopped host {host.name}")
            host.pid = machines.start(host, Path(state.repo), directory / "logs" / f"{host.name}.log")
            changed = True
    pids = switches.start_clis(list(state.switches.values()))
    for sw in state.switches.values():
        if pids.get(sw.name) != sw.pid:
            sw.pid = pids.get(sw.name)
            changed = changed or sw.pid is not None
        if not lldpd.is_up(sw) and lldpd.start(sw, switches.switch_dir(directory, sw.name)) is not None:
            changed = True
        if routed.routes(cluster) and routed.start_routing_if_stopped(sw, switches.switch_dir(directory, sw.name)):
            changed = True
    _start_services(directory, cluster, say)
    if changed:
        save_state(state)
        machines.wait_ssh(state.machines(), SSH_TIMEOUT, directory / "logs")
        switches.wait_cli([s for s in state.switches.values() if s.pid], 30, directory)
    say(f"lab {state.site} is up" + ("" if changed else " (nothing changed)"))
    return UpResult(state.site, changed, {}, state)


def _start_services(directory: Path, cluster: Cluster, say: Progress) -> None:
    """The servers the lab runs for its hosts on the management gateway (idempotent): the time
    server always, the HTTP server when the inventory's MLNX_OFED URL names the gateway."""
    gateway = str(fabric.mgmt_gateway(cluster).ip)
    if timeserver.SERVICE.running_pid(directory) is None:
        say("starting the lab's time server")
        timeserver.start(directory, gateway)
    served = mlnxofed.lab_source(cluster)
    if served is not None:
        mlnxofed.publish(httpserver.root(directory), served)
        if httpserver.SERVICE.running_pid(directory) is None:
            say(f"serving a stand-in MLNX_OFED {served.release} at {served.url}")
            httpserver.start(directory, served.address, served.port)


@dataclass
class _Build:
    """What the steps of one ``lab up`` share: the inventory, and what the steps before made."""

    cluster: Cluster
    path: Path
    inv_hash: str
    scale: int
    say: Progress
    directory: Path
    state: LabState | None = None
    image_root: Path | None = None
    repo_dir: Path | None = None
    prefixlen: int = 24
    pubkey: str = ""
    ports: dict[str, dict[str, dict]] = field(default_factory=dict)  # switch -> port -> the cable's facts


def _step_image(b: _Build) -> None:
    b.say("image: " + ("cached" if image.is_built() else "building with debootstrap (about a minute)"))
    b.image_root, _ = image.ensure_image()


def _step_repository(b: _Build) -> None:
    assert b.image_root is not None
    b.repo_dir, built = repo.ensure_repo(b.image_root)
    b.say("package repository: " + ("cached" if built is None else f"staged in {built:.0f} s"))


def _step_management(b: _Build) -> None:
    site = b.cluster.name
    b.directory.mkdir(parents=True, exist_ok=True)
    (b.directory / "logs").mkdir(exist_ok=True)
    b.pubkey = _ensure_ssh_key(site)
    gateway = fabric.mgmt_gateway(b.cluster)
    b.state = LabState(
        site=site, inventory=str(b.path), inventory_hash=b.inv_hash, mgmt_bridge=names.mgmt_bridge(site),
        mgmt_gateway=str(gateway), fabric=b.cluster.fabric.type, scale_mbit_per_100g=b.scale,
        image=str(b.image_root), repo=str(b.repo_dir), started=time.strftime("%Y-%m-%d %H:%M:%S"),
    )
    save_state(b.state)
    fabric.setup_mgmt_bridge(site, gateway)
    _start_services(b.directory, b.cluster, b.say)
    b.prefixlen = gateway.network.prefixlen


def _step_switches(b: _Build) -> None:
    assert b.state is not None
    shares = switches.password_sources(b.cluster)
    for sw in b.cluster.switches.values():
        ns = names.netns(b.cluster.name, sw.name)
        b.state.switches[sw.name] = SwitchState(
            sw.name, sw.platform, ns, sw.spec.mgmt, str(switches.switch_dir(b.directory, sw.name) / "cli.json"))
        save_state(b.state)
        fabric.setup_switch_netns(ns)
        fabric.attach_mgmt(b.cluster.name, sw.name, ns, sw.spec.mgmt, b.prefixlen)
        same_as = shares.get(sw.name)
        switches.ensure_password(switches.switch_dir(b.directory, sw.name),
                                 switches.password_path(switches.switch_dir(b.directory, same_as)) if same_as else None)


def _step_hosts(b: _Build) -> None:
    assert b.state is not None and b.image_root is not None
    host_keys: dict[str, str] = {}
    for host in b.cluster.hosts:
        ns = names.netns(b.cluster.name, host.name)
        hdir = machines.host_dir(b.directory, host.name)
        b.state.hosts[host.name] = HostState(host.name, host.role, ns, str(host.mgmt), str(hdir / "root"),
                                             nics=[n.name for n in host.nics])
        save_state(b.state)
        create_netns(ns)
        fabric.attach_mgmt(b.cluster.name, host.name, ns, str(host.mgmt), b.prefixlen)
        root = machines.mount_root(b.image_root, hdir)
        machines.mount_netns_sysfs(ns, hdir)
        host_keys[host.name] = machines.prepare_root(root, host.name, b.pubkey)
    host_keys.update(slurm.add_to_lab(b.cluster, b.state, b.directory, b.image_root, b.pubkey, b.prefixlen))
    machines.write_ssh_client_files(b.state, host_keys, ssh_key_path(b.state.site).parent,
                                    switches.known_hosts_lines(b.state))


def _step_cables(b: _Build) -> None:
    assert b.state is not None
    b.ports = {name: {} for name in b.cluster.switches}
    buffers = {name: fabric.port_buffer_bytes(sw.spec.model) for name, sw in b.cluster.switches.items()}
    for host in b.cluster.hosts:
        for nic in host.nics:
            assert nic.port is not None and nic.port_index is not None
            sw_state = b.state.switches[nic.switch]
            ifname = names.switch_port_ifname(nic.port_index, nic.lane)
            rate = fabric.lab_rate_mbit(nic.speed_gbps, b.scale)
            mac = fabric.add_cable(b.state.hosts[host.name].netns, nic.name, sw_state.netns, ifname, rate,
                                   buffers[nic.switch])
            b.state.cables.append(CableState(host.name, nic.name, nic.switch, nic.port, ifname, nic.speed_gbps, rate))
            b.ports[nic.switch][nic.port] = {
                "ifname": ifname, "speed_gbps": nic.speed_gbps, "lab_rate_mbit": rate,
                "peer_host": host.name, "peer_nic": nic.name, "peer_mac": mac,
            }
    routed.cable_isls(b.cluster, b.state.switches, b.ports, b.scale)
    save_state(b.state)


def _step_drives(b: _Build) -> None:
    assert b.state is not None
    count = sum(len(host.drives) for host in b.cluster.hosts)  # the lab's drives share one read budget
    for host in b.cluster.hosts:
        for drive in host.drives:
            backing = drives.drive_file(b.directory, host.name, drive.path)
            b.state.hosts[host.name].drives[drive.path] = drives.attach(backing, drives.size_bytes(drive.size), count)
            save_state(b.state)
    if count and not drives.can_shape():
        b.say(drives.UNSHAPED)


def _step_boot(b: _Build) -> None:
    assert b.state is not None and b.repo_dir is not None
    b.say(f"booting {len(b.state.hosts)} hosts" + (" and the Slurm controller" if b.state.controller else ""))
    for hs in b.state.machines():
        hs.pid = machines.start(hs, b.repo_dir, b.directory / "logs" / f"{hs.name}.log")
        save_state(b.state)


def _step_switch_cli(b: _Build) -> None:
    assert b.state is not None
    for sw in b.cluster.switches.values():
        sws = b.state.switches[sw.name]
        sdir = switches.switch_dir(b.directory, sw.name)
        switches.write_cli_config(sdir, {
            "name": sw.name, "platform": sw.platform, "model": sw.model.name, "ports_count": sw.model.ports,
            "ports_per_slot": sw.model.ports_per_slot,
            "listen": sw.spec.mgmt, "ssh_port": 22, "username": sw.spec.credentials.username,
            "password_file": str(switches.password_path(sdir)), "state_dir": str(sdir), "netns": sws.netns,
            "ports": b.ports[sw.name], "os_version": sw.spec.os_version,
            **routed.start_switch_routing(b.cluster, sws, sdir),
        })
    pids = switches.start_clis([b.state.switches[name] for name in b.cluster.switches])
    for name, sws in b.state.switches.items():
        sws.pid = pids.get(name)
        sdir = switches.switch_dir(b.directory, name)
        lldpd.write_config(sws, sdir, {port: p["ifname"] for port, p in b.ports[name].items()})
        lldpd.start(sws, sdir)
        save_state(b.state)
    if not switches.cli_available() and b.cluster.switches:
        b.say("switch CLI not installed yet: switches have a data plane but no management CLI")


def _step_ssh(b: _Build) -> None:
    assert b.state is not None
    machines.wait_ssh(b.state.machines(), SSH_TIMEOUT, b.directory / "logs")
    switches.wait_cli([s for s in b.state.switches.values() if s.pid], 30, b.directory)


def _step_slurm(b: _Build) -> None:
    assert b.state is not None
    slurm.wait_ready(b.state, b.directory / "logs")  # at once when the inventory declares no scheduler


# The steps of ``lab up``, in order; a failure names its step and tears down what was made.
BUILD_STEPS: list[tuple[str, Callable[[_Build], None]]] = [
    ("image", _step_image), ("repository", _step_repository), ("management network", _step_management),
    ("switches", _step_switches), ("hosts", _step_hosts), ("cables", _step_cables), ("drives", _step_drives),
    ("boot", _step_boot), ("switch CLI", _step_switch_cli), ("SSH", _step_ssh), ("Slurm", _step_slurm),
]


def _build(cluster: Cluster, path: Path, inv_hash: str, scale: int, say: Progress) -> UpResult:
    site = cluster.name
    build = _Build(cluster, path, inv_hash, scale, say, site_dir(site))
    timings: dict[str, float] = {}
    step = "start"
    started = time.monotonic()
    try:
        for step, run in BUILD_STEPS:
            begun = time.monotonic()
            run(build)
            timings[step] = round(time.monotonic() - begun, 2)
        assert build.state is not None
        build.state.complete = True
        save_state(build.state)
    except (Exception, KeyboardInterrupt) as exc:
        say(f"lab up failed at step '{step}': tearing down what was made")
        try:
            teardown_site(site)
        except Exception as cleanup:  # report the original failure, but say cleanup had trouble
            log.error("teardown after failure also failed: %s", cleanup)
        if isinstance(exc, KeyboardInterrupt):
            raise
        detail = exc.message if isinstance(exc, RacfgError) else f"{type(exc).__name__}: {exc}"
        hint = exc.hint if isinstance(exc, RacfgError) else None
        raise CannotRunError(f"lab up failed at step '{step}': {detail}", hint=hint) from exc
    state = build.state
    timings["total"] = round(time.monotonic() - started, 2)
    say(f"lab {site} is up: {len(state.hosts)} hosts, {len(state.switches)} switches, "
        f"{len(state.cables)} cables in {timings['total']:.1f} s")
    return UpResult(site, True, timings, state)


def down(path: str | Path | None = None, *, site: str | None = None) -> list[str]:
    """Remove the lab of an inventory (or of a site name, for when the inventory is gone)."""
    prereq.require()
    if site is None:
        if path is None:
            raise UsageError("give an inventory file or a site")
        site = load_cluster(path).name
    with site_lock(lab_root(), site, "lab"):
        removed = teardown_site(site)
    return removed + restore_limits()


def restore_limits() -> list[str]:
    """Once the last lab is down, put back the sysctls ``lab up`` raised (notes of what was)."""
    notes = limits.restore(lab_root(), lambda: no_lab_running(lab_root()))
    for note in notes:
        log.warning("%s", note)
    return notes

