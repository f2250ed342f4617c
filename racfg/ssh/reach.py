"""What a person does when racfg cannot log in to a host or switch over SSH.

validate turns an unreachable target into one ``unreadable`` problem; its fix must say what repairs it
(issue 52: every printed fix repairs what it names), and no racfg command can start a server or power
a machine on. So the login's failure is told apart by what the socket said, and each cause gets its
own person's action: nothing listening (start the SSH server), something else listening (its SSH
server), nothing answering (power, management network), the key or password refused (credentials).
Host-key refusals carry their own fix (racfg.ssh.hostkeys) and never reach here.
"""

from __future__ import annotations

import errno

_SILENT = (errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN, errno.ETIMEDOUT)


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps: paramiko's NoValidConnectionsError holds one socket error per address
    tried (``errors``); netmiko re-raises the socket's error as its own."""
    found: list[BaseException] = []
    pending: list[BaseException | None] = [exc]
    while pending:
        e = pending.pop()
        if e is None or any(e is f for f in found):
            continue
        found.append(e)
        pending += [e.__cause__, e.__context__, *dict(getattr(e, "errors", None) or {}).values()]
    return found


def reach_fix(name: str, address: str, port: int, exc: BaseException, *, credentials: str) -> str:
    """The person's action for a failed SSH login to ``name`` at ``address``:``port``. ``credentials``:
    what to put right when the login itself is refused (a host's authorized key, a switch's password)."""
    causes = _causes(exc)
    text = " ".join(str(e) for e in causes).lower()
    if any(isinstance(e, ConnectionRefusedError) for e in causes) or "refused" in text:
        return f"start the SSH server on {name}: nothing accepts connections at {address}:{port}"
    # a TCP connection, but no SSH server's greeting on it (paramiko says which as the banner read and the
    # handshake wait race, both on the same timeout)
    if "banner" in text or "no existing session" in text:
        return f"check the SSH server on {name}: {address}:{port} accepts connections but does not answer as SSH"
    if (any(isinstance(e, TimeoutError) or getattr(e, "errno", None) in _SILENT for e in causes)
            or "timed out" in text or "no route" in text):
        return f"power {name} on or restore its management network: {address} does not answer on port {port}"
    if "authentication" in text:
        return f"put right {credentials}: {name} refused the login"
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"check the SSH server on {name} at {address}:{port} ({reason})"
