"""Lab hosts: a systemd-nspawn machine per host, booted from an overlay of the shared image.

Each host gets its own overlay (lower: the cached image, upper: its own changes), so twenty
hosts cost one image on disk plus what each writes. nspawn boots real systemd and sshd inside
the host's network namespace (which already holds its management and data NICs), with
CAP_NET_ADMIN so roles can set MTU and addresses, the lab repository bound read-only, and the
storage drives bound in under their inventory names.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from racfg.errors import CannotRunError
from racfg_lab import repo
from racfg_lab.bootlog import boot_failure_cause
from racfg_lab.netns import kill_netns_processes, netns_pids
from racfg_lab.sh import ok, run
from racfg_lab.state import HostState, LabState

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_children: list[subprocess.Popen[bytes]] = []  # keep Popen objects alive: no ResourceWarning, reaped later


def host_dir(site_dir: Path, host: str) -> Path:
    return site_dir / "hosts" / host


def mount_root(image: Path, directory: Path) -> Path:
    """Mount the host's overlay root (idempotent) and return its mount point."""
    upper, work, root = directory / "upper", directory / "work", directory / "root"
    for d in (upper, work, root):
        d.mkdir(parents=True, exist_ok=True)
    if not os.path.ismount(root):
        run(["mount", "-t", "overlay", "overlay", "-o",
             f"lowerdir={image},upperdir={upper},workdir={work}", str(root)])
    return root


def mount_netns_sysfs(netns: str, directory: Path) -> Path:
    """A sysfs instance that belongs to the host's network namespace, for the machine's /sys/class/net.

    With --network-namespace-path, systemd-nspawn bind-mounts this machine's /sys, whose
    class/net lists the root namespace's interfaces; Ansible facts and `ls /sys/class/net` would
    then see the wrong NICs. A sysfs mounted from inside the host's netns shows its own
    interfaces; nspawn binds its net directories over the machine's (see nspawn_argv).
    """
    sys_dir = directory / "sys"
    sys_dir.mkdir(parents=True, exist_ok=True)
    if not os.path.ismount(sys_dir):
        run(["nsenter", f"--net=/run/netns/{netns}", "mount", "-t", "sysfs", "-o", "nosuid,nodev,noexec",
             "sysfs", str(sys_dir)])
    return sys_dir


def prepare_root(root: Path, name: str, authorized_key: str) -> str:
    """Give a fresh root its identity: hostname, machine id, SSH host key, root's key, apt source.

    Returns the host's public SSH host key line (for the lab's known_hosts).
    """
    (root / "etc/hostname").write_text(f"{name}\n")
    (root / "etc/hosts").write_text(f"127.0.0.1\tlocalhost\n127.0.1.1\t{name}\n::1\tlocalhost ip6-localhost\n")
    machine_id = root / "etc/machine-id"
    if not machine_id.read_text().strip():
        machine_id.write_text(uuid.uuid4().hex + "\n")
    ssh_dir = root / "root/.ssh"
    ssh_dir.mkdir(mode=0o700, exist_ok=True)
    keys = ssh_dir / "authorized_keys"
    keys.write_text(authorized_key.strip() + "\n")
    keys.chmod(0o600)
    host_key = root / "etc/ssh/ssh_host_ed25519_key"
    if not host_key.exists():
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"root@{name}", "-f", str(host_key)])
    sources = root / "etc/apt/sources.list.d/racfg-lab.list"
    sources.parent.mkdir(parents=True, exist_ok=True)
    sources.write_text(repo.SOURCES_LINE)
    return Path(f"{host_key}.pub").read_text().split(" (")[0].strip()


def write_ssh_client_files(state: LabState, host_keys: dict[str, str], ssh_dir: Path, switch_lines: list[str]) -> None:
    """known_hosts (machines' and switches' keys by management address) and an ssh_config naming every machine."""
    mgmt = {m.name: m.mgmt for m in state.machines()}
    hosts = [f"{mgmt[name]} {key}\n" for name, key in sorted(host_keys.items())]
    (ssh_dir / "known_hosts").write_text("".join(hosts + switch_lines))
    blocks = [
        f"Host {h.name}\n  HostName {h.mgmt}\n  User root\n  IdentityFile {ssh_dir / 'id_ed25519'}\n"
        f"  IdentitiesOnly yes\n  UserKnownHostsFile {ssh_dir / 'known_hosts'}\n  StrictHostKeyChecking yes\n"
        for h in state.machines()
    ]
    (ssh_dir / "config").write_text("\n".join(blocks))


def unmount_root(directory: Path) -> None:
    root = directory / "root"
    if os.path.ismount(root) and not ok(["umount", str(root)]):
        ok(["umount", "-l", str(root)])


def nspawn_argv(host: HostState, repo_dir: Path) -> list[str]:
    argv = [
        "systemd-nspawn", "--quiet", "--boot", "--register=no", "--keep-unit",
        "--capability=CAP_NET_ADMIN", f"--network-namespace-path=/run/netns/{host.netns}",
        "-D", host.root, f"--machine={host.netns}", f"--hostname={host.name}", "--console=passive",
        "--resolv-conf=off", "--timezone=off", "--link-journal=no",
        f"--bind-ro={repo_dir}:{repo.MOUNT_POINT}",
    ]
    sys_dir = Path(host.root).parent / "sys"
    if sys_dir.is_dir():
        argv += [f"--bind={sys_dir}/class/net:/sys/class/net",
                 f"--bind={sys_dir}/devices/virtual/net:/sys/devices/virtual/net"]
    for path, loop in sorted(host.drives.items()):
        argv.append(f"--bind={loop}:{path}")
    if Path("/dev/fuse").exists():  # FUSE mounts (sshfs: the array stand-in where the kernel has no NFS)
        argv.append("--bind=/dev/fuse")
    return argv


def start(host: HostState, repo_dir: Path, log_file: Path) -> int:
    """Boot the machine in the background; returns the systemd-nspawn pid."""
    if host.pid and is_running(host.pid):
        return host.pid
    # /proc/sys/net writable: the machine may tune its own network namespace's sysctls (as a
    # real host's tuning role does); the rest of /proc/sys stays read-only.
    env = {**os.environ, "SYSTEMD_NSPAWN_API_VFS_WRITABLE": "network"}
    with open(log_file, "ab") as log:
        proc = subprocess.Popen(nspawn_argv(host, repo_dir), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True, env=env)
    _children.append(proc)
    return proc.pid


def terminate(pid: int | None, expect: str, *, kill: bool = False, timeout: float = 10.0) -> None:
    """Stop a lab process (SIGTERM, or SIGKILL at once when ``kill``) and wait until it is gone;
    SIGKILL if it outlives ``timeout``. ``expect`` guards against a recycled pid (see is_running)."""
    if not pid or not is_running(pid, expect):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL if kill else signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while is_running(pid, expect) and time.monotonic() < deadline:
        time.sleep(0.05)
    if is_running(pid, expect):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        while is_running(pid, expect):
            time.sleep(0.05)


def is_running(pid: int | None, expect: str = "systemd-nspawn") -> bool:
    """True if ``pid`` is a live (not zombie) process whose command line mentions ``expect`` (or is
    momentarily empty, mid-exec)."""
    if not pid:
        return False
    for child in list(_children):
        if child.pid == pid and child.poll() is not None:
            _children.remove(child)
            return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False
    # While a process execs (ip netns exec -> python), its cmdline reads empty for a moment:
    # that is the process we started, not a stranger that reused its pid.
    return state not in ("Z", "X") and (not cmdline.strip() or expect in cmdline)


def init_pid(netns: str) -> int | None:
    """The machine's PID 1 as seen from the root namespace (the process whose NSpid ends in 1)."""
    for pid in netns_pids(netns):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            continue
        for line in status.splitlines():
            if line.startswith("NSpid:") and line.split()[-1] == "1" and len(line.split()) > 2:
                return pid
    return None


def exec_argv(host: HostState, argv: Sequence[str]) -> list[str]:
    """The root-namespace command line that runs ``argv`` inside the running machine, as root."""
    pid = init_pid(host.netns) if is_running(host.pid) else None
    if pid is None:
        raise CannotRunError(f"lab host {host.name} is not running", hint=f"`racfg lab start {host.name}`")
    return ["nsenter", "-t", str(pid), "-m", "-u", "-i", "-n", "-p", "--",
            "env", "-i", f"PATH={PATH}", "HOME=/root", "TERM=dumb", "LANG=C.UTF-8", *argv]


def stop(host: HostState, timeout: float = 10.0) -> None:
    """Power the machine off (nspawn turns SIGTERM into an orderly shutdown), then make sure."""
    if host.pid and is_running(host.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(host.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while host.pid and is_running(host.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if host.pid and is_running(host.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(host.pid, signal.SIGKILL)
    kill_netns_processes(host.netns)
    host.pid = None


def ssh_banner(address: str, port: int = 22, timeout: float = 1.0) -> bool:
    """True when an SSH server answers on address:port with its banner."""
    try:
        with socket.create_connection((address, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            return sock.recv(64).startswith(b"SSH-")
    except OSError:
        return False


def wait_ssh(hosts: list[HostState], timeout: float, log_dir: Path) -> None:
    """Wait until every host's sshd answers; name the ones that did not and why if we can."""
    pending = {h.name: h for h in hosts}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for name, host in list(pending.items()):
            if not is_running(host.pid):
                cause, fix = boot_failure_cause(_read_log(log_dir / f"{name}.log"))
                raise CannotRunError(f"lab host {name} stopped while booting: {cause}",
                                     hint=(f"{fix}; " if fix else "") + f"see {log_dir / (name + '.log')}")
            if ssh_banner(host.mgmt, timeout=0.5):
                del pending[name]
        if pending:
            time.sleep(0.3)
    if pending:
        raise CannotRunError(f"lab hosts not reachable by SSH after {timeout:.0f} s: {', '.join(sorted(pending))}",
                             hint=f"boot logs are in {log_dir}")


def _tail(path: Path, lines: int = 3) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:]) or "no output"
    except FileNotFoundError:
        return "no log"


def _read_log(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return "no log"
