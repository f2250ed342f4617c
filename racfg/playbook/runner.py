"""One ansible-playbook invocation through ansible-runner: its options, environment, the events it
hands racfg's tracker, its run record, and a clean stop (leftover workers killed).

``connection_options`` are a provider's ansible-playbook options for reaching the hosts
(see racfg.render.connection_options); ``secret_vars`` an extra-vars file that must not be
recorded (see racfg.secret_vars): only its path reaches ansible-runner's records. The run's
environment carries no secret (racfg.secret_env; see ``_SecretFreeConfig``).
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ansible_runner import Runner, RunnerConfig

from racfg.paths import ansible_root, playbooks_dir, roles_dir
from racfg.playbook.events import PlaybookTracker
from racfg.playbook.module_processes import run_env
from racfg.run_record import write_json_whole
from racfg.secret_env import without_secrets


@dataclass
class Selection:
    """Which part of a play runs, and how: ansible-playbook's --limit, --tags, --skip-tags,
    --check, --diff and --forks, as deploy (and drift, in check mode) pass them on."""

    limit: str | None = None
    tags: str | None = None
    skip_tags: str | None = None
    check: bool = False
    diff: bool = False
    forks: int = 20


# ansible-runner's ident: its artifacts go to <record>/artifacts/<ident>/.
RUNNER_IDENT = "ansible"


@dataclass
class Playbook:
    """What to run: a playbook against a rendered inventory, with ansible-playbook's options.

    ``connection_options`` are a provider's ansible-playbook options for reaching the hosts
    (see racfg.render.connection_options); ``secret_vars`` an extra-vars file that must not be
    recorded (see racfg.secret_vars): only its path reaches ansible-runner's records.
    """

    playbook: str
    inventory: Path
    record_dir: Path
    selection: Selection = field(default_factory=Selection)
    extravars: dict[str, Any] = field(default_factory=dict)
    connection_options: list[str] = field(default_factory=list)
    secret_vars: Path | None = None
    # artifacts/<ident>/ of the record: a deploy's apply pass after its read pass has its own
    ident: str = RUNNER_IDENT
    # environment variables the inventory names as password sources (racfg.secret_env.password_variables):
    # left out of the run's environment with every variable named like a secret
    withheld_env: frozenset[str] = frozenset()

    def envvars(self) -> dict[str, str]:
        venv_bin = str(Path(sys.executable).parent)
        return {
            "PATH": f"{venv_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "ANSIBLE_CONFIG": str(ansible_root() / "ansible.cfg"),
            "ANSIBLE_ROLES_PATH": str(roles_dir()),
            "ANSIBLE_LIBRARY": os.pathsep.join(str(roles_dir() / role / "library") for role in ("switch", "common")),
            "ANSIBLE_MODULE_UTILS": str(roles_dir() / "common" / "module_utils"),
            # ansible.cfg's callback_plugins, which ansible-runner's own (ANSIBLE_CALLBACK_PLUGINS) replaces:
            # ansible-runner adds its directory to this one.
            "ANSIBLE_CALLBACK_PLUGINS": str(playbooks_dir() / "callback_plugins"),
            "ANSIBLE_LOCAL_TEMP": str(self.record_dir / "tmp"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_HOST_KEY_CHECKING": os.environ.get("ANSIBLE_HOST_KEY_CHECKING", "True"),
        }

    def environment(self) -> dict[str, str]:
        """The environment ansible-playbook gets: this process's and ``envvars``, less any secret."""
        return without_secrets({**os.environ, **self.envvars()}, self.withheld_env)

    def cmdline(self) -> str:
        parts = []
        if self.selection.check:
            parts.append("--check")
        if self.selection.diff:
            parts.append("--diff")
        if self.secret_vars is not None:
            parts.append(f"-e @{self.secret_vars}")
        if self.connection_options:
            parts.append(shlex.join(self.connection_options))
        return " ".join(parts)

    def run(self, tracker: PlaybookTracker, stop: threading.Event) -> bool:
        """Run to the end, or until ``stop`` is set (then ansible-runner kills the play). True if stopped."""
        if stop.is_set():
            return True
        thread, _runner = self.start(tracker, stop.is_set)
        while thread.is_alive():
            thread.join(0.25)
        if stop.is_set():
            # Until a look finds none: a process killed a moment ago may still be tearing down,
            # and a worker's child forked but not yet exec'd looks like the worker.
            deadline = time.monotonic() + 5
            while self.stop_leftover_workers() and time.monotonic() < deadline:
                time.sleep(0.1)
        return stop.is_set()

    def stop_leftover_workers(self) -> list[int]:
        """Kill the Ansible worker processes a cancelled run left behind, and their ssh clients; their pids.

        Why: ansible-runner ends a cancelled play by killing ansible-playbook's process group, but
        each Ansible worker runs in a session of its own (os.setsid), so it outlives that; one that
        then writes its result to the dead parent's queue waits for ever. Its ssh client would only
        carry a module's result to it, and once both are gone nothing of the run starts another
        module anywhere. They are found by this run's ANSIBLE_LOCAL_TEMP (see envvars), which every
        worker and its ssh inherit and no other run has. An ssh control master (its title ends in
        ``[mux]``) is left: it starts nothing by itself and may serve the next run. Modules already
        running, on a host or here, are the run's to await or stop (racfg.playbook.module_processes).
        """
        marker = f"ANSIBLE_LOCAL_TEMP={self.envvars()['ANSIBLE_LOCAL_TEMP']}".encode()
        killed = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                ssh_client = os.path.basename(argv[0]) == b"ssh"
                if not ssh_client and not any(b"ansible-playbook" in arg for arg in argv):
                    continue
                if marker not in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                    continue
                os.kill(int(entry), signal.SIGKILL)
                killed.append(int(entry))
            except OSError:
                continue
        return killed

    def start(self, tracker: PlaybookTracker, cancelled: Callable[[], bool]) -> tuple[threading.Thread, Any]:
        """Start ansible-runner in a thread; events go to ``tracker`` and the run record; ``cancelled`` stops it."""
        return self.launch(self._recording(tracker.handle), cancelled)

    def launch(self, event_handler: Callable[[dict[str, Any]], bool],
               cancelled: Callable[[], bool]) -> tuple[threading.Thread, Any]:
        """Start ansible-runner in a thread with ``event_handler`` as its event handler (its answer:
        whether ansible-runner writes the event's file). ``start`` passes racfg's tracker and run
        record; bench/runner_alone.py one that keeps nothing, to measure ansible-runner on its own."""
        self.record_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        (self.record_dir / "tmp").mkdir(mode=0o700, exist_ok=True)
        # How often ansible-runner asks ``cancelled`` (its default: every 5 s). Read only from
        # env/settings: ansible-runner 2.4 drops a ``settings=`` argument when that file is absent.
        (self.record_dir / "env").mkdir(mode=0o700, exist_ok=True)
        (self.record_dir / "env" / "settings").write_text("pexpect_timeout: 1\n")
        kwargs: dict[str, Any] = dict(
            private_data_dir=str(self.record_dir),
            project_dir=str(playbooks_dir()),
            playbook=self.playbook,
            inventory=str(self.inventory),
            limit=self.selection.limit,
            tags=self.selection.tags,
            skip_tags=self.selection.skip_tags,
            forks=self.selection.forks,
            cmdline=self.cmdline() or None,
            extravars={**run_env(), **self.extravars},
            envvars=self.envvars(),
            # Ansible's own in-memory fact cache (ansible.cfg), as a plain ansible-playbook run has it:
            # ansible-runner's default (a JSON file per host, rewritten on every facts update) costs
            # controller time and keeps nothing anyone reads.
            fact_cache_type="memory",
            quiet=True,
            ident=self.ident,
        )
        # What ansible_runner.run_async does, with a configuration that leaves the secrets out
        # (_SecretFreeConfig): the configuration (given its options directly, as RunnerConfig takes
        # them), the Runner, its thread.
        config = _SecretFreeConfig(withheld=self.withheld_env, **kwargs)
        config.prepare()
        runner = Runner(config, event_handler=event_handler, cancel_callback=cancelled)
        thread = threading.Thread(target=runner.run)
        thread.start()
        return thread, runner

    def _recording(self, handle: Callable[[dict[str, Any]], bool]) -> Callable[[dict[str, Any]], bool]:
        """ansible-runner's event handler: ``handle`` folds each event in and says whether the record
        keeps it; a kept event is written here, to the file ansible-runner would write
        (``artifacts/ansible/job_events/<counter>-<uuid>.json``, the same JSON), and ansible-runner is
        told not to write it.

        Why: ansible-runner writes each event with ``json.dump`` into a ``codecs`` stream, which runs
        Python's pure-Python encoder and one encoded write per JSON token, about 200 per event. That
        was the largest part of racfg's own CPU in a no-change deploy (cProfile at 17 hosts: 0.75 of
        1.1 CPU-s in ansible-runner's thread, under the profiler); one ``json.dumps`` and one write
        cost a small part of it.
        """
        events = self.record_dir / "artifacts" / self.ident / "job_events"

        def handler(event: dict[str, Any]) -> bool:
            if handle(event) and "uuid" in event and "counter" in event:
                write_json_whole(events / f"{event['counter']}-{event['uuid']}.json", event)
            return False

        return handler


class _SecretFreeConfig(RunnerConfig):
    """ansible-runner's configuration of one run, whose environment holds no secret.

    Why: ansible-runner seeds a run's environment with this whole process's environment
    (``prepare_env``) and writes it into ``artifacts/<ident>/command``; its ``envvars`` can only add
    or override a variable, never leave one out, so a ``password_env`` the operator exported would be
    recorded and inherited by every worker. Public API only: ansible-runner documents RunnerConfig as
    meant to be overridden ("It can also be overridden to provide different functionality to the
    Runner object") and to be handed to ``Runner(config=...)``; this override of ``prepare_env``, the
    documented step that builds ``env``, drops what racfg.secret_env calls a secret from it, before
    anything is recorded or started.
    """

    def __init__(self, *, withheld: frozenset[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.withheld = withheld

    def prepare_env(self) -> None:
        super().prepare_env()
        self.env = without_secrets(self.env, self.withheld)
