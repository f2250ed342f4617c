"""Reading the facts a baseline holds: every host's document (what the common role's probe reads,
or ``playbooks/facts.yml`` for the hosts a run did not read) and every switch's facts (the switch
drivers), each read no more than once per run. deploy keeps them as the new baseline after a
successful run; drift reads them as "now" to compare with the baseline (racfg.baseline.store).
"""

from __future__ import annotations

import json
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from racfg.baseline.store import commit_baseline, staging_dir
from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.inventory import Cluster
from racfg.playbook import Playbook, PlaybookTracker, Selection
from racfg.run_record import RunRecord
from racfg.secret_env import password_variables
from racfg.ssh.known_hosts import KnownHosts
from racfg.switches.facts import ConfigLine, has_bgp_process


def record_baseline(cluster: Cluster, run: Playbook, record: RunRecord,
                    overrides: ConnectionOverrides = NO_OVERRIDES, stop: threading.Event | None = None,
                    staging: Path | None = None, switch_facts: dict[str, dict[str, Any]] | None = None,
                    renew: set[str] | None = None, previous: dict[str, Any] | None = None
                    ) -> tuple[Path | None, str | None]:
    """Keep host facts and switch facts as the baseline.

    ``staging`` holds the host documents the run itself read and can vouch for (the common
    role's probe, for a host the run did not change); ``switch_facts`` are those of the switches the
    run's switch play read and left unchanged. complete_facts reads the rest.
    ``renew``: the hosts and switches whose facts this run records (racfg.baseline.gate: they pass
    validate); every other one keeps its facts in ``previous`` (the current baseline), or has none.
    None: every target's.
    Returns (baseline directory, None), or (None, why not): the previous baseline then stays.
    """
    staging = staging if staging is not None else staging_dir(cluster.name)
    if renew is not None:
        keep_previous(staging, previous or {}, renew)
        switch_facts = {n: f for n, f in (switch_facts or {}).items() if n in renew}
    error = complete_facts(cluster, staging, run.inventory, run.connection_options, record.path / "facts",
                           overrides, stop, forks=run.selection.forks, known_switches=switch_facts, only=renew)
    if error is not None:
        shutil.rmtree(staging, ignore_errors=True)
        return None, error
    path = commit_baseline(cluster.name, staging, {"site": cluster.name, "run": str(record.path),
                                                   "inventory": str(cluster.path), "source": f"deploy "
                                                   f"{record.path.name}"})
    return path, None


def collect_facts(cluster: Cluster, inventory: Path, connection: list[str], record_dir: Path,
                  overrides: ConnectionOverrides = NO_OVERRIDES, stop: threading.Event | None = None,
                  forks: int = 20, host_facts: dict[str, dict[str, Any]] | None = None,
                  switch_facts: dict[str, dict[str, Any]] | None = None) -> tuple[Path | None, str | None]:
    """Every host's and switch's facts now, in a fresh staging directory (hosts/, switches/).

    ``host_facts`` and ``switch_facts``: what a check-mode run just read (drift's config layer,
    DeployOptions.read_facts); complete_facts reads the rest. Returns (staging directory, None)
    or (None, why not). Read-only: facts.yml changes nothing. Used by drift for "now".
    """
    staging = staging_dir(cluster.name)
    write_host_facts(staging, host_facts or {})
    error = complete_facts(cluster, staging, inventory, connection, record_dir, overrides, stop,
                           forks=forks, known_switches=switch_facts)
    if error is not None:
        shutil.rmtree(staging, ignore_errors=True)
        return None, error
    return staging, None


def complete_facts(cluster: Cluster, staging: Path, inventory: Path, connection: list[str],
                   record_dir: Path, overrides: ConnectionOverrides = NO_OVERRIDES,
                   stop: threading.Event | None = None, forks: int = 20,
                   known_switches: dict[str, dict[str, Any]] | None = None, only: set[str] | None = None) -> str | None:
    """Read what ``staging`` lacks: the hosts without a document by one run of playbooks/facts.yml
    (limited to them; every host when none has one), the switches not in ``known_switches`` with
    the switch drivers; of ``only`` those hosts and switches when given. None, or why the facts
    could not all be read.

    Why one place: deploy's baseline and drift's "now" both start from what a run already read
    and must end with every host and switch, read no more than once."""
    hosts = [h.name for h in cluster.hosts if only is None or h.name in only]
    missing = [name for name in hosts if not (staging / "hosts" / f"{name}.json").is_file()]
    error = None
    if missing:
        error = read_host_facts(inventory, connection, record_dir, staging, stop, forks=forks,
                                limit=",".join(missing) if len(missing) < len(cluster.hosts) else None,
                                withheld_env=password_variables(cluster))
    return error or _missing_host_facts(hosts, staging) or _add_switch_facts(cluster, staging, overrides,
                                                                            known=known_switches, only=only)


def read_host_facts(inventory: Path, connection: list[str], record_dir: Path, staging: Path,
                    stop: threading.Event | None = None, forks: int = 20, limit: str | None = None,
                    withheld_env: frozenset[str] = frozenset()) -> str | None:
    """Run playbooks/facts.yml (on ``limit``, else every host; ``connection``: a provider's
    ansible-playbook options, racfg.render.connection_options; ``withheld_env``: the site's
    password variables, racfg.secret_env) and write each host's document into ``staging``; None,
    or why the facts could not be read."""
    facts_run = Playbook(playbook="facts.yml", inventory=inventory, record_dir=record_dir,
                         selection=Selection(forks=forks, limit=limit),
                         connection_options=connection, withheld_env=withheld_env)
    tracker = PlaybookTracker()
    if facts_run.run(tracker, stop or threading.Event()):
        return "interrupted"
    # Checked before anything is written: facts of a run that failed somewhere are no baseline.
    stopped = tracker.stop_reason()
    if stopped:
        return "host facts could not be read (Ansible stopped: " + "; ".join(e.text() for e in stopped) + ")"
    if tracker.totals["failed"] or tracker.totals["unreachable"]:
        problems = [f"{h.name}: {p}" for h in tracker.hosts.values() for p in h.problems]
        return "host facts could not be read (" + ("; ".join(problems[:3]) or "facts run failed") + ")"
    write_host_facts(staging, tracker.host_facts)
    return None


def write_host_facts(staging: Path, facts: dict[str, dict[str, Any]]) -> None:
    """One JSON document per host in the staging directory, as the baseline keeps them."""
    for host, document in facts.items():
        path = staging / "hosts" / f"{host}.json"
        path.write_text(json.dumps(document, indent=4, sort_keys=True) + "\n")
        path.chmod(0o600)


def keep_previous(staging: Path, previous: dict[str, Any], renew: set[str]) -> None:
    """The staging directory as ``previous`` holds every target not in ``renew``: its document there
    (the last good one), or none; what this run read of such a target is not kept."""
    for kind in ("hosts", "switches"):
        for path in (staging / kind).glob("*.json"):
            if path.stem not in renew:
                path.unlink()
        for name, facts in (previous.get(kind) or {}).items():
            if name not in renew:
                path = staging / kind / f"{name}.json"
                path.write_text(json.dumps(facts, indent=4 if kind == "hosts" else 2, sort_keys=True) + "\n")
                path.chmod(0o600)


def _missing_host_facts(hosts: list[str], staging: Path) -> str | None:
    missing = [name for name in hosts if not (staging / "hosts" / f"{name}.json").is_file()]
    return f"host facts missing for {', '.join(missing)}" if missing else None


def _add_switch_facts(cluster: Cluster, staging: Path, overrides: ConnectionOverrides,
                      known: dict[str, dict[str, Any]] | None = None, only: set[str] | None = None) -> str | None:
    """Write every switch's facts (of ``only`` when given) into the staging directory; why not, if
    they cannot be read.

    ``known``: facts already read in this run (an unchanged switch's, from the switch play); the
    other switches are read now."""
    from racfg.errors import RacfgError

    known = {name: facts for name, facts in (known or {}).items()
             if name in cluster.switches and not _routing_unread(facts)}
    skip = set(known) | ({n for n in cluster.switches if n not in only} if only is not None else set())
    try:
        switches = {**known, **switch_baseline(cluster, overrides, skip=skip)}
    except RacfgError as exc:
        return f"switch facts could not be read ({exc})"
    for name, facts in switches.items():
        (staging / "switches" / f"{name}.json").write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n")
    return None


def _routing_unread(facts: dict[str, Any]) -> bool:
    """A routing switch's facts without its BGP and route tables: what the switch play reads (apply
    plans from the config alone). The baseline must hold the fabric's state, so such a switch is
    read again (racfg.switches.read_facts reads them)."""
    lines = [ConfigLine(**line) for line in facts.get("config_lines") or ()]
    return has_bgp_process(lines) and facts.get("bgp") is None and facts.get("routing_error") is None


def switch_baseline(cluster: Cluster, overrides: ConnectionOverrides = NO_OVERRIDES,
                    skip: set[str] | None = None) -> dict[str, dict[str, Any]]:
    """Version and per-port MTU/state of every switch not in ``skip``, read over SSH with the switch drivers."""
    names = [name for name in cluster.switches if name not in (skip or set())]
    if not names:
        return {}  # before the imports: the drivers load netmiko, which a run that reads no switch never needs
    from racfg.render.ansible_inventory import switch_vars
    from racfg.switches import SwitchTarget, read_facts, resolve_password

    known = KnownHosts(cluster.known_hosts_file, overrides.known_hosts)

    def one(name: str) -> dict[str, Any]:
        switch = cluster.switches[name]
        spec = switch_vars(cluster, switch)["racfg_switch"]
        password = resolve_password(switch.spec.credentials.model_dump(), site=cluster.name, name=name,
                                    overrides=overrides)
        return read_facts(SwitchTarget.from_vars(spec, password, known_hosts=known)).to_dict()

    with ThreadPoolExecutor(max_workers=min(16, len(names))) as pool:
        return dict(zip(names, pool.map(one, names), strict=True))
