"""Why a lab host stopped while booting, read from its boot log.

A host that runs out of a kernel or process limit dies with nspawn's confusing last words
("Exiting PID 1 ... Attempted to remove disk file system ..."); the cause is the first failure
systemd reported in the last boot, and its errno text names the limit to raise (see limits.py,
which checks those limits before a host boots).
"""

from __future__ import annotations

import re

# errno texts in a machine's boot log -> the limit that most likely ran out, and how to raise it
_CAUSES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"inotify.*(No space left on device|ENOSPC)|(No space left on device|ENOSPC).*inotify", re.I),
     "root's inotify watches ran out: sysctl -w fs.inotify.max_user_watches=1048576"),
    (re.compile(r"Too many open files|EMFILE", re.I),
     "root's inotify instances (or open files) ran out: sysctl -w fs.inotify.max_user_instances=1024"),
    (re.compile(r"Resource temporarily unavailable|EAGAIN|fork.*failed|Cannot fork", re.I),
     "the PID limit was reached: raise kernel.pid_max or the cgroup's pids.max"),
    (re.compile(r"Cannot allocate memory|ENOMEM|Out of memory", re.I),
     "memory ran out: stop other labs or use fewer hosts"),
]
_FAILURE = re.compile(r"Failed to|failed|\[!!!!!!\]|Freezing|Cannot|error", re.I)
_BOOT_START = re.compile(r"running in system mode|Spawning container|Welcome to", re.I)
_NSPAWN_EPILOGUE = re.compile(r"Exiting PID 1|Attempted to remove disk file system|Container .* (exited|failed)", re.I)


def boot_failure_cause(log_text: str, lines: int = 2) -> tuple[str, str | None]:
    """The lines of a machine's boot log that say why it stopped, and the limit to raise if known.

    The log's last lines are nspawn's epilogue ("Exiting PID 1 ..."), which names no cause; the
    cause is the first failure systemd reported in the last boot.
    """
    text = log_text.splitlines()
    starts = [i for i, line in enumerate(text) if _BOOT_START.search(line)]
    boot = [line.strip() for line in text[starts[-1] if starts else 0:] if line.strip()]
    failures = [line for line in boot if _FAILURE.search(line) and not _NSPAWN_EPILOGUE.search(line)]
    picked: list[str] = []
    for line in failures:
        if line not in picked:
            picked.append(line)
        if len(picked) == lines:
            break
    cause = " | ".join(picked or boot[-3:]) or "no output"
    for pattern, hint in _CAUSES:
        if any(pattern.search(line) for line in boot):
            return cause, hint
    return cause, None
