"""`racfg deploy`: render, lock, run site.yml through ansible-runner (a plain run reads first and
applies only where something differs: racfg.deploy.passes), recap, record a baseline."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racfg.ansible_errors import AnsibleError
from racfg.baseline.collect import record_baseline, write_host_facts
from racfg.baseline.gate import BaselineVerdict, candidates, judge, validator
from racfg.baseline.store import load_baseline, staging_dir
from racfg.connection import NO_OVERRIDES, ConnectionOverrides
from racfg.deploy.passes import READ_PLAYBOOK, read_then_apply, reads_first
from racfg.deploy.preflight import check_switch_host_keys, run_preflight
from racfg.deploy.view import RunView
from racfg.errors import ExitCode
from racfg.inventory import Cluster
from racfg.lock.local import Stop, site_change_lock, stop_on_signals
from racfg.paths import state_dir
from racfg.playbook import RUNNER_IDENT, Playbook, PlaybookTracker, Selection, count_tasks, remember_task_count
from racfg.playbook.module_processes import WAIT_S, Leftovers, hosts_in_scope, stop_leftovers
from racfg.render import connection_options, write_rendered
from racfg.run_record import RunRecord
from racfg.secret_env import password_variables
from racfg.secret_vars import SWITCH_PASSWORDS_VAR, secret_extravars


@dataclass
class DeployOptions(Selection):
    """What to deploy (the play selection) and how to show and record it."""

    verbose: bool = False
    allow_reboot: bool = False
    playbook: str = "site.yml"
    baseline: bool = True
    progress_to_stderr: bool = False  # keep stdout for a machine-readable recap
    lock_holder: str | None = None  # who holds the site lock, for others' messages ("drift")
    quiet: bool = False  # no live view (a caller such as drift shows its own progress)
    # A check-mode run's reads double as the hosts' and switches' facts now (drift's environment
    # layer): the common probe also reads each host's baseline document, and the switch play
    # returns what it read. Check mode only: a run that changes things reads them before it does.
    read_facts: bool = False
    # Check mode: the switches' facts read already in this run (name -> SwitchFacts.to_dict(); drift
    # reads each switch once for all its layers): the switch play plans from them without logging in.
    switch_facts: dict[str, dict[str, Any]] | None = None
    # The inventory rendered already in this run (drift renders once for all its layers); None: this
    # run renders its own into its record.
    rendered: Path | None = None
    # drift's config layer (playbooks/read.yml): the probes also return the files they would
    # write as diffs, and the hosts' verdicts land in DeployOutcome.would_change and not_read.
    config_read: bool = False
    # A stopped run (Ctrl-C, SIGTERM, a lost site lock) waits this long for its module processes on
    # the hosts to end before it stops them (racfg.playbook.module_processes), and only then lets
    # the site lock go.
    stop_wait: float = WAIT_S


def records_baseline(options: DeployOptions) -> bool:
    """Whether a successful run records the baseline: a full run only (every host, every role, not
    --check). A run limited to some hosts or roles leaves the rest as the last full run found them,
    so its picture is not the site's good state."""
    return (not options.check and options.baseline and not options.limit and not options.tags
            and not options.skip_tags)


LIMITED_RUN = ("a --limit, --tags or --skip-tags run records no baseline (it leaves the rest of the site as "
               "it was): the last full run's stands")


@dataclass
class DeployOutcome:
    record: RunRecord
    hosts: list[dict[str, Any]]
    exit_code: ExitCode
    interrupted: bool = False
    baseline: Path | None = None
    baseline_error: str | None = None
    # A full run: what it recorded of the baseline, what it refused (target -> problems) and why.
    baseline_verdict: BaselineVerdict | None = None
    diffs: list[dict[str, str]] = field(default_factory=list)
    # With DeployOptions.read_facts: the facts the run read, per host and per switch (those it reached).
    host_facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    switch_facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    # A read pass's (DeployOptions.config_read, racfg.deploy.passes): per host, role -> what the roles'
    # reads found different, and the roles whose work there they do not compare.
    would_change: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    not_read: dict[str, list[str]] = field(default_factory=dict)
    # Ansible stopped before or outside a task (a parse error, a module it cannot resolve...): its
    # own errors (PlaybookTracker.stop_reason); the run could not run, whatever the counts say.
    ansible_errors: list[AnsibleError] = field(default_factory=list)
    # A stopped run: why (Ctrl-C, SIGTERM, the site lock lost), whether the pass it stopped in
    # changes nothing (the read pass, --check), and its module processes found running on the
    # hosts and here then: what was awaited, what was stopped.
    stop_reason: str | None = None
    stopped_reading: bool = False
    lock_lost: str | None = None
    leftovers: list[Leftovers] = field(default_factory=list)

    @property
    def totals(self) -> dict[str, int]:
        keys = ("ok", "changed", "failed", "unreachable", "skipped")
        return {k: sum(int(h[k]) for h in self.hosts) for k in keys}

    @property
    def could_not_run(self) -> str | None:
        """"Ansible stopped before running the play:" and its errors, one per line; None if it ran."""
        if not self.ansible_errors:
            return None
        return "Ansible stopped before running the play:\n" + "\n".join(
            "  " + e.text().replace("\n", "\n  ") for e in self.ansible_errors)

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": str(self.record.path),
            "exit_code": int(self.exit_code),
            "interrupted": self.interrupted,
            "totals": self.totals,
            "hosts": self.hosts,
            "baseline": str(self.baseline) if self.baseline else None,
            "baseline_error": self.baseline_error,
            "baseline_state": self.baseline_verdict.as_dict() if self.baseline_verdict else None,
            "could_not_run": self.could_not_run,
            "ansible_errors": [e.as_dict() for e in self.ansible_errors],
            "stop_reason": self.stop_reason,
            "stopped_reading": self.stopped_reading,
            "lock_lost": self.lock_lost,
            "module_processes": [left.as_dict() for left in self.leftovers],
        }


def switches_in_scope(cluster: Cluster, options: DeployOptions) -> list[str]:
    """Switches the run will configure, judged from --limit/--tags/--skip-tags."""
    tags = set((options.tags or "").split(",")) - {""}
    skip = set((options.skip_tags or "").split(",")) - {""}
    if (tags and "switch" not in tags and "all" not in tags) or "switch" in skip:
        return []
    names = list(cluster.switches)
    if not options.limit:
        return names
    tokens = {t.strip() for part in options.limit.split(",") for t in part.split(":")} - {""}
    if tokens & {"all", "switches"}:
        return names
    return [n for n in names if n in tokens]


def run_deploy(cluster: Cluster, options: DeployOptions, title: str = "deploy",
               overrides: ConnectionOverrides = NO_OVERRIDES) -> DeployOutcome:
    """Run the deploy under the site lock. Unreachable or failed hosts do not stop the others.

    ``overrides`` (from the command layer: racfg.cli.providers) says how to reach a site beyond
    its inventory, e.g. a running lab's key and switch passwords; the rendered inventory in the
    run record stays what ``racfg render`` writes, the overrides reach ansible-playbook as options.
    """
    if options.read_facts and not options.check:
        raise ValueError("read_facts needs check mode: a run that changes things reads them before it does")
    in_scope = switches_in_scope(cluster, options)
    run_preflight(cluster, in_scope, overrides)
    check_switch_host_keys(cluster, in_scope, overrides)
    with site_change_lock(cluster, overrides, shared=options.check, reports_loss=True,
                          holder=options.lock_holder or ("deploy --check" if options.check else "deploy")) as lock, \
            stop_on_signals() as stop, lock.stopping(stop):
        record = RunRecord.create("deploy" if not options.check else "deploy-check")
        inventory_dir = options.rendered or record.path / "inventory"
        if options.rendered is None:
            write_rendered(cluster, inventory_dir)
        if overrides.active:
            record.write_json("connection.json", {"provider": overrides.provider,
                                                  "substitutions": list(overrides.substitutions)})
        wants_baseline = records_baseline(options)
        # The common role's probe reads each host's baseline document at the start of the run
        # (racfg_read_host_facts); if the run changes nothing, that is the state it leaves, and the
        # baseline needs no facts play after it (see record_baseline).
        staging = staging_dir(cluster.name) if wants_baseline and options.playbook == "site.yml" else None
        facts_vars = {"racfg_read_host_facts": True} if staging is not None or options.read_facts else {}
        if options.switch_facts and options.check:
            facts_vars["racfg_switch_facts_read"] = options.switch_facts
        if options.config_read:
            facts_vars["racfg_config_read"] = True
        extravars = {"racfg_allow_reboot": options.allow_reboot, **provider_extravars(overrides), **facts_vars}
        with _switch_secrets(cluster, in_scope, overrides) as secrets:
            def make(selection: Selection, ident: str = RUNNER_IDENT, more: dict | None = None,
                     playbook: str | None = None) -> Playbook:
                return Playbook(playbook=playbook or options.playbook, inventory=inventory_dir / "hosts.yml",
                                record_dir=record.path, selection=selection, extravars={**extravars, **(more or {})},
                                connection_options=connection_options(overrides, cluster.known_hosts_file),
                                secret_vars=secrets, ident=ident, withheld_env=password_variables(cluster))

            def run_pass(run: Playbook, label: str) -> tuple[PlaybookTracker, bool]:
                return _run_pass(run, f"{title} {cluster.name}" + (f": {label}" if label else ""), options, stop)

            if reads_first(options.playbook, options):
                tracker, interrupted, run = read_then_apply(cluster, options, make, in_scope, overrides, run_pass)
            else:
                run = make(options)
                tracker, interrupted = run_pass(run, "")
        hosts = [h.as_dict() for h in sorted(tracker.hosts.values(), key=lambda h: h.name)]
        outcome = DeployOutcome(record, hosts, _exit_code(tracker, interrupted), interrupted,
                                diffs=[{"host": d.host, "task": d.task, "diff": d.text} for d in tracker.diffs],
                                ansible_errors=[] if interrupted else tracker.stop_reason() or [])
        if options.read_facts:
            outcome.host_facts, outcome.switch_facts = tracker.host_facts, tracker.switch_facts
        outcome.would_change, outcome.not_read = tracker.would_change, tracker.not_read
        if wants_baseline and not interrupted and tracker.stats_seen and not outcome.ansible_errors:
            outcome.baseline_verdict, outcome.baseline_error = _good_state(cluster, tracker, run, record, overrides,
                                                                           stop, staging, inventory_dir)
            outcome.baseline = outcome.baseline_verdict.path
            if stop.is_set():
                outcome.interrupted, outcome.exit_code = True, ExitCode.CANNOT_RUN
        elif staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        elif not (wants_baseline or options.check) and options.baseline:
            outcome.baseline_verdict = BaselineVerdict(note=LIMITED_RUN)
        if stop.is_set():
            _stopped(outcome, cluster, overrides, options, stop, tracker, run)
        if lock.lost is not None:
            outcome.lock_lost, outcome.exit_code = lock.lost, ExitCode.CANNOT_RUN
        record.write_json("results.json", outcome.as_dict())
        return outcome


def _good_state(cluster: Cluster, tracker: PlaybookTracker, run: Playbook, record: RunRecord,
                overrides: ConnectionOverrides, stop: Stop, staging: Path | None, rendered: Path,
                ) -> tuple[BaselineVerdict, str | None]:
    """Record the baseline of a full run's good targets (racfg.baseline.gate): those it changed or the
    baseline lacks, that it succeeded on and that pass validate now; (what it did, why it could not).
    Nothing to judge (a run that changed nothing): the baseline it has stands, nothing is read."""
    previous = load_baseline(cluster.name)
    verdict = BaselineVerdict(kept=(previous or {}).get("meta", {}).get("id"))
    names = candidates(tracker.hosts, previous)
    if names:
        runs: list[str] = []
        verdict.refused, _ = judge(names, validator(cluster, overrides, rendered, runs), stop)
        verdict.validated, verdict.validate_run = names, runs[0] if runs else None
    renew = set(names) - set(verdict.refused)
    if not renew:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        verdict.note = ("every target the run changed fails validate" if names else "the run changed nothing") + (
            f": the baseline {verdict.kept} stands" if verdict.kept else ": no baseline recorded")
        return verdict, None
    if staging is not None:  # the read pass's documents of the hosts it then left unchanged
        write_host_facts(staging, {h: doc for h, doc in tracker.host_facts.items()
                                   if h in tracker.hosts and not tracker.hosts[h].changed})
    verdict.path, error = record_baseline(cluster, run, record, overrides, stop, staging=staging,
                                          switch_facts=tracker.switch_facts, renew=renew, previous=previous)
    verdict.recorded = sorted(renew) if verdict.path else []
    return verdict, error


def _stopped(outcome: DeployOutcome, cluster: Cluster, overrides: ConnectionOverrides, options: DeployOptions,
             stop: Stop, tracker: PlaybookTracker, run: Playbook) -> None:
    """A stopped run, still under its site lock: its module processes awaited, then stopped. A pass
    that changes nothing (the read pass, --check, drift's) has nothing to finish: not awaited."""
    outcome.interrupted, outcome.exit_code = True, ExitCode.CANNOT_RUN
    outcome.stop_reason = stop.reason
    outcome.stopped_reading = options.check or run.playbook == READ_PLAYBOOK
    hosts = hosts_in_scope(cluster, options.limit, set(tracker.hosts))
    wait = 0.0 if outcome.stopped_reading else options.stop_wait
    outcome.leftovers = stop_leftovers(cluster, overrides, hosts, wait, lambda: stop.insisted,
                                       lambda text: print(f"racfg: {text}", file=sys.stderr, flush=True))


def provider_extravars(overrides: ConnectionOverrides) -> dict[str, Any]:
    """Variables the provider sets for its runs only (``ConnectionOverrides.host_vars``): the lab has
    no GPUs, so there the gpu role reports "no GPU" as a skip instead of failing, and its lldpd
    announces every second; and its known_hosts, which the switch role reads besides the site's
    (hosts get it through ``connection_options``). A production run (no provider) keeps what the
    inventory renders."""
    known = {"racfg_provider_known_hosts": str(overrides.known_hosts)} if overrides.known_hosts else {}
    return {**overrides.host_vars, **known}


@contextmanager
def _switch_secrets(cluster: Cluster, names: list[str], overrides: ConnectionOverrides) -> Iterator[Path | None]:
    """The in-scope switches' passwords, resolved here once, in a private extra-vars file for the run."""
    from racfg.switches import switch_passwords

    credentials = {n: cluster.switches[n].spec.credentials.model_dump() for n in names}
    passwords = switch_passwords(credentials, site=cluster.name, overrides=overrides)
    with secret_extravars({SWITCH_PASSWORDS_VAR: passwords} if passwords else {}) as path:
        yield path


def _run_pass(run: Playbook, title: str, options: DeployOptions, stop: Stop,
              ) -> tuple[PlaybookTracker, bool]:
    """Run the play, showing progress; a signal (Ctrl-C, SIGTERM) sets ``stop``, which cancels it.
    (its tracker, whether it was interrupted)"""
    view = RunView(title, verbose=options.verbose, to_stderr=options.progress_to_stderr, quiet=options.quiet)
    # The task total only feeds the live progress bar: no bar (plain lines, CI), no count.
    task_counts = state_dir() / "cache" / "task-counts.json"
    tracker = PlaybookTracker(total_tasks=count_tasks(run, task_counts) if view.tty else 0,
                              on_line=view.line_sink(), verbose=options.verbose)
    with view:
        view.attach(tracker)
        interrupted = run.run(tracker, stop)
    if not interrupted and tracker.stats_seen:
        remember_task_count(run, task_counts, tracker.tasks_started)
    return tracker, interrupted


def _exit_code(tracker: PlaybookTracker, interrupted: bool) -> ExitCode:
    totals = tracker.totals
    if interrupted:
        return ExitCode.CANNOT_RUN
    if totals["unreachable"] or any(h.cannot_run for h in tracker.hosts.values()):
        return ExitCode.CANNOT_RUN
    if totals["failed"] or not tracker.stats_seen:
        return ExitCode.FINDINGS if tracker.stats_seen else ExitCode.CANNOT_RUN
    return ExitCode.OK
