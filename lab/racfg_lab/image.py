"""The lab's root file system: a minimal Debian bookworm built once with debootstrap, cached.

Every lab host boots from an overlay of this one directory, so building it is the slow step
(about a minute) and is done once per machine. The cache key is a hash of everything that
shapes the image (suite, mirror, package list, recipe version): change the package list and
the next ``lab up`` builds a new image; otherwise it is reused as is.

Only what DESIGN.md lists goes into the image. The packages the roles install (rdma-core,
perftest, nvme-cli ...) are deliberately left out, so that a deploy onto the lab really
installs them from the lab's offline repository (see repo.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from racfg.paths import lab_root
from racfg_lab.sh import log, run

SUITE = "bookworm"
MIRROR = os.environ.get("RACFG_LAB_MIRROR", "http://deb.debian.org/debian")
# A server OS install's base, not what racfg manages (the roles install that from the lab
# repository). udev and perl are in every DGX OS and Debian server install; a minbase tree lacks
# them, so without them each host's first deploy would also install them (rdma-core needs udev,
# whose hwdb build is the slowest step; lldpd's SNMP library needs perl's): about 6 of its 8
# CPU-seconds of package installs per host, on a machine whose two CPUs the whole lab shares.
# The scheduler is the site's too: racfg never installs Slurm (it drains and resumes nodes of the
# Slurm a site runs), so the image carries Debian's Slurm and MUNGE, left disabled; a lab whose
# inventory declares a scheduler enables them per machine (see slurm.py), other labs never run them.
SLURM_PACKAGES = ("munge", "slurmd", "slurmctld", "slurm-client")
SLURM_UNITS = ("munge.service", "slurmd.service", "slurmctld.service")
PACKAGES = (
    "systemd", "systemd-sysv", "dbus", "openssh-server", "python3", "iproute2", "iputils-ping",
    "iperf3", "fio", "ethtool", "chrony", "kmod", "procps", "udev", "perl", *SLURM_PACKAGES,
)
# Bump when the customisation below changes, so cached images are rebuilt.
RECIPE_VERSION = 4

# Units a lab host does not need: they cost memory and boot time on a 2-core machine.
MASKED_UNITS = (
    "console-getty.service", "getty@tty1.service", "systemd-logind.service",
    "apt-daily.timer", "apt-daily-upgrade.timer", "e2scrub_all.timer", "fstrim.timer",
    "systemd-tmpfiles-clean.timer", "dpkg-db-backup.timer", "iperf3.service",
    "systemd-networkd-wait-online.service", "systemd-journald-audit.socket",
)

SSHD_DROPIN = """\
# racfg lab: root logs in by key only; one host key generated per lab host at `lab up`.
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
"""

JOURNALD_DROPIN = """\
# racfg lab: keep the journal small and in memory.
[Journal]
Storage=volatile
RuntimeMaxUse=8M
"""


def image_key() -> str:
    recipe = {"suite": SUITE, "mirror": MIRROR, "packages": sorted(PACKAGES), "recipe": RECIPE_VERSION,
              "masked": sorted(MASKED_UNITS), "sshd": SSHD_DROPIN, "journald": JOURNALD_DROPIN}
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]


def images_dir() -> Path:
    return lab_root() / "images"


def image_path() -> Path:
    """The root directory of the current image (it may not be built yet)."""
    return images_dir() / f"bookworm-{image_key()}" / "rootfs"


def is_built() -> bool:
    return (image_path().parent / "complete").exists()


@contextmanager
def build_lock(directory: Path, name: str) -> Iterator[None]:
    """Block while another racfg (another site's `lab up`, a test run) builds the same shared cache."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / f".{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def ensure_image() -> tuple[Path, float | None]:
    """Return the image root, building it first if it is not cached. Second value: build seconds or None."""
    if is_built():
        return image_path(), None
    with build_lock(images_dir(), "build"):
        if is_built():
            return image_path(), None
        return _build()


def _build() -> tuple[Path, float]:
    started = time.monotonic()
    target = image_path().parent
    tmp = target.with_name(target.name + ".building")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    root = tmp / "rootfs"
    log.info("building the lab image with debootstrap (once per machine, about a minute)")
    run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(root), MIRROR],
        timeout=900)
    _customise(root)
    (tmp / "complete").write_text(json.dumps({"key": image_key(), "packages": sorted(PACKAGES),
                                              "built": time.strftime("%Y-%m-%d %H:%M:%S")}) + "\n")
    if target.exists():
        shutil.rmtree(target)
    tmp.rename(target)
    _prune_old_images(keep=target)
    return image_path(), time.monotonic() - started


def _customise(root: Path) -> None:
    """Make the debootstrapped tree a lab host template: air-gapped apt, keyless sshd, lean boot."""
    (root / "etc/apt/sources.list").write_text("# racfg lab: no internet; see sources.list.d/racfg-lab.list\n")
    for lists in (root / "var/lib/apt/lists").glob("*_*"):
        lists.unlink()
    for cached in (root / "var/cache/apt/archives").glob("*.deb"):
        cached.unlink()
    for key in (root / "etc/ssh").glob("ssh_host_*"):
        key.unlink()
    (root / "etc/ssh/sshd_config.d").mkdir(exist_ok=True)
    (root / "etc/ssh/sshd_config.d/racfg-lab.conf").write_text(SSHD_DROPIN)
    (root / "etc/systemd/journald.conf.d").mkdir(parents=True, exist_ok=True)
    (root / "etc/systemd/journald.conf.d/racfg-lab.conf").write_text(JOURNALD_DROPIN)
    for unit in MASKED_UNITS:
        link = root / "etc/systemd/system" / unit
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to("/dev/null")
    # Slurm and MUNGE run only where a lab enables them; each lab makes its own MUNGE key.
    for unit in SLURM_UNITS:
        (root / "etc/systemd/system/multi-user.target.wants" / unit).unlink(missing_ok=True)
    (root / "etc/munge/munge.key").unlink(missing_ok=True)
    # Each host gets its own machine id at first boot (the overlay upper keeps it).
    (root / "etc/machine-id").write_text("")
    dbus_id = root / "var/lib/dbus/machine-id"
    if dbus_id.is_symlink() or dbus_id.exists():
        dbus_id.unlink()
    (root / "root/.ssh").mkdir(mode=0o700, exist_ok=True)


def _prune_old_images(keep: Path) -> None:
    """Drop images of older recipes (~300 MB each) that no running lab has as its overlay lower dir."""
    mounts = Path("/proc/self/mounts").read_text()
    for entry in images_dir().iterdir():
        if f"lowerdir={entry}/" in mounts:
            continue  # a running lab boots from it: keep until that lab is down
        if entry != keep and entry.name.startswith("bookworm-") and not entry.name.endswith(".building"):
            log.info("removing old lab image %s", entry)
            shutil.rmtree(entry, ignore_errors=True)
