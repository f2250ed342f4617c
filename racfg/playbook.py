"""One playbook invocation through ansible-runner (`Playbook`) and what its events say (`PlaybookTracker`).

deploy runs ``site.yml``; drift runs the same in check mode; both want the same thing from it:
live per-host progress, a recap, diffs, the full log kept in the run record, and a clean stop on
Ctrl-C. This module is that one piece.

Vocabulary, one meaning each: a *run* is one recorded command (``racfg.run_record``, a directory
under ``.racfg/runs/``); a *playbook* is one ansible-runner invocation inside it (this module);
``<command>/command.py`` is what a command does end to end.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ansible_runner

from racfg.ansible_errors import AnsibleError, ansible_errors
from racfg.paths import ansible_root, playbooks_dir, roles_dir

# The per-host counts of a playbook_on_stats event (the play recap), by the names racfg gives them
RECAP_COUNTS = {"ok": "ok", "changed": "changed", "failures": "failed", "dark": "unreachable", "skipped": "skipped"}


@dataclass
class HostProgress:
    """What one host has done so far in a run."""

    name: str
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0
    current: str = ""
    started: float | None = None
    finished: float | None = None
    problems: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)  # "role : task" of each change (or would-be change)
    # What a role could not do here and why: [{"role", "reason"}] from its "skipped: ..." lines.
    skips: list[dict[str, str]] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        if self.started is None:
            return 0.0
        return (self.finished or time.monotonic()) - self.started

    def as_dict(self) -> dict[str, Any]:
        return {
            "host": self.name,
            "ok": self.ok,
            "changed": self.changed,
            "failed": self.failed,
            "unreachable": self.unreachable,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 1),
            "problems": self.problems,
            "changes": self.changes,
            "skips": self.skips,
        }


@dataclass
class Diff:
    host: str
    task: str
    text: str


class PlaybookTracker:
    """Folds ansible-runner events into per-host progress. Called from the runner's thread."""

    # Events the run record leaves out: a host's task start, the most frequent event, since each of its
    # results carries its own start, end and duration (Playbook._recording writes a file for every other).
    UNRECORDED = frozenset({"runner_on_start"})

    def __init__(self, total_tasks: int = 0, on_line: Callable[[str], None] | None = None,
                 verbose: bool = False) -> None:
        self.hosts: dict[str, HostProgress] = {}
        self.total_tasks = total_tasks
        self.tasks_started = 0
        self.play = ""
        self.task = ""
        self.diffs: list[Diff] = []
        # each host's baseline document, as playbooks/facts.yml's racfg_host_facts task returned it
        self.host_facts: dict[str, dict[str, Any]] = {}
        # each unchanged switch's facts, as the switch role's racfg_switch task read them
        self.switch_facts: dict[str, dict[str, Any]] = {}
        self.stats_seen = False
        # What Ansible printed outside any task (warnings, and the error block of a play it could
        # not start): ansible-runner's ``verbose`` events, the last of them.
        self.output: deque[str] = deque(maxlen=400)
        self.on_line = on_line
        self.verbose = verbose
        self.lock = threading.Lock()

    def host(self, name: str) -> HostProgress:
        if name not in self.hosts:
            self.hosts[name] = HostProgress(name)
        return self.hosts[name]

    def _say(self, text: str) -> None:
        if self.on_line is not None:
            self.on_line(text)

    def handle(self, event: dict[str, Any]) -> bool:
        """Fold one event in; whether the run record keeps it in job_events/ (see Playbook._recording)."""
        kind = event.get("event", "")
        data = event.get("event_data", {}) or {}
        now = time.monotonic()
        with self.lock:
            if kind == "playbook_on_play_start":
                self.play = data.get("play", "")
                self._say(f"PLAY {self.play}")
            elif kind == "playbook_on_task_start":
                self.tasks_started += 1
                role = data.get("role")
                self.task = f"{role} : {data.get('task', '')}" if role else data.get("task", "")
            elif kind == "runner_on_start":
                progress = self.host(data.get("host", "?"))
                progress.started = progress.started or now
                progress.current = self.task
            elif kind in ("runner_on_ok", "runner_on_failed", "runner_on_skipped", "runner_on_unreachable"):
                self._result(kind, data, now)
            elif kind == "playbook_on_stats":
                self._stats(data)
            elif kind == "verbose":
                self.output.extend(str(event.get("stdout") or "").splitlines())
        return kind not in self.UNRECORDED

    def stop_reason(self) -> list[AnsibleError] | None:
        """Why Ansible ended without playing (no recap: it stopped before or outside a task), in
        its own words; None when it played to its recap. A run cancelled by racfg has no recap
        either: the caller knows it was interrupted."""
        if self.stats_seen:
            return None
        errors = ansible_errors(self.output)
        if errors:
            return errors
        tail = [line for line in self.output if line.strip()][-5:]
        return [AnsibleError("Ansible ended before its play recap and printed no error"
                             + (": " + " / ".join(tail) if tail else "") + " (its whole output: the run record's "
                             "artifacts/ansible/stdout)")]

    def _result(self, kind: str, data: dict[str, Any], now: float) -> None:
        name = data.get("host", "?")
        progress = self.host(name)
        progress.started = progress.started or now
        progress.finished = now
        res = data.get("res", {}) or {}
        task = f"{data.get('role')} : {data.get('task', '')}" if data.get("role") else data.get("task", "")
        if kind == "runner_on_ok":
            if res.get("changed"):
                progress.changed += 1
                progress.changes.append(task)
                self._say(f"  changed: [{name}] {task}")
            else:
                progress.ok += 1
                if self.verbose:
                    self._say(f"  ok: [{name}] {task}")
            self._diff(name, task, res)
            if self.verbose and (res.get("msg") or res.get("stdout")):
                self._say(f"    {res.get('msg') or res.get('stdout')}")
            for reason in skip_reasons(res):
                progress.skips.append({"role": str(data.get("role") or ""), "reason": reason})
            if isinstance(res.get("racfg_host_facts"), dict):
                self.host_facts[name] = res["racfg_host_facts"]
            if isinstance(res.get("racfg_switch_facts"), dict):
                self.switch_facts[name] = res["racfg_switch_facts"]
        elif kind == "runner_on_skipped":
            progress.skipped += 1
        elif kind == "runner_on_failed":
            if data.get("ignore_errors"):
                progress.ok += 1
                return
            progress.failed += 1
            message = _message(res)
            progress.problems.append(f"{task}: {message}")
            self._say(f"  FAILED: [{name}] {task}: {message}")
        elif kind == "runner_on_unreachable":
            progress.unreachable += 1
            message = _message(res)
            progress.problems.append(f"unreachable: {message}")
            self._say(f"  UNREACHABLE: [{name}] {message}")

    def _diff(self, host: str, task: str, res: dict[str, Any]) -> None:
        diff = res.get("diff")
        if not diff:
            return
        for item in diff if isinstance(diff, list) else [diff]:
            text = item.get("prepared") if isinstance(item, dict) else None
            if text is None and isinstance(item, dict) and ("before" in item or "after" in item):
                text = _unified(item)
            if text:
                self.diffs.append(Diff(host, task, text))

    def _stats(self, data: dict[str, Any]) -> None:
        """The play recap is authoritative: counts from it replace our running tally."""
        self.stats_seen = True
        names = set()
        for key in RECAP_COUNTS:
            names.update((data.get(key) or {}).keys())
        for name in names:
            progress = self.host(name)
            for source, target in RECAP_COUNTS.items():
                setattr(progress, target, int((data.get(source) or {}).get(name, 0)))
            # ansible counts changed tasks inside ok; keep ok as "ok and unchanged" like the recap shows
            progress.ok = max(progress.ok - progress.changed, 0)
            progress.current = "done"

    @property
    def totals(self) -> dict[str, int]:
        fields = ("ok", "changed", "failed", "unreachable", "skipped")
        return {f: sum(getattr(h, f) for h in self.hosts.values()) for f in fields}


# The prefix a role's debug line starts with when it reports something it could not do here.
SKIP_PREFIX = "skipped:"


def _items(res: dict[str, Any]) -> list[dict[str, Any]]:
    """A task's result and, for a loop, each item's result."""
    return [res, *[r for r in res.get("results") or [] if isinstance(r, dict)]]


def skip_reasons(res: dict[str, Any]) -> list[str]:
    """The "skipped: why" lines a role printed: a debug task's message, each line of a message
    that is a list (one task says all a role left alone on a host: a task costs the controller a
    worker per host, skipped or not), or each item of a loop of them."""
    out = []
    for r in _items(res):
        msg = r.get("msg")
        for line in msg if isinstance(msg, list) else [msg]:
            if isinstance(line, str) and line.strip().lower().startswith(SKIP_PREFIX):
                out.append(" ".join(line.strip()[len(SKIP_PREFIX):].split()))
    return out


def _message(res: dict[str, Any]) -> str:
    """The reason a task failed, one line. A loop's own msg says only "One or more items failed":
    the failed items' messages are what a person needs."""
    items = [r for r in res.get("results") or [] if isinstance(r, dict) and r.get("failed")]
    if items:
        return "; ".join(_message(item) for item in items)[:300]
    text = res.get("msg") or res.get("stderr") or res.get("stdout") or res.get("reason") or "failed"
    text = str(text).strip().splitlines()[0] if str(text).strip() else "failed"
    return text[:300]


def _unified(item: dict[str, Any]) -> str:
    import difflib

    before = str(item.get("before", ""))
    after = str(item.get("after", ""))
    header_before = item.get("before_header", "before")
    header_after = item.get("after_header", "after")
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        str(header_before), str(header_after)))


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


@contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """While the block runs, SIGINT and SIGTERM set the yielded event instead of raising.

    Why: Python raises KeyboardInterrupt at whatever line the main thread is on. Around a run
    that lands sometimes inside the wait for the runner thread (caught, the run is cancelled)
    and sometimes a line before or after it (not caught): the interrupt then escaped, while the
    runner thread, which Python waits for at exit, played the whole play to its end. An event
    is seen wherever the signal lands, and the one loop that waits for the run polls it. This
    also covers a process started with SIGINT ignored (a background job), which Python would
    otherwise leave deaf to ``kill -INT``. Outside the main thread nothing is installed.
    """
    event = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield event
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.getsignal(sig) for sig in signals}

    def _handler(signum: int, frame: object) -> None:
        event.set()

    for sig in signals:
        signal.signal(sig, _handler)
    try:
        yield event
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


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

    def envvars(self) -> dict[str, str]:
        venv_bin = str(Path(sys.executable).parent)
        return {
            "PATH": f"{venv_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "ANSIBLE_CONFIG": str(ansible_root() / "ansible.cfg"),
            "ANSIBLE_ROLES_PATH": str(roles_dir()),
            "ANSIBLE_LIBRARY": os.pathsep.join(str(roles_dir() / role / "library") for role in ("switch", "common")),
            # ansible.cfg's callback_plugins, which ansible-runner's own (ANSIBLE_CALLBACK_PLUGINS) replaces:
            # ansible-runner adds its directory to this one.
            "ANSIBLE_CALLBACK_PLUGINS": str(playbooks_dir() / "callback_plugins"),
            "ANSIBLE_LOCAL_TEMP": str(self.record_dir / "tmp"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_HOST_KEY_CHECKING": os.environ.get("ANSIBLE_HOST_KEY_CHECKING", "True"),
        }

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

    def _task_count_key(self) -> str:
        """What the number of tasks a play starts depends on: the play, its selection, the
        rendered inventory (content), and playbooks/ and roles/ (names, sizes, mtimes)."""
        import hashlib

        sel = self.selection
        digest = hashlib.sha256(repr((self.playbook, sel.limit, sel.tags, sel.skip_tags, sel.check)).encode())
        # the rendered hosts.yml, group_vars/ and host_vars/ beside it
        for path in sorted(p for p in self.inventory.parent.rglob("*") if p.is_file()):
            with contextlib.suppress(OSError):
                digest.update(path.name.encode() + path.read_bytes())
        for root in (playbooks_dir(), roles_dir()):
            for path in sorted(root.rglob("*")):
                with contextlib.suppress(OSError):
                    info = path.stat()
                    digest.update(f"{path}:{info.st_size}:{info.st_mtime_ns}".encode())
        return digest.hexdigest()[:20]

    def remember_task_count(self, cache: Path, tasks_started: int) -> None:
        """Keep how many tasks a finished run started: the next run of the same play needs no
        ``--list-tasks`` (a second ansible-playbook that parses every role) for its progress bar."""
        with contextlib.suppress(OSError, ValueError):
            known = json.loads(cache.read_text()) if cache.exists() else {}
            known[self._task_count_key()] = tasks_started
            cache.parent.mkdir(parents=True, exist_ok=True)
            # another racfg of the project (another site's deploy) may read or write it now
            write_json_whole(cache, dict(list(known.items())[-32:]))

    def count_tasks(self, cache: Path | None = None) -> int:
        """How many tasks the play will start (for the progress bar): what the last run of the
        same play started (``cache``, see remember_task_count), else ansible-playbook --list-tasks."""
        import subprocess

        if cache is not None:
            with contextlib.suppress(OSError, ValueError):
                known = json.loads(cache.read_text()).get(self._task_count_key())
                if isinstance(known, int) and known > 0:
                    return known

        argv = [str(Path(sys.executable).parent / "ansible-playbook"), "--list-tasks",
                str(playbooks_dir() / self.playbook), "-i", str(self.inventory)]
        sel = self.selection
        for flag, value in (("--limit", sel.limit), ("--tags", sel.tags), ("--skip-tags", sel.skip_tags)):
            if value:
                argv += [flag, value]
        env = {**os.environ, **self.envvars()}
        try:
            out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            return 0
        return sum(1 for line in out.splitlines() if line.startswith("      ") and "TAGS:" in line)

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
        """Kill the Ansible worker processes a cancelled run left behind; their pids.

        Why: ansible-runner ends a cancelled play by killing ansible-playbook's process group, but
        each Ansible worker runs in a session of its own (os.setsid), so it outlives that; one that
        then writes its result to the dead parent's queue waits for ever. They are found by this
        run's ANSIBLE_LOCAL_TEMP (see envvars), which every worker inherits and no other run has.
        Processes they started (ssh, a module on this machine) are left to end on their own, as a
        module already running on a host does: an ssh control master may serve other runs.
        """
        marker = f"ANSIBLE_LOCAL_TEMP={self.envvars()['ANSIBLE_LOCAL_TEMP']}".encode()
        killed = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                if b"ansible-playbook" not in Path(f"/proc/{entry}/cmdline").read_bytes():
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
        self.record_dir.mkdir(parents=True, exist_ok=True)
        (self.record_dir / "tmp").mkdir(exist_ok=True)
        # How often ansible-runner asks ``cancelled`` (its default: every 5 s). Read only from
        # env/settings: ansible-runner 2.4 drops a ``settings=`` argument when that file is absent.
        (self.record_dir / "env").mkdir(exist_ok=True)
        (self.record_dir / "env" / "settings").write_text("pexpect_timeout: 1\n")
        return ansible_runner.run_async(
            private_data_dir=str(self.record_dir),
            project_dir=str(playbooks_dir()),
            playbook=self.playbook,
            inventory=str(self.inventory),
            limit=self.selection.limit,
            tags=self.selection.tags,
            skip_tags=self.selection.skip_tags,
            forks=self.selection.forks,
            cmdline=self.cmdline() or None,
            extravars=self.extravars or None,
            envvars=self.envvars(),
            event_handler=event_handler,
            cancel_callback=cancelled,
            # Ansible's own in-memory fact cache (ansible.cfg), as a plain ansible-playbook run has it:
            # ansible-runner's default (a JSON file per host, rewritten on every facts update) costs
            # controller time and keeps nothing anyone reads.
            fact_cache_type="memory",
            quiet=True,
            ident=RUNNER_IDENT,
        )

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
        events = self.record_dir / "artifacts" / RUNNER_IDENT / "job_events"

        def handler(event: dict[str, Any]) -> bool:
            if handle(event) and "uuid" in event and "counter" in event:
                write_json_whole(events / f"{event['counter']}-{event['uuid']}.json", event)
            return False

        return handler


def write_json_whole(path: Path, data: dict[str, Any]) -> None:
    """One JSON file, whole or not at all, owner-only as ansible-runner writes its event files.

    Readers may look while it is written (an event file while the run goes on; the task-count cache
    while another racfg of the project runs), and the temporary name is this process's own, so two
    writers never write into one file. A write that fails loses that file, as in ansible-runner.
    """
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(data))
        os.replace(temporary, path)
