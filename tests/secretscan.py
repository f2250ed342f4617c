"""Every secret a lab test used, looked for in every file racfg, ansible-runner and the lab wrote and in
every process's argv (issue 51: no secret on disk or in argv).

The secrets of a lab: each switch's password (the lab's password files), each line of the body of the
lab's SSH private key, and the value of every ``password_env`` variable the test exported for racfg
(sitelab.DeployedSite exports the lab's password into the variable an inventory names, as an operator
does). Where they are looked for:

- every file under the run's state directory (records: ansible-runner's ``command`` and ``env/``
  dumps, events, stdout, Ansible's local temp; results JSON, JUnit, CSV, Markdown, HTML; the rendered
  inventory; baselines; locks; caches) and under any report directory the test wrote, every one of
  which must also be 0600 in directories of 0700 (the state directory's, at least);
- every file of the lab's site directory (switch configs and logs, FRR's and lldpd's files, each
  host's own changes: the overlay's upper layer) except the secret files themselves; mounts (a host's
  merged root, its /sys) are not entered, and no symlink is followed;
- ``ArgvSampler``: every process's ``/proc/PID/cmdline``, read over and over while a command runs
  (ansible-playbook and its workers, ssh, the modules on the controller and, through the lab's
  namespaces, on the hosts, the lab's switch CLIs and daemons).

The lab modules that ran deploy, validate, drift and smoke end with a test that calls ``assert_clean``.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from labsupport import LabHandle

from racfg_lab import switches
from racfg_lab.state import site_dir

SAMPLE_INTERVAL_S = 0.1
CHUNK = 16 << 20


@dataclass(frozen=True)
class Secret:
    what: str  # "switch sw1 password", "SSH private key line 3", "$RACFG_X_PASSWORD"
    value: bytes


def lab_secrets(lab: LabHandle, env: Mapping[str, str] | None = None) -> list[Secret]:
    """The secrets of ``lab`` and those of ``env`` (the environment racfg ran in) the inventory names."""
    env = os.environ if env is None else env
    found = [Secret(f"switch {name} password", password.encode())
             for name, password in sorted(lab.overrides.switch_passwords.items())]
    body = [line.strip() for line in lab.ssh_key.read_text().splitlines()
            if line.strip() and not line.startswith("-----")]
    # the body's first line is the format's header ("openssh-key-v1", no cipher, key type), the same in
    # every OpenSSH ed25519 key (each host key of the lab's machines begins with it): not this key's
    found += [Secret(f"SSH private key line {n}", line.encode()) for n, line in enumerate(body, 1)
              if n > 1 and len(line) >= 16]
    variables = {s.spec.credentials.password_env for s in lab.cluster.switches.values()} - {None}
    found += [Secret(f"${var}", env[var].encode()) for var in sorted(variables) if env.get(var)]
    assert all(len(s.value) >= 16 for s in found), "a secret this short could match by chance"
    return found


def secret_files(lab: LabHandle) -> set[Path]:
    """The lab's own secret files: the only files allowed to hold its secrets."""
    directory = site_dir(lab.site)
    return {switches.password_path(switches.switch_dir(directory, name)) for name in lab.cluster.switches} | {
        lab.ssh_key}


def _files(root: Path) -> Iterator[Path]:
    """Every regular file under ``root``: no symlink followed, no mount entered."""
    for current, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not os.path.ismount(os.path.join(current, d))]
        for name in files:
            path = Path(current, name)
            if stat.S_ISREG(path.lstat().st_mode):
                yield path


@dataclass
class Scan:
    """What one look found: '<file>: <secret>' findings, loose modes, and how much was read (sparse
    files' holes not counted)."""

    findings: list[str] = field(default_factory=list)
    loose: list[str] = field(default_factory=list)
    files: int = 0
    bytes: int = 0

    def look(self, root: Path, secrets: list[Secret], skip: set[Path]) -> None:
        for path in _files(root):
            if path in skip:
                continue
            try:
                found = self._holding(path, [s.value for s in secrets])
            except OSError:
                continue  # gone meanwhile (a lab daemon's temporary file)
            self.files += 1
            self.findings += [f"{path}: {secrets[i].what}" for i in sorted(found)]

    def _holding(self, path: Path, needles: list[bytes]) -> set[int]:
        """Which of ``needles`` the file holds, read in chunks (the lab's drive images are gigabytes)
        that overlap by a needle's length, skipping a sparse file's holes (zeros hold no secret)."""
        overlap = max(len(n) for n in needles) - 1
        found: set[int] = set()
        with path.open("rb") as handle:
            fd, position, tail = handle.fileno(), 0, b""
            size = os.fstat(fd).st_size
            while position < size:
                try:
                    start = os.lseek(fd, position, os.SEEK_DATA)
                except OSError:  # nothing but a hole after ``position``
                    break
                end = os.lseek(fd, start, os.SEEK_HOLE)
                tail = tail if start == position else b""
                for offset in range(start, end, CHUNK):
                    window = tail + os.pread(fd, min(CHUNK, end - offset), offset)
                    self.bytes += len(window) - len(tail)
                    found.update(i for i, needle in enumerate(needles) if needle in window)
                    tail = window[-overlap:]
                position = end
        return found

    def modes(self, root: Path) -> None:
        """Every directory under ``root`` (itself included) 0700 and every file 0600 or stricter."""
        for current, _dirs, files in os.walk(root):
            for path in [Path(current), *(Path(current, f) for f in files)]:
                info = path.lstat()
                if not stat.S_ISLNK(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o077:
                    self.loose.append(f"{path}: {stat.S_IMODE(info.st_mode):o}")


class ArgvSampler:
    """Reads every process's argv (``/proc/*/cmdline``) every ``SAMPLE_INTERVAL_S`` while its block
    runs; ``findings`` are the processes whose argv held a secret, ``seen`` the programs it saw (so a
    test can tell that it sampled the run it meant: ansible-playbook was among them)."""

    def __init__(self, secrets: list[Secret]) -> None:
        self.secrets = secrets
        self.findings: set[str] = set()
        self.seen: set[str] = set()
        self.samples = 0
        self._stop = threading.Event()

    def sample(self) -> None:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue  # ended meanwhile
            words = [w for w in argv.split(b"\0")[:2] if w]
            self.seen.update(os.path.basename(w.decode(errors="replace")) for w in words)
            self.findings.update(f"pid {entry} {words[0].decode(errors='replace')}: {s.what}"
                                 for s in self.secrets if s.value in argv)
        self.samples += 1

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(SAMPLE_INTERVAL_S)

    @contextmanager
    def running(self) -> Iterator[ArgvSampler]:
        thread = threading.Thread(target=self._loop, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()


def assert_clean(lab: LabHandle, env: Mapping[str, str] | None, state_dirs: Iterable[Path],
                 other_dirs: Iterable[Path] = (), argv: ArgvSampler | None = None) -> Scan:
    """No secret of ``lab`` in any file of ``state_dirs`` (each private, every file in it 0600), of
    ``other_dirs`` (reports written elsewhere) or of the lab's site directory, nor in any argv
    ``argv`` sampled (when given: it must have seen ansible-playbook). Returns the scan (its figures)."""
    started = time.monotonic()
    secrets = lab_secrets(lab, env)
    scan = Scan()
    skip = secret_files(lab)
    state_dirs = list(state_dirs)
    for root in [*state_dirs, *other_dirs, site_dir(lab.site)]:
        assert root.is_dir(), f"{root} is not there to be searched"
        scan.look(root, secrets, skip)
    for root in state_dirs:
        scan.modes(root)
    assert scan.files > 0 and not scan.findings, "secrets found:\n" + "\n".join(scan.findings[:50])
    assert not scan.loose, "readable by others:\n" + "\n".join(scan.loose[:50])
    if argv is not None:
        assert argv.samples > 0 and "ansible-playbook" in argv.seen, (argv.samples, sorted(argv.seen)[:80])
        assert not argv.findings, "secrets in argv:\n" + "\n".join(sorted(argv.findings))
    print(f"secret scan of {lab.site}: {len(secrets)} secrets, {scan.files} files, {scan.bytes / 1e6:.1f} MB, "
          f"0 found; argv samples {argv.samples if argv else 0}, 0 found; {time.monotonic() - started:.1f} s")
    return scan
