"""Enter a network namespace from inside a running process, as ``ip netns exec`` does before it execs.

Why: the lab starts every switch CLI of a site from one process that has loaded the CLI (asyncssh and
its crypto, the engine) once and forks a child per switch; the children share those pages instead of
each loading its own copy, which ``ip netns exec python -m racfg_lab.switchcli`` per switch would do.
A forked child cannot be given a namespace by ``ip``, so it switches itself: the network namespace,
then a mount namespace of its own with ``/sys`` mounted again, so that ``/sys/class/net`` lists the
switch's ports (the data plane reads its counters there). Python 3.11 has no ``os.setns``: libc's.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_REC = 0x4000
MS_SLAVE = 1 << 19
MNT_DETACH = 2
NETNS_DIR = "/run/netns"


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def enter(netns: str) -> None:
    """Move this process into ``netns`` (``ip netns add`` made it), with its own view of ``/sys``."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(os.path.join(NETNS_DIR, netns), os.O_RDONLY | os.O_CLOEXEC)
    try:
        _check(libc.setns(fd, CLONE_NEWNET), f"setns {netns}")
    finally:
        os.close(fd)
    _check(libc.unshare(CLONE_NEWNS), "unshare the mount namespace")
    # mounts made here stay here; the host's later mounts still show (slave, as ip netns exec does)
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_SLAVE, None), "make / a slave mount")
    _check(libc.umount2(b"/sys", MNT_DETACH), "detach /sys")
    _check(libc.mount(netns.encode(), b"/sys", b"sysfs", 0, None), "mount the namespace's /sys")
