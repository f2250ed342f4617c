"""Checks that must pass before a deploy changes anything.

A deploy that fails halfway because a file is missing leaves a cluster half-configured; these
checks catch what can be known on the controller before the first task runs.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.errors import UsageError
from racfg.hostfacts.ofed import DistributionError, distribution_release, release_from_name, version_matches
from racfg.hostfacts.parse_error import ParseError
from racfg.inventory import Cluster


def ofed_source_problem(cluster: Cluster) -> str | None:
    """The mlnx flavor's source, checked where the role reads it: a path must exist on this
    machine (the role copies it from here) and, when its release can be read here, be the
    pinned one; a URL is read by each host (the role checks it there before any change), and
    only the release its file name carries is checked here. (The schema allows only https and
    opted-in http URLs; the sha256 is checked on each host, on the file it will unpack.) A
    repository's signing key is a file here, put on each host by the role."""
    ofed = cluster.inventory.software.ofed
    if ofed is None or ofed.flavor != "mlnx" or not ofed.source:
        return None
    where = cluster.where(("software", "ofed", "source"))
    if ofed.signed_by and not cluster.on_controller(ofed.signed_by).is_file():
        return (f"{cluster.where(('software', 'ofed', 'signed_by'))}: the repository's signing key "
                f"{ofed.signed_by} is not a file on this machine (the controller: racfg copies it from here)")
    source = cluster.ofed_source_on_controller()
    if source is None:  # a URL: only its name can be read here (MLNX_OFED_LINUX-<release>-...tgz)
        release = release_from_name(ofed.source)
    elif not source.exists():
        return (f"{where}: MLNX_OFED source {ofed.source} does not exist on this machine "
                "(the controller: racfg copies it from here to the hosts)")
    else:
        try:
            release = distribution_release(source)
        except DistributionError:
            return None  # what it holds is for the role to refuse, naming what is missing, before it copies
    if not release:
        return None
    try:
        other = bool(ofed.version) and not version_matches(release, ofed.version)
    except ParseError as exc:
        return f"{cluster.where(('software', 'ofed', 'version'))}: {exc}"
    if other:
        return (f"{where}: MLNX_OFED source {ofed.source} holds release {release}, but software.ofed.version "
                f"pins {ofed.version}")
    return None


def run_preflight(cluster: Cluster, switch_names: list[str], overrides: ConnectionOverrides = NO_OVERRIDES) -> None:
    """Raise UsageError (exit 2) naming every problem found; nothing has changed yet."""
    problems = preflight_problems(cluster, switch_names, overrides)
    if problems:
        raise UsageError("deploy refused before any change:\n  " + "\n  ".join(problems))


def preflight_problems(cluster: Cluster, switch_names: list[str],
                       overrides: ConnectionOverrides = NO_OVERRIDES) -> list[str]:
    """What a run of site.yml would lack on this machine (the OFED source, switch passwords), one
    line each; drift asks too, before it reads anything, and says it could not run."""
    problems = []
    # A provider that sets racfg_ofed (the lab: inbox for MLNX_OFED) replaces the pinned stack: its source is not read.
    ofed = None if "racfg_ofed" in overrides.host_vars else ofed_source_problem(cluster)
    if ofed:
        problems.append(ofed + " (hint: put the MLNX_OFED .tgz of the pinned release (or a repository's key) "
                               "there, or give an https URL the hosts can read)")
    problems += switch_credential_problems(cluster, switch_names, overrides)
    return problems


def switch_credential_problems(cluster: Cluster, switch_names: list[str],
                               overrides: ConnectionOverrides = NO_OVERRIDES) -> list[str]:
    """Every switch about to be configured must have a password racfg can find."""
    from racfg.switches import SwitchCredentialsError, resolve_password

    problems = []
    for name in switch_names:
        switch = cluster.switches[name]
        try:
            resolve_password(switch.spec.credentials.model_dump(), site=cluster.name, name=name, overrides=overrides)
        except SwitchCredentialsError as exc:
            problems.append(f"{cluster.where((*switch.src, 'credentials'))}: {exc}")  # exc names the switch
    return problems


def check_switch_host_keys(cluster: Cluster, switch_names: list[str],
                           overrides: ConnectionOverrides = NO_OVERRIDES) -> None:
    """Refuse the run (HostKeyError, exit 3) before any change when a switch about to be configured
    presents a host key the known_hosts files do not list, or one that changed.

    Why here: the switch play runs the switch module inside an Ansible worker, where a refused key
    is one failed task among others (exit 1) after the hosts' plays may already have changed
    things. A key exchange per switch (no login, a few tens of milliseconds, all at once) tells
    it up front. A switch that cannot be reached is left to the play, which reports it as today.
    """
    if not switch_names:
        return
    from racfg.ssh.hostkeys import HostKeyError, Peer, SshProtocolError, checked_key
    from racfg.ssh.known_hosts import KnownHosts

    known = KnownHosts(cluster.known_hosts_file, overrides.known_hosts)

    def one(name: str) -> HostKeyError | None:
        spec = cluster.switches[name].spec
        try:
            checked_key(Peer("switch", name, spec.mgmt, spec.ssh_port), known, timeout=10.0)
        except HostKeyError as exc:
            return exc
        except (OSError, SshProtocolError):
            return None  # unreachable, or no SSH there: the switch play says so
        return None

    with ThreadPoolExecutor(max_workers=min(16, len(switch_names))) as pool:
        refused = [error for error in pool.map(one, switch_names) if error is not None]
    if refused:
        raise refused[0]
