"""The module processes a stopped run leaves running, on its hosts and on this controller: found by
the run's marker, awaited for a bounded time, then stopped, before the run lets its site lock go.

Why: ansible-runner stops a cancelled play by killing ansible-playbook, and racfg kills the workers
and ssh clients left on the controller (racfg.playbook.runner); a module already running on a host
goes on (it is ``/bin/sh -c 'python3'`` under sshd there, with no terminal to hang up), and so does
whatever it started (an installer, a package manager). Released then, the lock would let the next
run start beside it. So a stopped deploy waits for them (a change half made by a killed process is
worse than one finished) up to ``WAIT_S`` (``--stop-wait``; a second Ctrl-C stops waiting), then
stops what remains (SIGTERM, then SIGKILL), and says what it waited for and what it stopped.

How they are found: every play racfg runs sets ``RACFG_RUN=<this process's id>`` in its tasks'
environment (the plays' ``environment: "{{ racfg_run_env | default({}) }}"``, filled by
``Playbook``), which each module process has, and every process it starts inherits; no other run
has it. The look (racfg.playbook.marked, the same code here and on a host) matches it in a
process's environment, and in its command line: Ansible starts a module as
``/bin/sh -c 'RACFG_RUN=... python3'``, so the shell carries it before python3 runs.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from racfg.connection import ConnectionOverrides
from racfg.errors import CannotRunError
from racfg.inventory import Cluster
from racfg.playbook.marked import look as look_here

if TYPE_CHECKING:
    from racfg.ssh.host_sessions import HostSession

MARKER = "RACFG_RUN"
# This racfg process's id on the hosts: one command is one run, whatever playbooks it runs.
RUN_ID = uuid.uuid4().hex
WAIT_S = 60.0  # how long a stopped run waits for its module processes by default
TERM_GRACE_S = 5.0  # after SIGTERM, how long before SIGKILL
POLL_S = 0.5
THIS_CONTROLLER = "this controller"

def run_env() -> dict[str, Any]:
    """The extra variable that marks this run's module processes (see the module's docstring)."""
    return {"racfg_run_env": {MARKER: RUN_ID}}


Look = Callable[[str], dict[int, str]]  # "list" | "term" | "kill" -> {pid: command line} found


def parse_look(text: str) -> dict[int, str]:
    found = {}
    for line in text.splitlines():
        pid, _, command = line.partition("\t")
        if pid.isdigit():
            found[int(pid)] = command.strip()
    return found


@dataclass
class Leftovers:
    """What one host (or this controller) had running of the run when it stopped, and what became of it."""

    host: str
    found: dict[int, str] = field(default_factory=dict)  # pid -> command line, at the first look
    ended: list[int] = field(default_factory=list)  # ended by themselves while awaited
    stopped: list[int] = field(default_factory=list)  # ended after SIGTERM
    killed: list[int] = field(default_factory=list)  # needed SIGKILL
    left: list[int] = field(default_factory=list)  # still there after SIGKILL (a process in the kernel)
    waited_s: float = 0.0
    error: str | None = None  # the host could not be looked at

    def _named(self, pids: list[int]) -> str:
        return ", ".join(f"pid {p} ({self.found.get(p) or '?'})" for p in pids)

    def describe(self) -> str:
        if self.error is not None:
            return f"{self.host}: could not look for module processes of this run: {self.error}"
        if not self.found:
            return f"{self.host}: no module process of this run was running"
        parts = []
        if self.ended:
            awaited = f" while awaited ({self.waited_s:.0f} s)" if self.waited_s >= 0.5 else ""
            parts.append(f"ended by itself{awaited}: {self._named(self.ended)}")
        if self.stopped:
            after = f" after {self.waited_s:.0f} s" if self.waited_s >= 0.5 else ""
            parts.append(f"stopped (SIGTERM){after}: {self._named(self.stopped)}")
        if self.killed:
            parts.append(f"killed (SIGKILL): {self._named(self.killed)}")
        if self.left:
            parts.append(f"STILL RUNNING after SIGKILL: {self._named(self.left)}")
        return f"{self.host}: " + "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {"host": self.host, "found": {str(p): c for p, c in self.found.items()}, "ended": self.ended,
                "stopped": self.stopped, "killed": self.killed, "left": self.left,
                "waited_s": round(self.waited_s, 1), "error": self.error}


def settle(host: str, look: Look, wait_s: float, insisted: Callable[[], bool],
           say: Callable[[str], None]) -> Leftovers:
    """Wait up to ``wait_s`` for the run's processes ``look`` finds to end (not past ``insisted``),
    then SIGTERM what remains, then SIGKILL what outlives ``TERM_GRACE_S``."""
    out = Leftovers(host, found=look("list"))
    if not out.found:
        return out
    if wait_s > 0:
        say(f"{host}: waiting up to {wait_s:g} s for {len(out.found)} module process(es) of this run to end "
            f"(Ctrl-C again: stop them now): {out._named(sorted(out.found))}")
    else:
        say(f"{host}: stopping {len(out.found)} module process(es) of this run: {out._named(sorted(out.found))}")
    start = time.monotonic()
    running = dict(out.found)
    while running and time.monotonic() - start < wait_s and not insisted():
        time.sleep(POLL_S)
        running = look("list")
        out.found.update({p: c for p, c in running.items() if p not in out.found})
    out.waited_s = time.monotonic() - start
    termed = look("term") if running else {}
    # A process between two program images (in execve) reads as none for that moment, so the look
    # that sends TERM can miss it: each look of the grace sends TERM to whatever it finds not yet sent one.
    deadline = time.monotonic() + TERM_GRACE_S
    remaining = look("list")
    while remaining and time.monotonic() < deadline:
        if set(remaining) - set(termed):
            termed.update(look("term"))
        time.sleep(POLL_S / 5)
        remaining = look("list")
    out.ended = sorted(set(out.found) - set(termed))  # what was no longer there to stop
    if not termed:
        return out
    killed = look("kill") if remaining else {}
    out.found.update({p: c for p, c in {**termed, **killed}.items() if p not in out.found})
    out.killed = sorted(killed)
    out.stopped = sorted(set(termed) - set(killed))
    if killed:
        deadline = time.monotonic() + TERM_GRACE_S
        while (left := look("list")) and time.monotonic() < deadline:
            time.sleep(POLL_S / 5)
        out.left = sorted(left)
    return out


def _local_look(mode: str) -> dict[int, str]:
    return look_here(RUN_ID, mode)


def _on_host(session: HostSession) -> Look:
    source = Path(__file__).with_name("marked.py").read_text()  # the same look, sent whole

    def look(mode: str) -> dict[int, str]:
        command = "python3 -c " + shlex.join([source, RUN_ID, mode])
        done = session.run(command, timeout=60)
        if done.rc != 0:
            raise CannotRunError(f"{session.name}: the look for this run's processes failed: {done.failure(OSError())}")
        return parse_look(done.stdout)
    return look


def hosts_in_scope(cluster: Cluster, limit: str | None, seen: set[str]) -> list[str]:
    """The hosts a run with ``limit`` may have started modules on: every host a positive part of the
    pattern names (exclusions are ignored: a host too many is looked at for nothing, one too few
    would be missed), every host the run's events named, and every host when a part cannot be read
    here (``@file``)."""
    names = [h.name for h in cluster.hosts]
    if not limit:
        return names
    picked = set(seen) & set(names)
    for part in (t.strip() for t in re.split(r",|:(?![^\[]*\])", limit)):
        token = part.lstrip("&")
        if not token or token.startswith("!"):
            continue
        if token.startswith("@"):
            return names
        for host in cluster.hosts:
            group = token.split("[", 1)[0]
            if (token in ("all", "cluster", host.role) or group in ("all", "cluster", host.role)
                    or fnmatch.fnmatchcase(host.name, token)
                    or (token.startswith("~") and re.match(token[1:], host.name))):
                picked.add(host.name)
    return [n for n in names if n in picked]


def stop_leftovers(cluster: Cluster, overrides: ConnectionOverrides, hosts: list[str], wait_s: float,
                   insisted: Callable[[], bool], say: Callable[[str], None]) -> list[Leftovers]:
    """Await, then stop, this run's module processes on ``hosts`` and on this controller (a switch's
    tasks run here); one entry per place that had any, or could not be looked at."""
    from racfg.ssh.host_sessions import HostSession, SshEndpoint  # paramiko: only for a run that stopped

    by_name = {h.name: h for h in cluster.hosts}

    def one(name: str) -> Leftovers:
        if name == THIS_CONTROLLER:
            return settle(name, _local_look, wait_s, insisted, say)
        session = HostSession(SshEndpoint.of(by_name[name], overrides))
        try:
            session.connect()
            return settle(name, _on_host(session), wait_s, insisted, say)
        except CannotRunError as exc:
            return Leftovers(name, error=exc.message)
        finally:
            session.close()

    places = [THIS_CONTROLLER, *hosts]
    with ThreadPoolExecutor(max_workers=min(32, len(places))) as pool:
        results = list(pool.map(one, places))
    return [r for r in results if r.found or r.error]

