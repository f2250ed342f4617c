"""What a playbook's events say: per-host progress, the recap, diffs, the reasons roles skipped, and
why a run that never reached its recap stopped (Ansible's own error lines).

The tracker folds ansible-runner's events in as they arrive (racfg.playbook.runner feeds it); the
live view and the recap read it. Pure bookkeeping: nothing here starts a process.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from racfg.ansible_errors import AnsibleError, ansible_errors

# The key of a host's verdict in its debug message (playbooks/read.yml)
VERDICT = "racfg_verdict"
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
    running: str = ""  # the task started here whose result has not come (what a stop finds in flight)
    started: float | None = None
    finished: float | None = None
    problems: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)  # "role : task" of each change (or would-be change)
    # What a role could not do here and why: [{"role", "reason"}] from its "skipped: ..." lines.
    skips: list[dict[str, str]] = field(default_factory=list)
    # A failure that says the target could not be worked on (a module's racfg_cannot_run: a switch
    # unreachable, or its session lost): the run could not run there (exit 3), not a finding.
    cannot_run: bool = False

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
            "in_flight": self.running or None,
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
        # per host, role -> what the roles' reads found different (the hosts' verdicts, read.yml), and
        # the roles whose work on the host those reads do not compare (they must run to know)
        self.would_change: dict[str, dict[str, list[str]]] = {}
        self.not_read: dict[str, list[str]] = {}
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
                progress.current = progress.running = self.task
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
        progress.running = ""
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
            self._verdict(name, progress, res)
        elif kind == "runner_on_skipped":
            progress.skipped += 1
        elif kind == "runner_on_failed":
            if data.get("ignore_errors"):
                progress.ok += 1
                return
            progress.failed += 1
            progress.cannot_run = progress.cannot_run or bool(res.get("racfg_cannot_run"))
            # a verdict's refusals are each its role's, as the role's own check would have failed
            for problem in self._verdict(name, progress, res) or [f"{task}: {_message(res)}"]:
                progress.problems.append(problem)
                self._say(f"  FAILED: [{name}] {problem}")
        elif kind == "runner_on_unreachable":
            progress.unreachable += 1
            message = _message(res) + _host_key_hint(res)
            progress.problems.append(f"unreachable: {message}")
            self._say(f"  UNREACHABLE: [{name}] {message}")

    def _verdict(self, name: str, progress: HostProgress, res: dict[str, Any]) -> list[str]:
        """Fold a verdict (playbooks/read.yml: per role of the host, what its reads found) into the
        host's: what each role would change, whether its read cannot tell (not_read), what it
        leaves alone. Returns what the roles refuse, each "role: why" (empty: nothing)."""
        msg = res.get("msg")
        verdict = msg.get(VERDICT) if isinstance(msg, dict) else None
        if not isinstance(verdict, dict):
            return []
        refused = [f"{role}: {line}" for role, found in verdict.items() for line in found.get("refused") or []]
        for role, found in verdict.items():
            if not refused:  # a host its roles refuse has no plan: the refusal is what it says
                self.would_change.setdefault(name, {})[role] = list(found.get("would_change") or [])
            if found.get("not_read"):
                self.not_read[name] = [*self.not_read.get(name, []), role]
            progress.skips += [{"role": role, "reason": reason}
                               for reason in skip_reasons({"msg": list(found.get("left_alone") or [])})]
        self.not_read.setdefault(name, [])
        return refused

    def _diff(self, host: str, task: str, res: dict[str, Any]) -> None:
        diff = res.get("diff")
        if not diff:
            return
        for item in diff if isinstance(diff, list) else [diff]:
            text = item.get("prepared") if isinstance(item, dict) else None
            if text is None and isinstance(item, dict) and ("before" in item or "after" in item):
                text = unified_diff(item)
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

    def then(self, later: PlaybookTracker) -> PlaybookTracker:
        """This run followed by ``later`` (a deploy's apply pass after its read pass): each host the
        later run played is as it says, the others as this one says; what either read is kept."""
        out = PlaybookTracker(on_line=self.on_line, verbose=self.verbose)
        out.hosts = {**self.hosts, **later.hosts}
        out.diffs = self.diffs + later.diffs
        out.host_facts = {**self.host_facts, **later.host_facts}
        out.switch_facts = {**self.switch_facts, **later.switch_facts}
        out.would_change, out.not_read = self.would_change, self.not_read
        out.tasks_started = self.tasks_started + later.tasks_started
        out.stats_seen = self.stats_seen and later.stats_seen
        out.output = self.output if not self.stats_seen else later.output  # the run that stopped, if one did
        return out

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


# What OpenSSH prints when it refuses a host's key (StrictHostKeyChecking=yes, racfg.ssh.known_hosts)
HOST_KEY_REFUSED = ("Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED")


def _host_key_hint(res: dict[str, Any]) -> str:
    """For a host OpenSSH refused for its key: how to see the key and record one that was checked
    (OpenSSH's own words name neither the key nor the fix)."""
    if not any(words in str(res.get("msg") or "") for words in HOST_KEY_REFUSED):
        return ""
    return (" (its SSH host key is not in the known_hosts files, or changed: `racfg hostkey show INVENTORY` "
            "names its fingerprint, `racfg hostkey accept` records a key you have checked)")


def _message(res: dict[str, Any]) -> str:
    """The reason a task failed, one line. A loop's own msg says only "One or more items failed":
    the failed items' messages are what a person needs."""
    items = [r for r in res.get("results") or [] if isinstance(r, dict) and r.get("failed")]
    if items:
        return "; ".join(_message(item) for item in items)[:300]
    text = res.get("msg") or res.get("stderr") or res.get("stdout") or res.get("reason") or "failed"
    text = str(text).strip().splitlines()[0] if str(text).strip() else "failed"
    return text[:300]


def unified_diff(item: dict[str, Any]) -> str:
    import difflib

    before = str(item.get("before", ""))
    after = str(item.get("after", ""))
    header_before = item.get("before_header", "before")
    header_after = item.get("after_header", "after")
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        str(header_before), str(header_after)))
