"""An SSH login that fails gets the person's action its cause needs (racfg.ssh.reach): told apart on
real sockets where this machine can make the cause (a closed port, a listener that never speaks SSH),
on the exceptions paramiko raises where it cannot (a silent network, a refused key)."""

from __future__ import annotations

import socket
import threading

import paramiko
import pytest

from racfg.errors import CannotRunError
from racfg.ssh import host_sessions as hostssh
from racfg.ssh.host_sessions import HostSession, SshEndpoint
from racfg.ssh.reach import reach_fix


def _login(port: int) -> CannotRunError:
    session = HostSession(SshEndpoint("dgx07", "127.0.0.1", "root", port))
    with pytest.raises(CannotRunError) as caught:
        session.connect()
    return caught.value


def test_nothing_listening_says_start_the_ssh_server():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error = _login(port)  # the port is closed again: the connection is refused
    assert error.message.startswith(f"dgx07: cannot reach root@127.0.0.1:{port} over SSH")
    assert error.hint == f"start the SSH server on dgx07: nothing accepts connections at 127.0.0.1:{port}"


def test_a_listener_that_never_speaks_ssh_is_its_ssh_server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(hostssh, "CONNECT_TIMEOUT", 1.0)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        held: list[socket.socket] = []
        acceptor = threading.Thread(target=lambda: held.append(server.accept()[0]), daemon=True)
        acceptor.start()
        try:
            error = _login(port)
        finally:
            acceptor.join(5)
            for conn in held:
                conn.close()
    assert error.hint == (f"check the SSH server on dgx07: 127.0.0.1:{port} accepts connections but does not "
                          "answer as SSH")


@pytest.mark.parametrize(("exc", "fix"), [
    (TimeoutError("timed out"),
     "power sw1 on or restore its management network: 198.18.0.2 does not answer on port 22"),
    (OSError(113, "No route to host"),
     "power sw1 on or restore its management network: 198.18.0.2 does not answer on port 22"),
    (paramiko.AuthenticationException("Authentication failed."), "put right the password: sw1 refused the login"),
    (paramiko.SSHException("Incompatible ssh server (no acceptable ciphers)"),
     "check the SSH server on sw1 at 198.18.0.2:22 (Incompatible ssh server (no acceptable ciphers))"),
])
def test_each_cause_gets_its_own_action(exc: BaseException, fix: str):
    assert reach_fix("sw1", "198.18.0.2", 22, exc, credentials="the password") == fix


def test_a_wrapped_refusal_is_still_a_refusal():
    """paramiko's NoValidConnectionsError holds one socket error per address tried; netmiko raises its
    own exception from the socket's."""
    wrapped = paramiko.ssh_exception.NoValidConnectionsError({("198.18.0.2", 22): ConnectionRefusedError(111, "x")})
    assert reach_fix("sw1", "198.18.0.2", 22, wrapped, credentials="").startswith("start the SSH server on sw1")
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as inner:
            raise RuntimeError("TCP connection to device failed.") from inner
    except RuntimeError as outer:
        assert reach_fix("sw1", "198.18.0.2", 22, outer, credentials="").startswith("start the SSH server on sw1")


def test_a_switch_that_refuses_gets_the_same_action():
    """A switch session (netmiko, its key read first) that cannot log in carries the same person's fix."""
    from racfg.switches.session import SwitchSession, SwitchTarget
    from racfg.switches.switch_errors import SwitchUnreachable

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SwitchUnreachable) as caught:
        SwitchSession(SwitchTarget("sw1", "onyx", "127.0.0.1", port, timeout=2.0)).open()
    assert caught.value.hint == f"start the SSH server on sw1: nothing accepts connections at 127.0.0.1:{port}"
