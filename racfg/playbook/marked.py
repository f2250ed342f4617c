"""Which processes of a machine carry a run's marker (``RACFG_RUN=<run id>``), and ending them.

One file, run two ways: imported on the controller (``look``), and sent whole to a host as
``python3 -c <this file> RUN_ID MODE`` (racfg.playbook.module_processes), which prints one line per
process, ``PID<TAB>command line``. So it uses the standard library only, and runs on any Python 3
a host has for Ansible's modules. Why Python and not a shell loop: a look reads every process's
environment, on a GPU server a couple of thousand of them, several times a second while a stopped
run waits; bash's ``read`` costs a CPU-second there, this a few milliseconds.

A process is the run's when its environment holds the marker (a module process, and whatever it
started) or its command line does (Ansible's ``/bin/sh -c 'RACFG_RUN=... python3'`` before python3
runs). The marker is put together here from its two halves and the run id given apart, so this
look's own command line never holds it. Only processes of the looker's own PID namespace count: a
machine's containers are looked at from inside (the lab's hosts are containers on the controller).
"""

import os
import signal
import sys


def look(run_id: str, mode: str = "list") -> dict:
    """{pid: command line} of the run's processes; ``mode`` "term" or "kill" also signals each."""
    mark = b"RACFG_" + b"RUN=" + run_id.encode()
    me = os.getpid()
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        ns = None
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read()
            if mark not in environ and mark not in argv:
                continue
            if ns is not None and os.readlink(f"/proc/{entry}/ns/pid") != ns:
                continue
            if mode in ("term", "kill"):
                os.kill(int(entry), signal.SIGTERM if mode == "term" else signal.SIGKILL)
        except OSError:  # gone meanwhile, or not ours to read
            continue
        text = argv.replace(b"\0", b" ").decode("utf-8", "replace").strip()
        found[int(entry)] = "".join(c if c.isprintable() else "?" for c in text)[:160]
    return found


if __name__ == "__main__":
    for pid, command in sorted(look(sys.argv[1], sys.argv[2]).items()):
        print(f"{pid}\t{command}")
