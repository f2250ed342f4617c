"""The lab's offline package repository: what the roles install, staged once per machine.

Lab hosts have no route out, as on an air-gapped site. So that roles really install packages
(and a deploy is not a no-op on a pre-baked image), the lab downloads the roles' packages and
every dependency the image lacks, indexes them as a flat apt repository under
``lab_root()/repo``, and bind-mounts it read-only into each host at ``/srv/racfg-repo`` with
``deb [trusted=yes] file:/srv/racfg-repo ./`` as the host's only apt source.

Dependencies are resolved by this machine's apt (Debian bookworm, like the image) against the
*image's* dpkg status, so exactly the packages missing from the image are fetched.

Each package list (and image) gets its own directory, ``lab_root()/repos/<key>``: a lab that is
up keeps its repository bind-mounted, so a new list (a role that installs one more package)
must not replace the directory under another site's running hosts. Repositories no lab uses
any more are removed when a new one is staged.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import time
from pathlib import Path

from racfg.paths import lab_root
from racfg_lab.image import build_lock
from racfg_lab.sh import log, run
from racfg_lab.state import known_sites, load_state

# What the roles install (OFED inbox flavour, perf tools, NVMe, time). iperf3, fio and chrony
# are in the image already (DESIGN.md's list); the rest must come from here.
PACKAGES = ("rdma-core", "ibverbs-utils", "infiniband-diags", "perftest", "nvme-cli", "fio", "iperf3", "chrony",
            "lldpd", "sshfs")
# Real older versions kept beside the current ones, so an operator's downgrade (``apt-get install
# pkg=<older>``) can be made in the lab as on a site with an apt mirror. Each is a version this machine's
# apt still lists (the bookworm release, superseded by bookworm-security): libevent-2.1-7 is installed with
# lldpd, which the common role installs.
OLDER_VERSIONS = {"libevent-2.1-7": "2.1.12-stable-8"}
MOUNT_POINT = "/srv/racfg-repo"
SOURCES_LINE = f"deb [trusted=yes] file:{MOUNT_POINT} ./\n"
RECIPE_VERSION = 2


def repos_dir() -> Path:
    return lab_root() / "repos"


def repo_dir(key: str) -> Path:
    return repos_dir() / key


def _key(image_root: Path) -> str:
    status = (image_root / "var/lib/dpkg/status").read_bytes()
    recipe = {"packages": sorted(PACKAGES), "older": OLDER_VERSIONS, "recipe": RECIPE_VERSION,
              "status": hashlib.sha256(status).hexdigest()}
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]


def ensure_repo(image_root: Path) -> tuple[Path, float | None]:
    """Stage the repository for this image unless it is cached. Returns (dir, seconds or None)."""
    key = _key(image_root)
    target = repo_dir(key)
    stamp = target / "racfg-repo.json"
    if stamp.exists():
        return target, None
    with build_lock(lab_root(), "repo"):
        if stamp.exists():
            return target, None
        staged = _stage(target, key, image_root)
        _prune_unused(keep=target)
        return staged


def _prune_unused(keep: Path) -> None:
    """Remove repositories (and the pre-keyed ``lab_root()/repo``) that no lab's state names."""
    in_use = {keep}
    for site in known_sites():
        state = load_state(site)
        if state is not None:
            in_use.add(Path(state.repo))
    candidates = [lab_root() / "repo", *(repos_dir().iterdir() if repos_dir().is_dir() else [])]
    for path in candidates:
        if path.is_dir() and path not in in_use and not path.name.endswith(".staging"):
            log.info("removing unused lab package repository %s", path)
            shutil.rmtree(path, ignore_errors=True)


def _stage(target: Path, key: str, image_root: Path) -> tuple[Path, float]:
    started = time.monotonic()
    tmp = target.with_name(target.name + ".staging")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "partial").mkdir(parents=True)
    log.info("staging the lab's offline package repository (once per machine)")
    apt_opts = [
        "-o", f"Dir::State::status={image_root / 'var/lib/dpkg/status'}",
        "-o", f"Dir::Cache::archives={tmp}",
        "-o", "Debug::NoLocking=1",
        "-o", "APT::Get::Download-Only=1",
    ]
    proc = run(["apt-get", "install", "-y", "-q", *apt_opts, *PACKAGES], check=False, timeout=600)
    if proc.returncode != 0 and "Unable to locate package" in (proc.stderr + proc.stdout):
        run(["apt-get", "update", "-q"], timeout=300)
        proc = run(["apt-get", "install", "-y", "-q", *apt_opts, *PACKAGES], timeout=600)
    elif proc.returncode != 0:
        run(["apt-get", "install", "-y", "-q", *apt_opts, *PACKAGES], timeout=600)
    # the older versions beside them (the image lacks these packages, so apt fetches exactly the pinned deb)
    older = [f"{name}={version}" for name, version in sorted(OLDER_VERSIONS.items())]
    if older:
        run(["apt-get", "install", "-y", "-q", "--allow-downgrades", *apt_opts, *older], timeout=600)
    shutil.rmtree(tmp / "partial", ignore_errors=True)
    (tmp / "lock").unlink(missing_ok=True)
    debs = sorted(tmp.glob("*.deb"))
    _write_index(tmp, debs)
    (tmp / "racfg-repo.json").write_text(json.dumps({"key": key, "packages": [d.name for d in debs]}, indent=1))
    shutil.rmtree(target, ignore_errors=True)  # a half-written one without its stamp
    tmp.rename(target)
    return target, time.monotonic() - started


def _write_index(directory: Path, debs: list[Path]) -> None:
    """A flat repository index (Packages, Packages.gz, Release), as dpkg-scanpackages would write."""
    stanzas = []
    for deb in debs:
        control = run(["dpkg-deb", "-f", str(deb)], quiet=True).stdout.rstrip("\n")
        data = deb.read_bytes()
        stanzas.append(
            f"{control}\nFilename: ./{deb.name}\nSize: {len(data)}\n"
            f"MD5sum: {hashlib.md5(data).hexdigest()}\nSHA256: {hashlib.sha256(data).hexdigest()}\n"
        )
    packages = "\n".join(stanzas).encode()
    (directory / "Packages").write_bytes(packages)
    (directory / "Packages.gz").write_bytes(gzip.compress(packages, mtime=0))
    lines = ["Origin: racfg-lab", "Label: racfg-lab", "Suite: racfg-lab", "Codename: racfg-lab",
             f"Date: {time.strftime('%a, %d %b %Y %H:%M:%S +0000', time.gmtime())}", "SHA256:"]
    for name in ("Packages", "Packages.gz"):
        blob = (directory / name).read_bytes()
        lines.append(f" {hashlib.sha256(blob).hexdigest()} {len(blob)} {name}")
    (directory / "Release").write_text("\n".join(lines) + "\n")
